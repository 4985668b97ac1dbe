"""`python -m preflight_sdk.mocks.serve SPEC.json`: a detached mock host (see `detached`).

Serves the mocks of the spec until SIGTERM/SIGINT, or until the checkout's state file stops
naming the session it serves (the environment was cleaned, or replaced by a new setup).
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.core import decoding

from .detached import DetachedSpec
from .host import MockHost

__all__ = ["main"]

logger = logging.getLogger("preflight_sdk.mocks")


class _SessionStillCurrent:
    """True while the state file names `session_id` (an unreadable file is not ours to judge)."""

    def __init__(self, state_file: str, session_id: str) -> None:
        self.state_file = Path(state_file)
        self.session_id = session_id

    def __call__(self) -> bool:
        try:
            data = msgspec.json.decode(self.state_file.read_bytes())
        except FileNotFoundError:
            return False
        except (OSError, msgspec.DecodeError):
            return True
        # Only the session matters: a run on the kept environment may rewrite its state meanwhile.
        return not isinstance(data, dict) or data.get("sessionId") == self.session_id


async def _serve(spec: DetachedSpec) -> None:
    host = MockHost(
        spec.mocks,
        bind_hosts=spec.bind_hosts,
        still_wanted=_SessionStillCurrent(spec.state_file, spec.session_id),
    )
    await host.start()
    logger.warning("serving %s for session %s", ", ".join(host.names), spec.session_id)
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with anyio.create_task_group() as group:

            async def until_signal() -> None:
                async for signum in signals:
                    logger.warning("signal %s: stopping", signum)
                    group.cancel_scope.cancel()
                    return

            group.start_soon(until_signal)
            # False once the session is over: the host's own watch runs on its server thread,
            # so there is no event of this loop to wait on.
            while host.running():  # noqa: ASYNC110
                await anyio.sleep(0.5)
            group.cancel_scope.cancel()
    await host.stop()


def main(argv: list[str] | None = None) -> int:
    """Serve the spec file named by the only argument; return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    if len(args) != 1:
        sys.stderr.write("usage: python -m preflight_sdk.mocks.serve SPEC.json\n")
        return 2
    spec = decoding.decode(Path(args[0]).read_bytes(), DetachedSpec)
    anyio.run(_serve, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
