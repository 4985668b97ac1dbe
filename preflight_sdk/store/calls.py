"""The operation log's writer: one daemon thread per process, batching rows into the store.

Why a thread: an operation's reply must not wait for a log write, and a short-lived process (the
CLI) must still write its rows: the queue is drained at interpreter exit (`atexit`). The log never
creates `.preflight/`: on a project where nothing was ever set up or run (a first `status`), a
read-only call leaves no trace on disk.

Why it lingers: waking the thread for each row puts a thread switch and a SQLite transaction next
to every reply (on a busy machine about a third of a cheap MCP call). So the thread sleeps
`LINGER` seconds after the first row of a batch, not listening to the queue, and writes all that
came meanwhile in one transaction; `flush` (for a reader in this process) and exit cut it short.
"""

from __future__ import annotations

import atexit
import queue
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from .database import StoreError
from .records import OperationRow
from .runs import RunStore

__all__ = ["LINGER", "flush_calls", "note_call"]

LINGER = 0.25  # seconds a batch waits for more rows; a process killed with SIGKILL loses at most this

# (project root, operation, started (epoch seconds), duration ms, outcome, error code, run id, pid): the row
# is built on the writer thread, off the caller's path.
Call = tuple[str, str, float, int, str, str | None, str | None, int]
_Item = Call | threading.Event | None  # an Event: a flush, set once all rows before it are written

_queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()
_hurry = threading.Event()  # set by a flush or at exit: stop lingering
_stores: dict[str, RunStore] = {}


def note_call(call: Call) -> None:
    """Queue one operation call for the store of the project at `call[0]` (never blocks, never raises)."""
    _ensure_thread()
    _queue.put(call)


def flush_calls(timeout: float = 5.0) -> None:
    """Block until every call noted so far by this process is written (or `timeout` passes)."""
    if _thread is None:
        return
    done = threading.Event()
    _queue.put(done)
    _hurry.set()
    done.wait(timeout)


def _ensure_thread() -> None:
    global _thread
    if _thread is None:
        with _start_lock:
            if _thread is None:
                _thread = threading.Thread(target=_write_forever, name="preflight-oplog", daemon=True)
                _thread.start()
                atexit.register(_drain)


def _write_forever() -> None:
    while True:
        first = _queue.get()
        _hurry.wait(LINGER)  # the rows of the next LINGER seconds join this batch
        _hurry.clear()
        items = [first]
        while True:
            try:
                items.append(_queue.get_nowait())
            except queue.Empty:
                break
        try:
            _write([item for item in items if isinstance(item, tuple)])
        finally:
            for item in items:
                if isinstance(item, threading.Event):
                    item.set()
        if None in items:
            return


def _row(call: Call) -> OperationRow:
    _, name, started, duration, outcome, code, run_id, pid = call
    stamp = datetime.fromtimestamp(started, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return OperationRow(
        operation=name, started_at=stamp, duration_ms=duration, outcome=outcome, error_code=code,
        run_id=run_id, pid=pid,
    )  # fmt: skip


def _write(calls: list[Call]) -> None:
    batch: dict[str, list[OperationRow]] = {}
    for call in calls:
        batch.setdefault(call[0], []).append(_row(call))
    for root, rows in batch.items():
        store = _stores.get(root)
        if store is None:
            store = _stores[root] = RunStore(Path(root), create=False)
        try:
            store.record_operations(rows)
        except (StoreError, OSError, sqlite3.Error):
            pass  # the log is best effort: an operation never fails because its log row did


def _drain() -> None:
    if _thread is not None and _thread.is_alive():
        _queue.put(None)
        _hurry.set()
        _thread.join(timeout=5)
