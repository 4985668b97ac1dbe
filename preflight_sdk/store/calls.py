"""The operation log's writer: one daemon thread per process, batching rows into the store.

Why a thread: an operation's reply must not wait for a log write, and a short-lived process (the
CLI) must still write its rows: the queue is drained at interpreter exit (`atexit`). The log never
creates `.preflight/`: on a project where nothing was ever set up or run (a first `status`), a
read-only call leaves no trace on disk.
"""

from __future__ import annotations

import atexit
import queue
import threading
from pathlib import Path

from .database import StoreError
from .records import OperationRow
from .runs import RunStore

__all__ = ["note_call"]

_queue: queue.Queue[tuple[Path, OperationRow] | None] = queue.Queue()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()
_stores: dict[Path, RunStore] = {}


def note_call(root: Path, row: OperationRow) -> None:
    """Queue one operation call of the project at `root` for the store (never blocks, never raises)."""
    global _thread
    if _thread is None:
        with _start_lock:
            if _thread is None:
                _thread = threading.Thread(target=_write_forever, name="preflight-oplog", daemon=True)
                _thread.start()
                atexit.register(_drain)
    _queue.put((root, row))


def _write_forever() -> None:
    while True:
        item = _queue.get()
        if item is None:
            return
        batch: dict[Path, list[OperationRow]] = {item[0]: [item[1]]}
        while True:
            try:
                more = _queue.get_nowait()
            except queue.Empty:
                break
            if more is None:
                _write(batch)
                return
            batch.setdefault(more[0], []).append(more[1])
        _write(batch)


def _write(batch: dict[Path, list[OperationRow]]) -> None:
    for root, rows in batch.items():
        store = _stores.get(root)
        if store is None:
            store = _stores[root] = RunStore(root, create=False)
        try:
            store.record_operations(rows)
        except (StoreError, OSError):
            pass  # the log is best effort: an operation never fails because its log row did


def _drain() -> None:
    if _thread is not None and _thread.is_alive():
        _queue.put(None)
        _thread.join(timeout=5)
