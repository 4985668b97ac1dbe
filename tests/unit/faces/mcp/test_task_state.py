"""How a run reads as an MCP task: its status, message, times and the reply a completed one holds."""

from __future__ import annotations

import json

import msgspec

from preflight_sdk.core.errors import ErrorInfo
from preflight_sdk.core.results.lifecycle import BuildResult
from preflight_sdk.core.results.run import RunProgress, RunResult, Totals
from preflight_sdk.faces.mcp.tasks.state import INTERRUPTED_CODE, created_at, view_of_run
from preflight_sdk.store.ids import new_run_id

MOMENT_MS = 1_795_000_000_123


def run(status: str, **extra: object) -> RunResult:
    return RunResult(
        run_id=new_run_id(MOMENT_MS),
        status=status,  # type: ignore[arg-type]
        summary=f"{status}: 1 suite(s)",
        totals=Totals(passed=1, failed=0, skipped=0, total=1),
        duration=5,
        suites=[],
        started_at="2026-11-19T00:00:10.000Z",  # a run's startedAt moves when it starts running
        **extra,  # type: ignore[arg-type]
    )


def test_the_creation_time_is_read_from_the_id_so_every_server_says_the_same() -> None:
    assert created_at(new_run_id(MOMENT_MS)) == "2026-11-18T11:06:40.123Z"
    view = view_of_run(run("running", progress=RunProgress(phase="suites", done=3, total=60)))
    assert view.created_at == "2026-11-18T11:06:40.123Z"
    assert view.status == "working" and view.status_message == "running, suites, 3/60 cases: running: 1 suite(s)"
    assert view.result is None and not view.finished


def test_a_failing_verdict_is_completed_with_the_plain_reply() -> None:
    failed = run("failed", finished_at="2026-11-19T06:00:00.000Z")
    view = view_of_run(failed)
    assert view.status == "completed" and view.last_updated_at == "2026-11-19T06:00:00.000Z"
    assert view.result is not None and view.result.is_error is False
    envelope = view.result.structured_content
    assert envelope is not None and envelope["success"] is True and envelope["data"]["status"] == "failed"
    assert envelope["runId"] == failed.run_id
    assert json.loads(view.result.content[0].text) == envelope  # type: ignore[union-attr]


def test_a_build_task_holds_what_the_build_tool_returns_and_an_error_run_its_error_reply() -> None:
    built = view_of_run(run("passed", kind="build", build=BuildResult(services=[], total_duration=9)))
    assert built.result is not None and built.result.structured_content is not None
    assert built.result.structured_content["data"] == {"services": [], "totalDuration": 9, "runId": built.task_id}
    info = ErrorInfo(code="NOT_BUILT", message="build first", retryable=False, hint="call build")
    broken = view_of_run(run("error", kind="setup", error=info))
    assert broken.status == "completed" and broken.result is not None and broken.result.is_error is True
    assert broken.result.structured_content is not None
    assert broken.result.structured_content["error"]["code"] == "NOT_BUILT"


def test_cancelled_and_interrupted_runs() -> None:
    assert view_of_run(run("cancelled")).status == "cancelled"
    died = view_of_run(run("interrupted"))
    assert died.status == "failed" and died.result is None and died.error is not None
    assert died.error["code"] == INTERRUPTED_CODE
    assert died.error["data"] == {"runId": died.task_id, "status": "interrupted"}
    assert f"resume_run {died.task_id}" in (died.status_message or "")
    assert msgspec.json.encode(died.error)  # plain JSON, for the wire
