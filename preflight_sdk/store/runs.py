"""`RunStore`: the runs of one project, their cases, artifacts and history (blocking calls).

A run row is written when the run is created, refreshed by its owner's heartbeat (status,
phase, progress, a snapshot of the partial result, and the answer to "was I asked to cancel?"),
and completed in one transaction with its cases and artifacts. A `queued` or `running` row whose
owner died reads as `interrupted` from any process: the owner's pid is checked on this host, and
a heartbeat older than `STALE_AFTER` counts as dead anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from preflight_sdk.core.run_request import RunRequest

from .database import Database, rows_as_dicts
from .records import ArtifactRow, CaseRow, LatestCaseRow, NewRun, OperationRow, RunRow, RunSummaryRow

__all__ = ["LIVE", "STALE_AFTER", "RunStore", "store_path"]

LIVE = ("queued", "running")
STALE_AFTER = 60.0  # seconds without a heartbeat after which a live run's owner counts as gone
_HOST = socket.gethostname()

_SUMMARY_COLUMNS = (
    "run_id, kind, status, started_at, duration_ms, total, passed, failed, skipped, summary, "
    "resumed_from, test_id"
)


def store_path(root: Path) -> Path:
    """Where the store of the project at `root` lives."""
    return root / ".preflight" / "preflight.db"


class RunStore:
    """The runs of the project at `root` (blocking: call from a worker thread)."""

    def __init__(self, root: Path, *, create: bool = True) -> None:
        self.root = root
        self.db = Database(store_path(root), create=create)

    def runs_folder(self, run_id: str) -> Path:
        """The folder holding a run's artifacts."""
        return self.root / ".preflight" / "runs" / run_id

    # -- writing ---------------------------------------------------------------------------------

    def create(self, request: RunRequest, run: NewRun) -> tuple[RunRow, bool]:
        """Insert a `queued` run of `request` owned by this process; return it and True.

        With an idempotency key already used, nothing is inserted: the existing run comes back
        with False (the caller compares its `request_hash`).
        """
        key = request.idempotency_key
        with self.db.write() as conn:
            if key is not None:
                existing = _one(conn, "SELECT * FROM runs WHERE idempotency_key = ?", (key,))
                if existing is not None:
                    return existing, False
            conn.execute(
                "INSERT INTO runs (run_id, kind, status, started_at, suites, config_hash, request_hash, "
                "idempotency_key, resumed_from, test_id, owner_pid, owner_host, heartbeat_at, trace_id, "
                "total_cases) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.run_id, request.kind, run.started_at, json.dumps(list(run.suites)), run.config_hash,
                    run.request_hash, key, request.resumed_from, request.test_id, os.getpid(), _HOST,
                    time.time(), run.trace_id, run.total_cases,
                ),
            )  # fmt: skip
            conn.executemany(
                "INSERT OR IGNORE INTO run_suites (run_id, suite) VALUES (?, ?)",
                [(run.run_id, s) for s in run.suites],
            )
            row = _one(conn, "SELECT * FROM runs WHERE run_id = ?", (run.run_id,))
        assert row is not None
        return row, True

    def heartbeat(
        self,
        run_id: str,
        *,
        status: str,
        phase: str | None,
        done_cases: int,
        total_cases: int,
        snapshot: bytes | None = None,
    ) -> bool:
        """Refresh a live run's progress; return whether a cancel was requested for it."""
        with self.db.write() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, phase = ?, done_cases = ?, total_cases = ?, heartbeat_at = ?, "
                "result = COALESCE(?, result) WHERE run_id = ? AND status IN ('queued', 'running')",
                (status, phase, done_cases, total_cases, time.time(), snapshot, run_id),
            )
            found = conn.execute("SELECT cancel_requested FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return bool(found and found[0])

    def finish(
        self,
        run_id: str,
        *,
        status: str,
        finished_at: str,
        duration_ms: int,
        summary: str,
        totals: tuple[int, int, int, int] = (0, 0, 0, 0),
        result: bytes | None = None,
        error: bytes | None = None,
        cases: Sequence[CaseRow] = (),
        artifacts: Sequence[ArtifactRow] = (),
        git_commit: str | None = None,
        git_dirty: bool | None = None,
        inputs: str | None = None,
    ) -> None:
        """Complete a run with its outcome, cases and artifacts, in one transaction.

        `cases` are the cases that ran (a carried verdict is no outcome of this run); each becomes
        its case's newest run, unless a newer run already recorded it. `inputs` is what the run ran
        on (JSON), compared by the next run to find what an edit can affect.
        """
        total, passed, failed, skipped = totals
        with self.db.write() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, duration_ms = ?, summary = ?, total = ?, "
                "passed = ?, failed = ?, skipped = ?, result = ?, error = ?, git_commit = ?, git_dirty = ?, "
                "heartbeat_at = ?, phase = NULL, done_cases = ?, inputs = COALESCE(?, inputs) WHERE run_id = ?",
                (
                    status, finished_at, duration_ms, summary[:400], total, passed, failed, skipped, result,
                    error, git_commit, None if git_dirty is None else int(git_dirty), time.time(),
                    passed + failed + skipped, inputs, run_id,
                ),
            )  # fmt: skip
            conn.executemany(
                "INSERT OR REPLACE INTO cases (run_id, case_id, suite, name, status, duration_ms, attempts, "
                "passed_on_retry, cause, touches) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, c.case_id, c.suite, c.name, c.status, c.duration_ms, c.attempts,
                     int(c.passed_on_retry), c.cause, None if c.touches is None else json.dumps(c.touches))
                    for c in cases
                ],
            )  # fmt: skip
            conn.executemany(
                "INSERT INTO case_latest (case_id, suite, run_id) VALUES (?, ?, ?) ON CONFLICT (case_id) "
                "DO UPDATE SET suite = excluded.suite, run_id = excluded.run_id "
                "WHERE excluded.run_id > case_latest.run_id",
                [(c.case_id, c.suite, run_id) for c in cases],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO artifacts (run_id, name, size, content_type, sha256) "
                "VALUES (?, ?, ?, ?, ?)",
                [(run_id, a.name, a.size, a.content_type, a.sha256) for a in artifacts],
            )

    def request_cancel(self, run_id: str) -> bool:
        """Ask the owner of a live run to stop; return whether the run was live."""
        with self.db.write() as conn:
            cursor = conn.execute(
                "UPDATE runs SET cancel_requested = 1 WHERE run_id = ? AND status IN ('queued', 'running')",
                (run_id,),
            )
            return cursor.rowcount > 0

    def record_operations(self, rows: Sequence[OperationRow]) -> None:
        """Append calls to the operation log."""
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO operations (operation, started_at, duration_ms, outcome, error_code, run_id, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (r.operation, r.started_at, r.duration_ms, r.outcome, r.error_code, r.run_id, r.pid)
                    for r in rows
                ],
            )

    # -- reading ---------------------------------------------------------------------------------

    def get(self, run_id: str) -> RunRow | None:
        """One run, or None; a live run whose owner died comes back (and is stored) `interrupted`."""
        with self.db.read() as conn:
            row = _one(conn, "SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if row is not None and row.status in LIVE and _owner_gone(row):
            self._interrupt([row.run_id])
            with self.db.read() as conn:
                row = _one(conn, "SELECT * FROM runs WHERE run_id = ?", (run_id,))
        return row

    def runs(
        self,
        *,
        status: str | None = None,
        suite: str | None = None,
        kind: str | None = None,
        test_id: str | None = None,
        limit: int = 20,
        before: str | None = None,
    ) -> list[RunSummaryRow]:
        """Runs newest first, filtered; `before` is a run id to page from (exclusive)."""
        where: list[str] = []
        args: list[Any] = []
        table = "runs"
        if suite is not None:
            table = "run_suites JOIN runs USING (run_id)"
            where.append("run_suites.suite = ?")
            args.append(suite)
        for column, value in (("status", status), ("kind", kind), ("test_id", test_id)):
            if value is not None:
                where.append(f"runs.{column} = ?")
                args.append(value)
        if before is not None:
            where.append("runs.run_id < ?")
            args.append(before)
        sql = f"SELECT {_SUMMARY_COLUMNS.replace('run_id,', 'runs.run_id,', 1)}, owner_pid, owner_host, heartbeat_at FROM {table}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY runs.run_id DESC LIMIT ?"
        args.append(limit)
        rows = self.db.select(sql, args)
        gone = [r["run_id"] for r in rows if r["status"] in LIVE and _owner_gone_raw(r)]
        if gone:
            self._interrupt(gone)
            for r in rows:
                if r["run_id"] in gone:
                    r["status"] = "interrupted"
        return [
            RunSummaryRow(
                **{k: v for k, v in r.items() if k not in ("owner_pid", "owner_host", "heartbeat_at")}
            )
            for r in rows
        ]

    def newest_ids(self, limit: int = 5) -> list[str]:
        """The ids of the newest runs (for an error that names an unknown run)."""
        with self.db.read() as conn:
            return [
                r[0] for r in conn.execute("SELECT run_id FROM runs ORDER BY run_id DESC LIMIT ?", (limit,))
            ]

    def cases(self, run_id: str) -> list[CaseRow]:
        """The recorded cases of a run, in run order."""
        rows = self.db.select(
            "SELECT case_id, suite, name, status, duration_ms, attempts, passed_on_retry, cause, touches "
            "FROM cases WHERE run_id = ?",
            (run_id,),
        )
        return [
            CaseRow(
                **{
                    **r,
                    "passed_on_retry": bool(r["passed_on_retry"]),
                    "touches": None if r["touches"] is None else json.loads(r["touches"]),
                }
            )
            for r in rows
        ]

    def artifacts(self, run_id: str) -> list[ArtifactRow]:
        """The files a run wrote."""
        rows = self.db.select(
            "SELECT name, size, content_type, sha256 FROM artifacts WHERE run_id = ? ORDER BY name", (run_id,)
        )
        return [ArtifactRow(**r) for r in rows]

    def case_history(self, case_ids: Sequence[str], *, limit: int = 10) -> dict[str, list[dict[str, Any]]]:
        """The newest `limit` finished outcomes of each case (newest first), with each run's config hash and commit."""
        out: dict[str, list[dict[str, Any]]] = {}
        if not case_ids:
            return out
        with self.db.read() as conn:
            for case_id in case_ids:
                out[case_id] = rows_as_dicts(
                    conn.execute(
                        "SELECT cases.run_id, cases.status, cases.passed_on_retry, runs.config_hash, "
                        "runs.git_commit, runs.git_dirty FROM cases JOIN runs USING (run_id) "
                        "WHERE cases.case_id = ? AND runs.kind = 'test' ORDER BY cases.run_id DESC LIMIT ?",
                        (case_id, limit),
                    )
                )
        return out

    def latest_cases(self, suites: Sequence[str]) -> list[LatestCaseRow]:
        """Each case of `suites` as the newest test run that ran it recorded it, with that run's
        start and inputs (one read: the newest run of each case is kept as runs finish)."""
        if not suites:
            return []
        rows: list[LatestCaseRow] = []
        with self.db.read() as conn:
            for start in range(0, len(suites), 500):
                chunk = list(suites[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found = conn.execute(
                    "SELECT c.case_id, c.suite, c.name, c.status, c.duration_ms, c.attempts, c.passed_on_retry, "
                    "c.cause, c.touches, c.run_id, r.started_at, r.inputs FROM case_latest l "
                    "JOIN cases c ON c.run_id = l.run_id AND c.case_id = l.case_id "
                    f"JOIN runs r ON r.run_id = l.run_id WHERE l.suite IN ({marks}) AND r.kind = 'test'",
                    chunk,
                )
                for row in found:
                    rows.append(
                        LatestCaseRow(
                            case_id=row[0], suite=row[1], name=row[2], status=row[3], duration_ms=row[4],
                            attempts=row[5], passed_on_retry=bool(row[6]), cause=row[7],
                            touches=None if row[8] is None else json.loads(row[8]),
                            run_id=row[9], started_at=row[10], inputs=row[11],
                        )
                    )  # fmt: skip
        return rows

    def last_passed(self, case_ids: Sequence[str]) -> dict[str, str]:
        """The newest run in which each case passed."""
        out: dict[str, str] = {}
        with self.db.read() as conn:
            for case_id in case_ids:
                found = conn.execute(
                    "SELECT run_id FROM cases WHERE case_id = ? AND status = 'passed' ORDER BY run_id DESC LIMIT 1",
                    (case_id,),
                ).fetchone()
                if found:
                    out[case_id] = found[0]
        return out

    def previous_run(self, run_id: str, suites: Sequence[str]) -> tuple[str, str, dict[str, str]] | None:
        """The newest finished test run before `run_id` that selected the same suites.

        Returns its id, its start and each of its cases' status, or None when there is none.
        """
        with self.db.read() as conn:
            found = conn.execute(
                "SELECT run_id, started_at FROM runs WHERE kind = 'test' AND suites = ? AND run_id < ? "
                "AND status IN ('passed', 'failed') AND test_id IS NULL ORDER BY run_id DESC LIMIT 1",
                (json.dumps(list(suites)), run_id),
            ).fetchone()
            if found is None:
                return None
            statuses = dict(
                conn.execute("SELECT case_id, status FROM cases WHERE run_id = ?", (found[0],)).fetchall()
            )
        return found[0], found[1], statuses

    def suite_durations(self, suites: Sequence[str], *, recent: int = 3) -> dict[str, int]:
        """Each suite's expected duration (ms): the mean over its `recent` newest complete runs of its cases' durations.

        Only whole runs of it count (passed or failed test runs, not a resumed run or one saved
        test, which ran a part); a suite with no such run is left out.
        """
        out: dict[str, int] = {}
        with self.db.read() as conn:
            for suite in suites:
                sums = [
                    int(row[0])
                    for row in conn.execute(
                        "SELECT SUM(cases.duration_ms) FROM cases JOIN runs USING (run_id) "
                        "WHERE cases.suite = ? AND runs.kind = 'test' AND runs.status IN ('passed', 'failed') "
                        "AND runs.resumed_from IS NULL AND runs.test_id IS NULL "
                        "GROUP BY cases.run_id ORDER BY cases.run_id DESC LIMIT ?",
                        (suite, recent),
                    )
                ]
                if sums:
                    out[suite] = sum(sums) // len(sums)
        return out

    def operations(self, limit: int = 50) -> list[OperationRow]:
        """The newest operation calls, newest first."""
        rows = self.db.select(
            "SELECT operation, started_at, duration_ms, outcome, error_code, run_id, pid FROM operations "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [OperationRow(**r) for r in rows]

    # -- retention -------------------------------------------------------------------------------

    def prune(self, *, keep: int, max_age_seconds: float | None, keep_ids: Sequence[str] = ()) -> list[str]:
        """Delete finished runs beyond the newest `keep` or older than `max_age_seconds`, with their folders."""
        cutoff = None
        if max_age_seconds is not None:
            cutoff = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - max_age_seconds))
        with self.db.write() as conn:
            doomed = [
                r[0]
                for r in conn.execute(
                    "SELECT run_id FROM runs WHERE status NOT IN ('queued', 'running') AND run_id NOT IN "
                    "(SELECT run_id FROM runs ORDER BY run_id DESC LIMIT ?) "
                    + ("" if cutoff is None else "UNION SELECT run_id FROM runs WHERE status NOT IN "
                       "('queued', 'running') AND started_at < ?"),
                    (keep,) if cutoff is None else (keep, cutoff),
                )
                if r[0] not in keep_ids
            ]  # fmt: skip
            for start in range(0, len(doomed), 500):
                chunk = doomed[start : start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM runs WHERE run_id IN ({marks})", chunk)
            conn.execute(
                "DELETE FROM operations WHERE id NOT IN (SELECT id FROM operations ORDER BY id DESC LIMIT 10000)"
            )
        for run_id in doomed:
            shutil.rmtree(self.runs_folder(run_id), ignore_errors=True)
        return doomed

    def delete(self, run_ids: Sequence[str]) -> None:
        """Delete runs and their folders, whatever their status."""
        with self.db.write() as conn:
            conn.executemany("DELETE FROM runs WHERE run_id = ?", [(r,) for r in run_ids])
        for run_id in run_ids:
            shutil.rmtree(self.runs_folder(run_id), ignore_errors=True)

    def _interrupt(self, run_ids: Sequence[str]) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "UPDATE runs SET status = 'interrupted', phase = NULL, summary = CASE WHEN summary = '' THEN "
                "'interrupted: the process that ran it ended before it finished' ELSE summary END "
                "WHERE run_id = ? AND status IN ('queued', 'running')",
                [(r,) for r in run_ids],
            )


def _one(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> RunRow | None:
    rows = rows_as_dicts(conn.execute(sql, args))
    if not rows:
        return None
    r = rows[0]
    r["suites"] = json.loads(r["suites"] or "[]")
    r["git_dirty"] = None if r["git_dirty"] is None else bool(r["git_dirty"])
    r["cancel_requested"] = bool(r["cancel_requested"])
    return RunRow(**r)


def _owner_gone(row: RunRow) -> bool:
    return _owner_gone_raw(
        {"owner_pid": row.owner_pid, "owner_host": row.owner_host, "heartbeat_at": row.heartbeat_at}
    )


def _owner_gone_raw(row: dict[str, Any]) -> bool:
    beat = row.get("heartbeat_at")
    if beat is not None and time.time() - beat > STALE_AFTER:
        return True
    pid = row.get("owner_pid")
    if row.get("owner_host") != _HOST or not pid:
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """A killed child not yet reaped by its parent still answers kill(0): read its state."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False
