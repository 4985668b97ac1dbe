"""One changing operation at a time per project checkout, across processes.

A CLI `setup` while the MCP server runs `clean` on the same directory would remove each other's
containers. Changing operations therefore hold an exclusive `flock` on `.preflight/lock` (it
records the holder's pid and operation). A second process waits, reporting whom it waits for, and
gives up with `INVALID_STATE` after a bound. The lock goes away with its process, so a killed
process never leaves the project locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from preflight_sdk.core.errors import StateError

from .state import STATE_DIR

__all__ = ["project_lock"]

_POLL = 0.1


@asynccontextmanager
async def project_lock(
    root: str | os.PathLike[str],
    operation: str,
    *,
    wait: float = 120.0,
    on_wait: Callable[[str], None] | None = None,
) -> AsyncIterator[None]:
    """Hold the checkout's lock for the block (waiting up to `wait` seconds for another process)."""
    path = Path(root) / STATE_DIR / "lock"
    fd = await anyio.to_thread.run_sync(_open, path)
    try:
        waited = 0.0
        told = False
        while not _try_lock(fd):
            if waited >= wait:
                holder = _holder(path)
                raise StateError(
                    f"another preflight process ({holder}) is changing this project",
                    hint="wait for it to finish, or stop it; then call again",
                    details={"holder": holder, "lock": str(path)},
                    retryable=True,
                )
            if not told and on_wait is not None:
                on_wait(f"waiting for another preflight process ({_holder(path)})")
                told = True
            await anyio.sleep(_POLL)
            waited += _POLL
        with contextlib.suppress(
            OSError
        ):  # who holds it is for the waiters to read: a full disk keeps it blank
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}, {operation}".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _open(path: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        from .state import broken_state_dir

        raise broken_state_dir(path, exc) from exc


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(path: Path) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        text = ""
    return text or "pid unknown"
