"""A write to the project's files that failed for want of room: no space left, or a read-only file system.

Neither says anything about the files themselves: a store that cannot be written is left exactly
where it is (never moved aside as if damaged), and the call fails with STORE_UNAVAILABLE,
retryable, naming the cause and the room left, so that whoever frees space (or remounts the file
system read-write) can simply call again.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from .errors import InfrastructureError

__all__ = ["NO_ROOM_ERRNOS", "is_no_room", "store_unavailable"]

NO_ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT})
# SQLite says SQLITE_FULL in words of its own; its other refusals (SQLITE_READONLY, SQLITE_IOERR,
# SQLITE_CANTOPEN) have other causes too (a folder where the file belongs), so they count only
# when the file system is read-only or all but full.
_SQLITE_FULL = "database or disk is full"
_SQLITE_MAYBE = ("readonly database", "disk i/o error", "unable to open database file")
_ALL_BUT_FULL = 1 << 20  # bytes: less than a store's next few pages and its write-ahead log


def is_no_room(exc: BaseException, where: str | os.PathLike[str] | None = None) -> bool:
    """Whether `exc` (an OSError, or SQLite's error about the file at `where`) says the file system
    refused a write for want of room (no space left, read-only)."""
    if isinstance(exc, OSError) and exc.errno in NO_ROOM_ERRNOS:
        return True
    text = str(exc).lower()
    if _SQLITE_FULL in text:
        return True
    if where is None or not any(words in text for words in _SQLITE_MAYBE):
        return False
    read_only, free = _room(_existing(Path(where)))
    return read_only or (free is not None and free < _ALL_BUT_FULL)


def _room(where: Path) -> tuple[bool, int | None]:
    """(whether the file system of `where` is read-only, its free bytes), as far as they can be read."""
    try:
        return bool(os.statvfs(where).f_flag & os.ST_RDONLY), shutil.disk_usage(where).free
    except OSError:
        return False, None


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def store_unavailable(path: str | os.PathLike[str], cause: BaseException | str) -> InfrastructureError:
    """STORE_UNAVAILABLE for `path`, saying why: the file system is read-only, or how little room is left."""
    where = _existing(Path(path))
    said = cause if isinstance(cause, str) else (getattr(cause, "strerror", None) or str(cause))
    read_only, free = _room(where)
    if read_only:
        why = "the file system is read-only"
    elif free is not None:
        why = f"no space left on the device ({free:,} bytes free on that file system)"
    else:
        why = said
    return InfrastructureError(
        f"{path} cannot be written: {why} ({said})",
        code="STORE_UNAVAILABLE",
        hint=(
            "remount that file system read-write, then call again"
            if read_only
            else "free space on that file system, then call again"
        )
        + ": nothing was moved aside or lost",
        details={"path": str(path), "readOnly": read_only, "freeBytes": free},
        retryable=True,
    )
