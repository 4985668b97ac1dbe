"""A run as a RunResult: from a live run of this process, or from its row in the store; a store
row as the line a listing answers."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.results.run import RunProgress, RunResult, Totals

if TYPE_CHECKING:
    from preflight_sdk.store import RunRow, RunSummaryRow

    from .live import LiveRun

__all__ = ["line_of_row", "result_of_row", "snapshot_of", "totals_of_row"]

_Line = TypeVar("_Line", bound=msgspec.Struct)


def line_of_row(row: msgspec.Struct, line: type[_Line], **rest: Any) -> _Line:
    """The store row as a `line` of a listing: each field of `line` that the row holds under the
    same name, with the same value; `rest` gives the fields the row names otherwise (its
    `duration_ms` is a line's `duration`) or does not hold.

    Only for a line whose every shared name means what the row's does: a RunRow's `error` and
    `suites` are not a RunResult's (result_of_row builds that one field by field).
    """
    same = {name: getattr(row, name) for name in _shared_names(type(row), line) if name not in rest}
    return line(**same, **rest)


@functools.cache
def _shared_names(row: type[msgspec.Struct], line: type[msgspec.Struct]) -> tuple[str, ...]:
    # Asked once per pair of types: `msgspec.structs.fields` resolves their annotations each call,
    # which cost a listing of 500 runs milliseconds.
    held = set(row.__struct_fields__)
    return tuple(name for name in line.__struct_fields__ if name in held)


def totals_of_row(row: RunSummaryRow) -> Totals:
    """The case counts a run's row keeps in four columns."""
    return Totals(passed=row.passed, failed=row.failed, skipped=row.skipped, total=row.total)


def snapshot_of(live: LiveRun) -> RunResult:
    """The live run as it stands: finished suites and cases so far, status and progress."""
    from preflight_sdk.suites.orchestrator import partial_result

    done, total = live.progress
    progress = RunProgress(phase=live.phase, done=done, total=total)
    status = live.status if live.status in ("queued", "running") else "running"
    if live.state is not None and live.state.context is not None:
        partial = partial_result(live.state, status="running")
        return msgspec.structs.replace(
            partial,
            status=status,
            kind="test",
            progress=progress,
            summary=f"{status}: {done} of {total} case(s) finished",
            resumed_from=live.resumed_from,
            idempotency_key=live.idempotency_key,
        )
    return RunResult(
        run_id=live.run_id,
        kind=live.kind,
        status=status,  # type: ignore[arg-type]
        summary=f"{live.kind} {status}" + (f": {live.phase}" if live.phase else ""),
        totals=Totals(passed=0, failed=0, skipped=0, total=0),
        duration=0,
        suites=[],
        started_at=live.started_at,
        progress=progress,
        selected_suites=[s.id for s in live.state.suites] if live.state else [],
        trace_id=live.log.trace_id,
        resumed_from=live.resumed_from,
        idempotency_key=live.idempotency_key,
    )


def result_of_row(row: RunRow) -> RunResult:
    """The stored run: its recorded result (or last snapshot), with the row's status and progress."""
    live = row.status in ("queued", "running")
    if row.result:
        try:
            result = decoding.decode(row.result, RunResult)
        except msgspec.DecodeError:
            result = None
        if result is not None:
            changes: dict[str, object] = {"status": row.status}
            if live:
                changes["progress"] = RunProgress(phase=row.phase, done=row.done_cases, total=row.total_cases)
            elif row.status == "interrupted" and result.status != "interrupted":
                changes["summary"] = row.summary or "interrupted: its process ended before it finished"
                changes["progress"] = None
            return msgspec.structs.replace(result, **changes)
    return RunResult(
        run_id=row.run_id,
        kind=row.kind,  # type: ignore[arg-type]
        status=row.status,  # type: ignore[arg-type]
        summary=row.summary or f"{row.kind} {row.status}",
        totals=totals_of_row(row),
        duration=row.duration_ms,
        suites=[],
        started_at=row.started_at,
        finished_at=row.finished_at,
        progress=RunProgress(phase=row.phase, done=row.done_cases, total=row.total_cases) if live else None,
        selected_suites=row.suites,
        resumed_from=row.resumed_from,
        config_hash=row.config_hash,
        idempotency_key=row.idempotency_key,
        trace_id=row.trace_id,
    )
