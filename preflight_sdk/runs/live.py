"""A run going on in this process: its task's state, progress, and the caller listening to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from preflight_sdk.core.progress import ProgressEvent, ProgressSink
from preflight_sdk.core.results.affected import AffectedSummary
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.suites.events import EventLog
from preflight_sdk.suites.orchestrator import TestRunState

if TYPE_CHECKING:
    from .affected.inputs import RunInputs

__all__ = ["LiveRun", "Relay"]

_STEP_EVENTS = {"started": "STEP_STARTED", "failed": "STEP_FAILED"}


class Relay:
    """A progress sink that forwards to whoever waits on the run, and to nobody once they left.

    It also counts what the events say (phase, done/total) for the run's progress, and records
    each step of a service, a mock or the network in the run's event log (`STEP_STARTED`,
    `STEP_FINISHED`, `STEP_FAILED`, with the service as `name`): the report's timeline places
    builds, container starts and health checks by them.
    """

    def __init__(self, sink: ProgressSink | None, log: EventLog | None = None) -> None:
        self.sink = sink
        self.log = log
        self.phase: str | None = None
        self.done = 0
        self.total = 0

    def __call__(self, event: ProgressEvent) -> None:
        if event.kind == "step":
            self.phase = event.scope or event.message
        if event.done is not None and event.total is not None:
            self.done, self.total = event.done, event.total
        if self.log is not None and event.kind == "step" and event.scope is not None:
            self.log.record(
                _STEP_EVENTS.get(event.status or "started", "STEP_FINISHED"),
                name=event.scope,
                phase=event.operation,
                message=event.message[:200],
            )
        sink = self.sink
        if sink is not None:
            sink(event)

    def detach(self) -> None:
        """Stop forwarding (the caller got its reply; later events have nowhere to go)."""
        self.sink = None


class LiveRun:
    """One run owned by this process, from `queued` to its end."""

    def __init__(
        self, *, request: RunRequest, run_id: str, log: EventLog, relay: Relay, started_at: str
    ) -> None:
        self.request = request
        self.run_id = run_id
        self.kind = request.kind
        self.log = log
        self.relay = relay
        self.started_at = started_at
        self.status = "queued"
        self.done = anyio.Event()
        self.final: RunResult | None = None  # the run as recorded, once it ended
        self.value: Any = None  # what the operation returned (BuildResult, SetupResult, RunResult)
        self.error: BaseException | None = None
        self.state: TestRunState | None = None  # a test run's live state, once it has one
        self.scope: anyio.CancelScope | None = None
        self.cancel_requested = False
        self.interrupted: str | None = None  # why the process that owns it stopped it (its end says so)
        self.inputs: RunInputs | None = None  # what the run runs on (recorded for the next one)
        self.affected: AffectedSummary | None = None  # what an edit could affect, and was carried

    @property
    def resumed_from(self) -> str | None:
        return self.request.resumed_from

    @property
    def idempotency_key(self) -> str | None:
        return self.request.idempotency_key

    def cancel(self) -> None:
        """Stop the run as soon as it can stop (idempotent)."""
        if self.cancel_requested:
            return
        self.cancel_requested = True
        if self.state is not None:
            self.state.cancel()
        if self.scope is not None and (self.state is None or self.state.context is None):
            self.scope.cancel()

    def interrupt(self, reason: str) -> None:
        """Stop the run because its owner is going away: it ends `interrupted`, saying `reason`."""
        if self.interrupted is None and not self.cancel_requested:
            self.interrupted = reason
        self.cancel()

    @property
    def phase(self) -> str | None:
        if self.state is not None and self.state.phase is not None:
            return self.state.phase
        return self.relay.phase

    @property
    def progress(self) -> tuple[int, int]:
        """(done, total): cases for a test run, else what the operation last reported."""
        if self.state is not None and self.state.context is not None:
            ctx = self.state.context
            return ctx.finished_cases, ctx.total_cases
        return self.relay.done, self.relay.total
