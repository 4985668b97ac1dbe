"""One SQLite file shared by every process working on a project (blocking calls).

Why these settings: WAL lets one writer and many readers work at once across processes;
`busy_timeout` makes a writer wait for another instead of failing with "database is locked";
`BEGIN IMMEDIATE` takes the write lock up front, so a transaction never fails half-way on a lock
upgrade; `synchronous=NORMAL` is durable across a crash of the process (only an OS crash can lose
the last commits), at a fraction of FULL's cost. Transactions are kept short so checkpoints run.

A file that is not a SQLite database, is damaged, or is another program's database is moved aside
(`preflight.db.corrupt-<time>`) with a warning and a new store is created: the store keeps history,
never the result a caller is waiting for. Damage found only later, by a query that reaches a bad
page ("database disk image is malformed"), is handled the same way: the file is moved aside and
the call raises `StoreReplaced`, which the caller may retry on the new store. A file system that
refuses the writes (no space left, read-only, an I/O error) says nothing about the file: the store
is left in place and the call raises `StoreUnavailable`, carrying STORE_UNAVAILABLE (retryable,
the cause and the room left: `core/disk.py`). `created` tells that
this process made the store's tables (a new, emptied or replaced file), so the history can be
rebuilt from the run folders.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from preflight_sdk.core.disk import is_no_room, store_unavailable

from .schema import APPLICATION_ID, MIGRATIONS, OUR_TABLES

__all__ = ["Database", "StoreError", "StoreReplaced", "StoreUnavailable"]

logger = logging.getLogger("preflight_sdk.store")

_BUSY_TIMEOUT_MS = 10_000
_LOCK_RETRY_SECONDS = 30.0


class StoreError(Exception):
    """The store could not be used; callers turn it into a warning (never a lost result)."""


class StoreReplaced(StoreError):
    """The store was found damaged while in use, moved aside and replaced by a new one."""


class StoreUnavailable(StoreError):
    """The store's file system refused a write (no space left, read-only): the store is as it was.

    `error` is the STORE_UNAVAILABLE to raise where the store is needed.
    """

    def __init__(self, path: Path, cause: BaseException | str) -> None:
        self.error = store_unavailable(path, cause)
        super().__init__(self.error.message)


class Database:
    """A lazily opened connection to `path`, safe to use from any thread (calls are serialised)."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        self.create = create  # False: use the store only if its folder exists (write nothing new)
        self.warnings: list[str] = []
        self.created = False  # this process made the tables (the file was new, empty or replaced)
        self._inode: int | None = None  # the file the connection is on (another may replace it)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    # -- opening -------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if self.create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.parent.is_dir():
            raise StoreError(f"{self.path.parent} does not exist")
        try:
            conn = self._connect_checked()
        except _Unusable as exc:
            self._move_aside(str(exc))
            conn = self._connect_checked()
        self._conn = conn
        self._inode = _inode(self.path)
        return conn

    def _connect_checked(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            application_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if application_id not in (0, APPLICATION_ID):
                raise _Unusable(f"it belongs to another program (application_id {application_id:#x})")
            if application_id == 0:
                tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                foreign = tables - OUR_TABLES
                if foreign:
                    raise _Unusable(
                        f"it holds tables preflight did not make ({', '.join(sorted(foreign)[:5])})"
                    )
            if version > len(MIGRATIONS):
                conn.close()
                raise StoreError(
                    f"{self.path} was written by a newer preflight (schema {version}, this one knows "
                    f"{len(MIGRATIONS)}): upgrade preflight to read its history"
                )
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._migrate(conn, version)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if isinstance(exc, sqlite3.OperationalError) and _is_lock(exc):
                raise StoreError(f"{self.path} stayed locked: {exc}") from exc
            if is_no_room(exc, self.path):
                raise StoreUnavailable(self.path, exc) from exc
            raise _Unusable(f"it is not a readable SQLite database ({exc})") from exc
        except _Unusable:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection, version: int) -> None:
        if version == 0 and MIGRATIONS:
            self.created = True
        while version < len(MIGRATIONS):
            with _immediate(conn):
                # Another process may have migrated while this one waited for the write lock.
                current = conn.execute("PRAGMA user_version").fetchone()[0]
                if current > version:
                    self.created = self.created and version > 0  # another process made them
                    version = current
                    continue
                for statement in _statements(MIGRATIONS[version]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={version + 1}")
            version += 1

    def _move_aside(self, why: str) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            try:
                source.rename(Path(str(target) + suffix))
            except FileNotFoundError:
                pass  # another process moved it first, or there was no such file
            except OSError as exc:
                raise (
                    StoreUnavailable(self.path, exc)
                    if is_no_room(exc, self.path)
                    else StoreError(f"{self.path} could not be moved aside: {exc}")
                ) from exc
        warning = (
            f"the run store {self.path} could not be used ({why}); it was moved aside to "
            f"{target.name} and a new, empty store was created"
        )
        logger.warning("%s", warning)
        self.warnings.append(warning)

    # -- use -----------------------------------------------------------------------------------

    def open(self) -> None:
        """Open the store now (creating, migrating or replacing it), rather than on first use."""
        with self._lock:
            self._guarded_open()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads (each statement sees a consistent snapshot)."""
        with self._lock, self._damage_checked():
            yield self._guarded_open()

    @contextmanager
    def _damage_checked(self) -> Iterator[None]:
        """Turn damage a statement finds (a bad page) into a replaced store, never a crash."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and is_no_room(exc, self.path):
                raise StoreUnavailable(self.path, exc) from exc
            if not _is_damage(exc):
                raise
            opened, self._inode = self._inode, None
            self.close()
            if opened is not None and opened == _inode(self.path):
                self._move_aside(f"it is damaged: {exc}")  # unless another connection already did
            raise StoreReplaced(f"{self.path} is damaged ({exc}); it was moved aside") from exc

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A short `BEGIN IMMEDIATE` transaction, committed on exit (rolled back on error)."""
        with self._lock, self._damage_checked():
            conn = self._guarded_open()
            deadline = time.monotonic() + _LOCK_RETRY_SECONDS
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:
                    # busy_timeout already waited; a checkpoint or a crashed writer can still
                    # answer "database is locked" once: wait a little and try again.
                    if is_no_room(exc, self.path):
                        raise StoreUnavailable(self.path, exc) from exc
                    if not _is_lock(exc) or time.monotonic() > deadline:
                        raise StoreError(f"could not write to {self.path}: {exc}") from exc
                    time.sleep(0.05)
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")  # a damaged file may refuse even that
                raise
            else:
                conn.execute("COMMIT")

    def _guarded_open(self) -> sqlite3.Connection:
        try:
            return self._open()
        except (sqlite3.Error, OSError) as exc:
            if is_no_room(exc, self.path):
                raise StoreUnavailable(self.path, exc) from exc
            raise StoreError(f"could not open {self.path}: {exc}") from exc
        except _Unusable as exc:  # still unusable once moved aside: another process keeps breaking it
            raise StoreError(f"could not open {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the connection (the next call opens it again)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def select(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run one read query; return its rows as dicts keyed by column name."""
        with self.read() as conn:
            return rows_as_dicts(conn.execute(sql, args))

    def pop_warnings(self) -> list[str]:
        """Return the warnings not yet reported, and forget them."""
        with self._lock:
            out, self.warnings = self.warnings, []
            return out


class _Unusable(Exception):
    """The file is not a store preflight can use: move it aside."""


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether `exc` says the file itself is bad (not a lock, a constraint or a wrong statement)."""
    if isinstance(exc, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError):
        return False
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _is_lock(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def rows_as_dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """Return every row of `cursor` as a dict keyed by column name."""
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
