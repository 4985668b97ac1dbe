"""The project's embedded store: runs, their cases and artifacts, the operation log, saved tests and saved suites.

Owns `<project>/.preflight/preflight.db` (stdlib `sqlite3`, WAL, busy timeout, short
`BEGIN IMMEDIATE` writes, migrations by `PRAGMA user_version`). Nothing outside this package
writes SQL. Every call here blocks: callers run them off the event loop (`anyio.to_thread`).

May import: the core (`errors`, `results`, `durations`). Nothing above it.
"""

from __future__ import annotations

from .database import Database, StoreError, StoreReplaced, StoreUnavailable
from .ids import is_run_id, new_run_id
from .records import ArtifactRow, CaseRow, LatestCaseRow, NewRun, OperationRow, RunRow, RunSummaryRow
from .runs import RunStore, store_path
from .saved import SavedStore, SavedSuiteRow, SavedTestRow, TestLineRow

__all__ = [
    "ArtifactRow",
    "CaseRow",
    "Database",
    "LatestCaseRow",
    "NewRun",
    "OperationRow",
    "RunRow",
    "RunStore",
    "RunSummaryRow",
    "SavedStore",
    "SavedSuiteRow",
    "SavedTestRow",
    "StoreError",
    "StoreReplaced",
    "StoreUnavailable",
    "TestLineRow",
    "is_run_id",
    "new_run_id",
    "store_path",
]
