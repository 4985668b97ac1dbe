"""The environment's side of a test run (`runs.preparation.RunPreparation`), on the project's own environment.

Before the suites: what suites of an earlier, killed process left running is stopped, the
environment is brought up to date (and reset when an earlier run used it), the mocks start
afresh, and the run is recorded as using the environment. After them: the environment is removed
unless the request keeps it.
"""

from __future__ import annotations

from functools import partial

import anyio

from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.processes.groups import stop_groups

from ..clean import clean
from ..mockhost.recording import RecordRequest, begin_recording
from ..session.context import ProjectContext
from .up import bring_up_to_date, reset_mocks, serve_run

__all__ = ["RunServing"]


def _recording(request: RunRequest) -> RecordRequest | None:
    return RecordRequest(upstreams=dict(request.record)) if request.record else None


class RunServing:
    """Prepares the project's environment for each test run and concludes it afterwards."""

    def __init__(self, ctx: ProjectContext) -> None:
        self._ctx = ctx

    async def prepare(self, request: RunRequest, run_id: str, reporter: Reporter) -> SetupResult | None:
        """Make the environment ready for `run_id` as `request.prepare` says; return what that did."""
        ctx = self._ctx
        if request.prepare == "none":
            return None
        if request.prepare == "if_running":
            await ctx.ensure_loaded()
            if ctx.session is None or ctx.session.state != "running":
                return None  # nothing starts: the run says what it lacks
        else:
            # -- inner loop: up to date, then run, then keep or clean ----------------------------
            # What suites of an earlier, killed process left running stops first.
            await anyio.to_thread.run_sync(partial(stop_groups, ctx.state_root, orphans_only=True))
        done = await bring_up_to_date(
            ctx,
            build=request.prepare == "up_to_date",
            fresh=request.fresh,
            timeout=None,
            reporter=reporter,
            stage=True,
            reset=True,
        )
        await reset_mocks(ctx)
        if request.prepare == "up_to_date":  # a recording `setup` left going ends; the run's begins
            await begin_recording(ctx, _recording(request), owner=run_id, reporter=reporter)
        return await serve_run(ctx, run_id, done)

    async def conclude(self, request: RunRequest) -> None:
        """Remove the environment after the run unless the request keeps it."""
        if not request.keep:
            await clean(self._ctx, force=True)
