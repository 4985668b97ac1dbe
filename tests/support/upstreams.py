"""Start `json_upstream` as a process of its own (a real upstream to record from), stopped by pid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

REPO = Path(__file__).resolve().parents[2]


class Upstream(msgspec.Struct, frozen=True, kw_only=True):
    """A running upstream: its port, pid and base URL."""

    port: int
    pid: int
    url: str


@contextmanager
def upstream(
    *, port: int = 0, tls: tuple[str, str] | None = None, drift: bool = False, host: str = "127.0.0.1"
) -> Iterator[Upstream]:
    """Run the JSON API in its own process until the block ends (SIGTERM, then SIGKILL, by pid)."""
    argv = [sys.executable, "-m", "tests.support.json_upstream", "--port", str(port), "--host", host]
    if tls is not None:
        argv += ["--tls", *tls]
    if drift:
        argv.append("--drift")
    process = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "listening <port>", or EOF if it died
        if not line.startswith("listening "):
            raise RuntimeError(f"the upstream did not start: {line!r}")
        bound = int(line.split()[1])
        scheme = "https" if tls is not None else "http"
        name = "localhost" if tls is not None else host
        yield Upstream(port=bound, pid=process.pid, url=f"{scheme}://{name}:{bound}")
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
