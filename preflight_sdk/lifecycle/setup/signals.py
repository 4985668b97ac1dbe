"""Make SIGTERM behave like Ctrl-C while an environment is being started.

By default SIGTERM ends a Python process on the spot, so a `kill` during setup would leave
containers behind. While setup runs in a plain script's main thread, SIGTERM is turned into
KeyboardInterrupt, which cancels the work and lets setup remove what it started. An existing
handler (Jupyter's kernel, the MCP server, the CLI) is never replaced.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["terminate_as_interrupt"]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt (when the default handler was in place)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
