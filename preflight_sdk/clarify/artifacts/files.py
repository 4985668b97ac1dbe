"""Safe writes: atomic files, a per-repository lock, and all-or-nothing commits.

Every file is written to a temporary file in the same directory, flushed, then renamed over the
target, so a reader sees the old file or the new one, never half of one. A clarification writes
its files in a fixed order (the new ADR, then the archived task and the new CURRENT_TASK, then
the projection) inside `commit`, which undoes what it already wrote if a later step fails: the
repository is left exactly as it was. The lock (`.preflight/clarify/lock` at the repository
root, an OS file lock) serialises clarifications across tasks and processes.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import IO, Literal

import anyio
import msgspec

from ..errors import filesystem_error, lock_timeout

__all__ = [
    "STATE_DIR",
    "FileChange",
    "WriteMode",
    "commit",
    "read_text",
    "repo_lock",
    "state_dir",
    "write_atomic",
]

STATE_DIR = ".preflight/clarify"
LOCK_TIMEOUT = 30.0

# How a commit writes a file: `create` fails if it exists, `replace` overwrites.
WriteMode = Literal["create", "replace"]


class FileChange(msgspec.Struct, frozen=True, kw_only=True):
    """One file a commit writes: `create` fails if it exists, `replace` overwrites."""

    path: Path
    text: str
    mode: WriteMode


def state_dir(repo: Path) -> Path:
    """Return (and create) `<repo>/.preflight/clarify`, which ignores itself in git."""
    folder = repo / STATE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        # A `*` inside the folder keeps sessions and the lock out of git without editing the
        # repository's own .gitignore.
        write_atomic(ignore, "*\n")
    return folder


def read_text(path: Path) -> str | None:
    """Return the file's text, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (temporary file in the same directory + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        _replace(tmp, path)
    finally:
        with suppress(FileNotFoundError):
            tmp.unlink()


def _replace(src: Path, dst: Path) -> None:
    # One place for the rename, so a test can make exactly one step of a commit fail.
    os.replace(src, dst)


def _restore(path: Path, previous: str | None) -> None:
    with suppress(OSError):
        if previous is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, previous)


def _commit_sync(changes: Sequence[FileChange]) -> None:
    done: list[tuple[Path, str | None]] = []
    created_dirs: list[Path] = []
    current = changes[0].path if changes else Path()
    try:
        for change in changes:
            current = change.path
            previous = read_text(change.path)
            if change.mode == "create" and previous is not None:
                raise FileExistsError(
                    17, "File exists (an immutable artifact has this name)", str(change.path)
                )
            parent = change.path.parent
            missing = [p for p in (parent, *parent.parents) if not p.exists()]
            write_atomic(change.path, change.text)
            created_dirs.extend(missing)
            done.append((change.path, previous))
    except OSError as exc:
        for path, previous in reversed(done):
            _restore(path, previous)
        for folder in sorted(created_dirs, key=lambda p: len(p.parts), reverse=True):
            with suppress(OSError):
                folder.rmdir()
        raise filesystem_error(current, exc) from exc


async def commit(changes: Sequence[FileChange]) -> None:
    """Write all `changes` in order, or none of them.

    Raises:
        PreflightError: when a write fails; every file written before the failure is restored
            to its previous content (or removed if it did not exist).
    """
    await anyio.to_thread.run_sync(_commit_sync, list(changes))


def _try_lock(handle: IO[bytes]) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(handle: IO[bytes]) -> None:
    if sys.platform == "win32":
        import msvcrt

        with suppress(OSError):
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _open_lock(repo: Path) -> IO[bytes]:
    return open(state_dir(repo) / "lock", "a+b")


@asynccontextmanager
async def repo_lock(repo: Path, *, max_wait: float = LOCK_TIMEOUT) -> AsyncIterator[None]:
    """Hold the repository's clarification lock (waits up to `max_wait` seconds).

    Raises:
        PreflightError: retryable, when another holder keeps the lock longer than `max_wait`.
    """
    handle = await anyio.to_thread.run_sync(_open_lock, repo)
    try:
        deadline = time.monotonic() + max_wait
        delay = 0.005
        while not _try_lock(handle):
            if time.monotonic() >= deadline:
                raise lock_timeout(repo / STATE_DIR / "lock", max_wait)
            # The OS offers no awaitable lock; a short, growing poll keeps the event loop free.
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.1)
        try:
            yield
        finally:
            _unlock(handle)
    finally:
        handle.close()
