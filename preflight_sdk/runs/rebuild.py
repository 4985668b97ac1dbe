"""The run history rebuilt from the run folders, when the store is new but the folders are not.

A store that was emptied (a 0-byte `preflight.db`), deleted, or damaged and moved aside starts
without rows while `.preflight/runs/<runId>/report.json` still holds every finished run. Each
report is the run's result as it was recorded, so the run, its cases and its files come back
(a failure's `cause`, kept for `diff_runs`, is computed again from the report). A folder without
a readable report is left alone and named in the warning.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.store import ArtifactRow, NewRun, RunStore

from .history import case_rows

__all__ = ["rebuild_history"]

logger = logging.getLogger("preflight_sdk.runs")


def rebuild_history(store: RunStore) -> list[str]:
    """Record each run folder's report in a store this process just created; return the warnings.

    Blocking: call from a worker thread. Does nothing when the store was not just created.
    """
    if not store.db.created:
        return []
    store.db.created = False  # once per new store: the folders of runs made since are not history to restore
    folder = Path(store.root) / ".preflight" / "runs"
    if not folder.is_dir():
        return []
    restored: list[str] = []
    unreadable: list[str] = []
    for path in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            result = decoding.decode((path / "report.json").read_bytes(), RunResult)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            unreadable.append(path.name)
            continue
        if result.run_id != path.name or not result.finished or store.get(result.run_id) is not None:
            continue
        try:
            _record(store, result)
        except sqlite3.IntegrityError:
            continue  # another process restored it meanwhile
        restored.append(result.run_id)
    if not restored and not unreadable:
        return []
    warning = (
        f"the run store {store.db.path} was new while {len(restored) + len(unreadable)} run folder(s) "
        f"remained: the history was rebuilt from the report.json of {len(restored)} of them"
    )
    if unreadable:
        shown = ", ".join(unreadable[:5]) + ("…" if len(unreadable) > 5 else "")
        warning += f"; {len(unreadable)} without a readable report.json were left out ({shown})"
    logger.warning("%s", warning)
    return [warning]


def _record(store: RunStore, result: RunResult) -> None:
    request = RunRequest(kind=result.kind, resumed_from=result.resumed_from)
    store.create(
        request,
        NewRun(
            run_id=result.run_id,
            started_at=result.started_at,
            suites=tuple(result.selected_suites or [s.id for s in result.suites]),
            config_hash=result.config_hash,
            trace_id=result.trace_id,
            total_cases=result.totals.total,
        ),
    )
    totals = result.totals
    store.finish(
        result.run_id,
        status=result.status,
        finished_at=result.finished_at or result.started_at,
        duration_ms=result.duration,
        summary=result.summary,
        totals=(totals.total, totals.passed, totals.failed, totals.skipped),
        result=msgspec.json.encode(result),
        error=msgspec.json.encode(result.error) if result.error else None,
        cases=case_rows(result),
        artifacts=[
            ArtifactRow(name=a.name, size=a.size, content_type=a.content_type, sha256=a.sha256)
            for a in result.artifacts
        ],
        git_commit=result.git.commit if result.git else None,
        git_dirty=result.git.dirty if result.git else None,
    )
