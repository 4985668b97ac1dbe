"""What a task is, for preflight: a run read from the run store, or a call kept by the server.

A long tool called as an MCP task starts its run and answers at once; the task id is the run id,
so any `preflight-mcp` on the same project answers for it, also after the server that started it
is gone. The run's status maps onto the task statuses:

| run                         | task                                                          |
|-----------------------------|---------------------------------------------------------------|
| queued, running             | working (statusMessage: phase, cases done, summary)           |
| passed, failed              | completed: the reply the plain call returns (a failing verdict is data) |
| error                       | completed: the plain call's error reply (`isError: true`)     |
| cancelled                   | cancelled                                                     |
| interrupted (its owner died)| failed, error -32603 with `data.runId` (resume_run re-runs what it left) |

A tool that records no run (`verify`), or a call that ended before a run began (a bad argument),
is a *call task*: kept by the server that started it and written to the project's
`.preflight/tasks/` (`files`), where a later server reads it.

Nothing here speaks a protocol generation: `wire` writes these views on the wire.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import msgspec
from mcp import types

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.faces.reflection.outcome import envelope_of, error_envelope

from ..bounds import bound_reply
from ..replies import tool_reply

__all__ = [
    "POLL_INTERVAL_MS",
    "RUN_OPERATIONS",
    "TASK_OPERATIONS",
    "TTL_MS",
    "TaskStatus",
    "TaskView",
    "now_text",
    "view_of_run",
]

# The operations that may answer with a task; all but `verify` record a run.
RUN_OPERATIONS = frozenset({"run", "run_suite", "run_test", "resume_run", "build", "setup"})
TASK_OPERATIONS = RUN_OPERATIONS | {"verify"}
# A run's progress is written to the store every half second; a poll every two seconds sees it move.
POLL_INTERVAL_MS = 2_000
# A run (and so its task) is kept until the history prunes it: 30 days unless e2e.yaml says less.
TTL_MS = 30 * 24 * 3600 * 1000
# The JSON-RPC code of a task whose work died with the process that ran it.
INTERRUPTED_CODE = -32603

_ULID_DIGITS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class TaskView(msgspec.Struct, kw_only=True):
    """A task as both generations describe it (their wire forms differ only in names).

    Attributes:
        task_id: the run id (or a call task's own id).
        status: working, completed, failed or cancelled.
        status_message: what it is doing, or how it ended.
        created_at, last_updated_at: ISO 8601 times.
        result: the tool reply, once completed.
        error: the JSON-RPC error `{code, message, data}`, once failed.
    """

    task_id: str
    status: TaskStatus
    status_message: str | None
    created_at: str
    last_updated_at: str
    result: types.CallToolResult | None = None
    error: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        """Whether the task reached a terminal status."""
        return self.status in ("completed", "failed", "cancelled")


def now_text() -> str:
    """Now, as tasks spell times (ISO 8601, UTC, milliseconds)."""
    return _text(datetime.now(UTC))


def created_at(task_id: str) -> str:
    """When the task was created: the time in its id (a ULID's first 48 bits are its milliseconds).

    A run's `startedAt` moves from its creation to the moment it starts running; a task's creation
    time must not move, so it is read from the id, the same in every process.
    """
    millis = 0
    for char in task_id[:10]:
        millis = millis * 32 + _ULID_DIGITS.index(char)
    return _text(datetime.fromtimestamp(millis / 1000, UTC))


def _text(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def view_of_run(run: RunResult) -> TaskView:
    """The task of a run, with the plain call's reply once the run has ended."""
    updated = run.finished_at or now_text()
    created = created_at(run.run_id)
    base: dict[str, Any] = {
        "task_id": run.run_id,
        "created_at": created,
        "last_updated_at": max(updated, created),
    }
    if not run.finished:
        return TaskView(status="working", status_message=_working_message(run), **base)
    if run.status == "cancelled":
        return TaskView(status="cancelled", status_message=run.summary or "cancelled", **base)
    if run.status == "interrupted":
        why = run.summary if (run.summary or "").startswith("interrupted: ") else None
        message = (
            f"{why or 'interrupted: the process that ran it ended before it finished'}; "
            f"preflight_resume_run {run.run_id} re-runs what it left"
        )
        error = {
            "code": INTERRUPTED_CODE,
            "message": message,
            "data": {"runId": run.run_id, "status": "interrupted"},
        }
        return TaskView(status="failed", status_message=message, error=error, **base)
    return TaskView(
        status="completed", status_message=run.summary or run.status, result=run_reply(run), **base
    )


def run_reply(run: RunResult) -> types.CallToolResult:
    """The reply the plain tool call gives for this finished run (what `mcp_server` would send)."""
    if run.status == "error" and run.error is not None:
        error = PreflightError(
            run.error.message,
            code=run.error.code,  # type: ignore[arg-type]
            hint=run.error.hint,
            details=run.error.details,
        )
        return tool_reply(error_envelope(error), is_error=True)
    value: Any = run
    if run.kind == "build" and run.build is not None:
        value = msgspec.structs.replace(run.build, run_id=run.run_id)
    elif run.kind == "setup" and run.setup is not None:
        value = msgspec.structs.replace(run.setup, run_id=run.run_id)
    return tool_reply(envelope_of(bound_reply(value)), is_error=False)


def _working_message(run: RunResult) -> str:
    progress = run.progress
    parts: list[str] = [run.status]
    if progress is not None and progress.phase:
        parts.append(progress.phase)
    if progress is not None and progress.total:
        parts.append(f"{progress.done}/{progress.total} cases")
    text = ", ".join(parts)
    return f"{text}: {run.summary}" if run.summary else text
