"""Builds and setups as durable runs: the result when the work ended within `wait`, else what is pending.

A build or a setup may take minutes while a tool call must return within its host's limit, so
each is a run of its own (kind `build` or `setup`): the caller gets the result when the work ends
within `wait`, else the run id with `pending` (queued or running, the phase, the steps done). An
idempotency key replayed returns that run, as it stands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import msgspec

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.progress import ProgressSink, Reporter
from preflight_sdk.core.results.lifecycle import BuildProgress, BuildResult, SetupResult
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.run_request import RunRequest

from .reading import snapshot_of

if TYPE_CHECKING:
    from .supervisor import RunSupervisor

__all__ = ["Pending", "build_run", "setup_run"]

R = TypeVar("R", BuildResult, SetupResult)


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """A build or setup still going on when its caller's `wait` ran out."""

    run_id: str
    duration: int
    progress: BuildProgress


async def build_run(
    runs: RunSupervisor, request: RunRequest, *, wait: float | None, sink: ProgressSink | None
) -> BuildResult:
    """Build the images `request` asks for (`no_cache`, `service`, `pull`) as a run."""
    from preflight_sdk.lifecycle.images.build import build

    async def body(reporter: Reporter) -> BuildResult:
        return await build(
            runs.ctx, no_cache=request.no_cache, service=request.service, pull=request.pull, reporter=reporter
        )

    outcome = await _run(runs, request, BuildResult, body, wait, sink)
    if isinstance(outcome, BuildResult):
        return outcome
    return BuildResult(
        services=[], total_duration=outcome.duration, run_id=outcome.run_id, pending=outcome.progress
    )


async def setup_run(
    runs: RunSupervisor, request: RunRequest, *, wait: float | None, sink: ProgressSink | None
) -> SetupResult:
    """Bring the environment up to date (nothing missing is built; `request.timeout` per service) as a run."""
    from preflight_sdk.lifecycle.mockhost.recording import RecordRequest, begin_recording
    from preflight_sdk.lifecycle.setup.up import bring_up_to_date

    async def body(reporter: Reporter) -> SetupResult:
        done = await bring_up_to_date(
            runs.ctx, build=False, fresh=False, timeout=request.timeout, reporter=reporter
        )
        if request.record:
            recording = RecordRequest(upstreams=dict(request.record))
            await begin_recording(runs.ctx, recording, owner="setup", reporter=reporter)
        return done

    outcome = await _run(runs, request, SetupResult, body, wait, sink)
    if isinstance(outcome, Pending):
        return SetupResult(
            services=[],
            mocks=[],
            total_duration=outcome.duration,
            run_id=outcome.run_id,
            pending=outcome.progress,
        )
    # What the configuration set aside (compose keys), said with every environment started.
    loaded = runs.ctx.loaded
    return msgspec.structs.replace(outcome, warnings=list(loaded.warnings)) if loaded else outcome


async def _run(
    runs: RunSupervisor,
    request: RunRequest,
    kind: type[R],
    body: Callable[[Reporter], Awaitable[R]],
    wait: float | None,
    sink: ProgressSink | None,
) -> R | Pending:
    """Start `body` as the run `request` asks for; its result once it ended within `wait`, else a pending note."""
    outcome = await runs.run_lifecycle(request, body, wait=wait, sink=sink)
    run: RunResult | None
    if isinstance(outcome, str):  # an idempotency key replayed: the existing run
        run = await runs.get(outcome, wait)
    elif outcome.done.is_set():
        if isinstance(outcome.error, PreflightError):
            raise outcome.error
        if isinstance(outcome.value, kind):
            return msgspec.structs.replace(outcome.value, run_id=outcome.run_id)
        run = outcome.final
    else:
        run = snapshot_of(outcome)
    assert run is not None
    return _finished(run, kind) or _pending(run)


def _finished(run: RunResult, kind: type[R]) -> R | None:
    """The result a finished run recorded (its error raised again), or None while it goes on."""
    if not run.finished:
        return None
    value = run.build if kind is BuildResult else run.setup
    if isinstance(value, kind):
        return msgspec.structs.replace(value, run_id=run.run_id)
    if run.error is not None:
        raise PreflightError(
            run.error.message,
            code=run.error.code,  # type: ignore[arg-type]
            hint=run.error.hint,
            details=run.error.details,
        )
    return None


def _pending(run: RunResult) -> Pending:
    info = run.progress
    return Pending(
        run_id=run.run_id,
        duration=run.duration,
        progress=BuildProgress(
            status="queued" if run.status == "queued" else "running",
            phase=info.phase if info else None,
            done=info.done if info else 0,
            total=info.total if info else 0,
        ),
    )
