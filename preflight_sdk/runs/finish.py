"""How a run ends: its result completed (history, identity), its files written, its row closed.

A store that fails costs the history, never the result: the caller still gets it, with a warning.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.redaction import DEFAULT
from preflight_sdk.core.results.affected import AffectedSummary
from preflight_sdk.core.results.lifecycle import BuildResult, SetupResult
from preflight_sdk.core.results.run import GitState, ResumeOutcome, RunResult, Totals
from preflight_sdk.lifecycle.mockhost.recording import finish_run_recordings, recording_warnings
from preflight_sdk.suites.artifacts import write_artifacts

from .affected.inputs import encode_inputs
from .history import case_rows, with_history
from .report import previous_run, report_writer
from .resume_values import keep_values
from .retention import prune_after_run

if TYPE_CHECKING:
    from preflight_sdk.store import ArtifactRow

    from .live import LiveRun
    from .supervisor import RunSupervisor

__all__ = ["finish_lifecycle", "finish_test", "unwrap_error"]

_FINAL_EVENT = {"passed": "RUN_COMPLETED", "failed": "RUN_COMPLETED", "cancelled": "RUN_CANCELLED"}


def unwrap_error(exc: BaseException) -> BaseException:
    """The single error inside (nested) exception groups, or `exc` itself."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def finish_test(
    sup: RunSupervisor,
    live: LiveRun,
    reporter: Reporter,
    *,
    config_hash: str,
    git: GitState | None,
) -> RunResult:
    """Complete, write and record a test run; return it as recorded."""
    from preflight_sdk.suites.orchestrator import partial_result

    plan = live.state
    assert plan is not None
    idempotency_key, resumed_from = live.idempotency_key, live.resumed_from
    value = live.value
    error = live.error
    if isinstance(value, RunResult):
        result = value
    elif live.cancel_requested and error is None:
        result = partial_result(plan, status="cancelled")
    else:
        result = partial_result(plan, status="error")
        if isinstance(error, PreflightError):
            result = msgspec.structs.replace(
                result, error=error.to_info(), summary=f"error: {error.message}"[:400]
            )
        elif error is not None:
            result = msgspec.structs.replace(result, summary=f"error: {type(error).__name__}: {error}"[:400])
    if live.interrupted is not None:
        result = msgspec.structs.replace(
            result, status="interrupted", summary=f"interrupted: {live.interrupted}"[:400]
        )
    store = await sup.store()
    recordings = await finish_run_recordings(
        sup.ctx, live.run_id, completed=isinstance(value, RunResult) and value.status in ("passed", "failed")
    )
    result = msgspec.structs.replace(
        result,
        recordings=recordings,
        warnings=[*result.warnings, *recording_warnings(recordings)],
        kind="test",
        setup=plan.setup,
        finished_at=_now(),
        config_hash=config_hash,
        git=git,
        idempotency_key=idempotency_key,
        resumed_from=resumed_from,
        progress=None,
    )
    if live.affected is not None:
        result = msgspec.structs.replace(result, affected=_affected(live))
    commit = git.commit if git is not None and not git.dirty else None
    annotated = await sup.call(with_history, store, result, config_hash, commit)
    result = annotated or result
    await keep_values(sup, store, result.run_id, plan.context)
    if resumed_from is not None:
        result = msgspec.structs.replace(result, resume=_resume_outcome(result, resumed_from))
    live.log.record("RUN_STATE_CHANGED", status=result.status)
    failures = plan.context.full_failures if plan.context is not None else {}
    final_event = _FINAL_EVENT.get(result.status, "RUN_FAILED")
    root = Path(store.root)
    previous = await sup.call(previous_run, store, result.run_id, [s.id for s in plan.suites])
    pages = report_writer(previous, plan.redactor or DEFAULT)
    try:
        result = await anyio.to_thread.run_sync(
            write_artifacts, root, result, live.log, failures, final_event, pages
        )
    except OSError as exc:
        result = msgspec.structs.replace(
            result, warnings=[*result.warnings, f"could not write the run's files: {exc}"]
        )
    warnings = sup.take_warnings()
    await sup.call(
        store.finish,
        result.run_id,
        status=result.status,
        finished_at=result.finished_at or _now(),
        duration_ms=result.duration,
        summary=result.summary,
        totals=(result.totals.total, result.totals.passed, result.totals.failed, result.totals.skipped),
        result=msgspec.json.encode(result),
        error=msgspec.json.encode(result.error) if result.error else None,
        cases=case_rows(result, plan.context.touches.of if plan.context is not None else None),
        artifacts=_artifact_rows(result),
        git_commit=git.commit if git else None,
        git_dirty=git.dirty if git else None,
        inputs=encode_inputs(live.inputs) if live.inputs is not None else None,
    )
    await prune_after_run(sup, store, keep_ids=[result.run_id])
    warnings += sup.take_warnings()
    if warnings:
        result = msgspec.structs.replace(result, warnings=[*result.warnings, *warnings])
    reporter.emit("done", result.summary, status="ok" if result.status == "passed" else "failed")
    return result


async def finish_lifecycle(
    sup: RunSupervisor, live: LiveRun, reporter: Reporter, *, config_hash: str
) -> RunResult:
    """Complete and record a build or setup run; return it as recorded."""
    value: Any = live.value
    error = live.error
    started = datetime.fromisoformat(live.started_at.replace("Z", "+00:00"))
    duration = int((datetime.now(UTC) - started).total_seconds() * 1000)
    info = error.to_info() if isinstance(error, PreflightError) else None
    if value is not None:
        status, summary = "passed", f"{live.kind} passed in {duration} ms"
    elif live.interrupted is not None and error is None:
        status, summary = "interrupted", f"interrupted: {live.interrupted}"
    elif live.cancel_requested and error is None:
        status, summary = "cancelled", f"{live.kind} cancelled"
    elif isinstance(error, PreflightError):
        status, summary = "failed", f"{live.kind} failed: [{error.code}] {error.message}"
    else:
        status, summary = "error", f"{live.kind} error: {type(error).__name__ if error else 'unknown'}"
    result = RunResult(
        run_id=live.run_id,
        kind=live.kind,
        status=status,  # type: ignore[arg-type]
        summary=summary[:400],
        totals=Totals(passed=0, failed=0, skipped=0, total=0),
        duration=duration,
        suites=[],
        started_at=live.started_at,
        finished_at=_now(),
        config_hash=config_hash,
        idempotency_key=live.idempotency_key,
        trace_id=live.log.trace_id,
        error=info,
        build=value if isinstance(value, BuildResult) else None,
        setup=value if isinstance(value, SetupResult) else None,
    )
    live.log.record("RUN_STATE_CHANGED", status=status)
    live.log.record(
        _FINAL_EVENT.get(status, "RUN_FAILED"), status=status, duration=duration, message=summary[:300]
    )
    try:
        await anyio.to_thread.run_sync(live.log.flush)
    except OSError:
        pass
    store = await sup.store()
    await sup.call(
        store.finish,
        live.run_id,
        status=status,
        finished_at=result.finished_at or _now(),
        duration_ms=duration,
        summary=summary,
        result=msgspec.json.encode(result),
        error=msgspec.json.encode(info) if info else None,
    )
    warnings = sup.take_warnings()
    if warnings:
        result = msgspec.structs.replace(result, warnings=warnings)
    reporter.finish(ok=status == "passed", message=summary[:300])
    return result


def _affected(live: LiveRun) -> AffectedSummary | None:
    """What the run knew about the edit, with where a failFast run stopped."""
    summary = live.affected
    context = live.state.context if live.state is not None else None
    if summary is None or context is None or context.stopped_at is None:
        return summary
    return msgspec.structs.replace(summary, stopped_at=context.stopped_at)


def _resume_outcome(result: RunResult, resumed_from: str) -> ResumeOutcome:
    cases = [c for s in result.suites for c in s.cases if c.status != "carried"]
    return ResumeOutcome(
        resumed_from=resumed_from,
        now_passing=[c.id for c in cases if c.status == "passed"],
        still_failing=[c.id for c in cases if c.status != "passed"],
    )


def _artifact_rows(result: RunResult) -> list[ArtifactRow]:
    from preflight_sdk.store import ArtifactRow

    return [
        ArtifactRow(name=a.name, size=a.size, content_type=a.content_type, sha256=a.sha256)
        for a in result.artifacts
    ]
