"""Which refused writes are a file system out of room (STORE_UNAVAILABLE), and which are not."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from preflight_sdk.core.disk import is_no_room, store_unavailable


def test_no_space_and_read_only_are_no_room_and_a_folder_in_the_way_is_not(tmp_path: Path) -> None:
    assert is_no_room(OSError(errno.ENOSPC, "No space left on device"))
    assert is_no_room(OSError(errno.EROFS, "Read-only file system"))
    assert not is_no_room(OSError(errno.EISDIR, "Is a directory"))
    assert is_no_room(sqlite3.OperationalError("database or disk is full"))
    # "unable to open database file" on a roomy, writable disk is something else in the way.
    (tmp_path / "preflight.db").mkdir()
    assert not is_no_room(sqlite3.OperationalError("unable to open database file"), tmp_path / "preflight.db")


def test_the_error_names_the_cause_and_the_free_space(tmp_path: Path) -> None:
    error = store_unavailable(tmp_path / "missing" / "state.json", OSError(errno.ENOSPC, "No space left on device"))
    assert error.code == "STORE_UNAVAILABLE" and error.retryable
    assert "bytes free on that file system" in error.message and "No space left on device" in error.message
    assert error.details is not None and error.details["freeBytes"] > 0 and error.details["readOnly"] is False
