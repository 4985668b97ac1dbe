"""The environment's side of a test run (`runs.preparation.RunPreparation`), on the project's own environment.

Before the suites, as the request's `prepare` says: what suites of an earlier, killed process left
running is stopped, the environment is brought up to date (and reset when an earlier run used
it), the mocks start afresh (and record, when asked), and the run is recorded as using the
environment. After them, whatever happened: the environment is removed unless the request keeps
it. Each step is a verb of the `Environment`, which persists what it changes.
"""

from __future__ import annotations

import anyio

from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.processes.groups import stop_groups

from .environment import Environment

__all__ = ["RunServing"]


class RunServing:
    """Prepares an environment for each test run and concludes it afterwards."""

    def __init__(self, env: Environment) -> None:
        self._env = env

    async def prepare(self, request: RunRequest, run_id: str, reporter: Reporter) -> SetupResult | None:
        """Make the environment ready for run `run_id` as `request.prepare` says; return what that did."""
        env = self._env
        if request.prepare == "none":
            return None
        if request.prepare == "if_running":
            await env.ensure_loaded()
            if env.session is None or env.session.state != "running":
                return None  # nothing starts: the run says what it lacks
        else:
            # -- inner loop: up to date, then run, then keep or clean ----------------------------
            # What suites of an earlier, killed process left running stops first.
            await anyio.to_thread.run_sync(lambda: stop_groups(env.state_root, orphans_only=True))
        done = await env.up(
            build=request.prepare == "up_to_date",
            fresh=request.fresh,
            timeout=None,
            reporter=reporter,
            stage=True,
            reset=True,
        )
        await env.reset_mocks()
        if request.prepare == "up_to_date":  # a recording `setup` left going ends; the run's begins
            await env.begin_recording(request, owner=run_id, reporter=reporter)
        return await env.serve_run(run_id, done)

    async def conclude(self, request: RunRequest) -> None:
        """After a test run, whatever happened: remove the environment unless the request keeps it."""
        if not request.keep:
            await self._env.clean(force=True)
