"""Bring the environment up to date: build and start only what is missing or changed.

Like an incremental build. Each image carries the hash of its build inputs and each container
the hash of its resolved spec (see `inputs`). Setup reads the project's state once (`Given`),
observes the engine (`observe`), computes a plan (`plan`: what to build, create, replace and
reuse, and why), carries it out (`execute`) and keeps the outcome: the session, the mocks this
process serves, the inputs of the new containers. A running environment of this checkout is
kept; only services whose hash changed are rebuilt or recreated, then the services that
`dependsOn` them. Mocks whose routes changed reload in place.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import PreflightError, single_error
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import EnvironmentUse, SetupResult
from preflight_sdk.engine.base import Engine

from ..clean import clean
from ..images.build import build_images
from ..images.inputs import ServiceInputs, mock_digest, read_record, write_record
from ..session.context import ProjectContext
from .execute import carry_out
from .facts import Given, Observed, inspect_images, observe
from .plan import plan_builds, plan_pulls, plan_setup
from .reset import resets_beside_builds
from .reset_exec import exec_resets, recreate_next

__all__ = ["bring_up_to_date", "reset_mocks", "serve_run"]


class _Stage(Reporter):
    """A reporter for a stage of a larger operation: its end is a step, not the operation's `done`."""

    def __init__(self, outer: Reporter) -> None:
        super().__init__(None, outer.operation)
        self._outer = outer

    def emit(self, kind: Literal["log", "step", "case", "done"], message: str, **fields: Any) -> None:
        self._outer.emit("step" if kind == "done" else kind, message, **fields)


async def bring_up_to_date(
    ctx: ProjectContext,
    *,
    build: bool,
    fresh: bool,
    timeout: str | None,
    reporter: Reporter,
    stage: bool = False,
    reset: bool = False,
) -> SetupResult:
    """Make the running environment match the project's files, doing only what changed.

    `build`: also build images that do not exist yet (setup alone reports them NOT_BUILT).
    `fresh`: remove the environment first and rebuild every image without Docker's cache.
    `stage`: this is a stage of another operation (run): its end is reported as a step.
    `reset`: a run follows: when an earlier run used the environment, bring each service back to
    its state after setup as its `reset:` says (see `reset`).
    """
    if stage:
        reporter = _Stage(reporter)
    loaded = await ctx.ensure_loaded()
    if fresh:
        reporter.step("fresh: removing the environment and rebuilding from nothing", status="started")
        await clean(ctx, force=True)
        loaded = await ctx.ensure_loaded()
    given = Given(
        loaded=loaded,
        session=ctx.require_session(),
        engine=ctx.engine,
        target=ctx.engine_target(),
        mocks=ctx.mocks,
        stale=ctx.stale,
        engine_fields=ctx.engine_record(),
        detach_mocks=ctx.owns_engine,
    )
    observed = await observe(given)
    builds = plan_builds(observed, build=build, fresh=fresh)
    beside = resets_beside_builds(observed, builds) if reset and builds else frozenset()
    if builds:
        if beside:  # commands in running containers no build touches: run while the images build
            try:
                observed = await _build_beside(
                    given, observed, builds, beside, fresh=fresh, reporter=reporter
                )
            except PreflightError as exc:  # a reset killed at its timeout: recreated by the next run
                await ctx.save(recreate_next(ctx.require_session(), exc))
                raise
        else:
            observed = await _build(given.engine, observed, builds, fresh=fresh, reporter=reporter)
        session = observed.session
        built = {s.name: s.build.image for s in loaded.services if s.name in builds}
        session = await ctx.transition(
            state=session.state if session.state == "running" else "built", images={**session.images, **built}
        )
        observed = msgspec.structs.replace(observed, session=session)
    pulls = plan_pulls(observed)
    if pulls:
        observed = await _pull(given.engine, observed, pulls, reporter=reporter)
    plan = plan_setup(observed, builds, reset=reset, done=beside)
    outcome = await carry_out(plan, observed, given, timeout=timeout, reporter=reporter)
    with anyio.CancelScope(shield=True):
        ctx.mocks = outcome.mocks
        try:
            # A reset killed at its timeout leaves its service for the next run to recreate.
            await ctx.save(recreate_next(outcome.session, outcome.error))
        except OSError:
            if outcome.error is None:
                raise
    if outcome.error is not None:
        raise outcome.error
    ctx.stale = False
    ctx.owns_environment = ctx.owns_environment or plan.fresh
    await anyio.to_thread.run_sync(_remember, loaded, outcome.stamped)
    assert outcome.result is not None
    return outcome.result


async def _build(
    engine: Engine, observed: Observed, builds: dict[str, str], *, fresh: bool, reporter: Reporter
) -> Observed:
    """Build the planned images; return the facts with the images as they now are."""
    loaded = observed.loaded
    for name, why in builds.items():
        reporter.step(f"rebuilding {name}: {why}", scope=name)
    targets = [s for s in loaded.services if s.name in builds]
    inputs = {name: observed.build_inputs[name] for name in builds}
    await build_images(engine, loaded, targets, no_cache=fresh, pull=False, reporter=reporter, inputs=inputs)
    images = dict(observed.images)
    await inspect_images(engine, [observed.build_specs[name].image for name in builds], images)
    return msgspec.structs.replace(observed, images=images)


async def _build_beside(
    given: Given,
    observed: Observed,
    builds: dict[str, str],
    beside: frozenset[str],
    *,
    fresh: bool,
    reporter: Reporter,
) -> Observed:
    """Build the planned images while the `exec` resets of `beside` run; the first error is raised."""
    built: list[Observed] = []

    async def build() -> None:
        built.append(await _build(given.engine, observed, builds, fresh=fresh, reporter=reporter))

    loaded = observed.loaded
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                exec_resets, given.engine, loaded, observed.session, sorted(beside), loaded.redactor
            )
            tg.start_soon(build)
    except BaseExceptionGroup as group:
        raise single_error(group) from None
    return built[0]


async def _pull(engine: Engine, observed: Observed, pulls: dict[str, str], *, reporter: Reporter) -> Observed:
    """Pull the planned images; return the facts with the images as they now are."""
    loaded = observed.loaded
    targets = [s for s in loaded.services if s.name in pulls]
    for service in targets:
        reporter.step(
            f"pulling {service.build.image} for {service.name}: {pulls[service.name]}", scope=service.name
        )
    await build_images(engine, loaded, targets, no_cache=False, pull=True, reporter=reporter)
    images = dict(observed.images)
    await inspect_images(engine, [s.build.image for s in targets], images)
    return msgspec.structs.replace(observed, images=images)


def _remember(loaded: LoadedConfig, stamped: dict[str, ServiceInputs]) -> None:
    """Record the inputs of the containers just created and of the mocks (the builds recorded
    theirs), for the next setup to say what changed."""
    record = read_record(loaded.state_root)
    record.services = {**record.services, **stamped}
    record.mocks = {name: mock_digest(mock) for name, mock in loaded.config.mocks.items()}
    write_record(loaded.state_root, record)


async def reset_mocks(ctx: ProjectContext) -> None:
    """Start the mocks' journals, sequences and counters over, wherever they are served.

    A run on a reused environment then sees its mocks as a fresh setup would.
    """
    host = ctx.mocks
    if host is not None and host.running():
        host.reset()
        return
    session = ctx.session
    if session is None or not session.mocks:
        return
    import httpx  # lazy: httpx pulls in click, which `import preflight_sdk` must not

    async with httpx.AsyncClient(timeout=2.0) as client:
        for mock in session.mocks:
            try:
                await client.post(f"http://127.0.0.1:{mock.port}/_mock/reset")
            except httpx.HTTPError:
                pass  # not served: the run reports the mock's absence itself


async def serve_run(ctx: ProjectContext, run_id: str, setup: SetupResult) -> SetupResult:
    """Record that run `run_id` uses the environment `setup` brought up to date; return `setup`
    saying which run set the environment up and how many runs it served before this one.

    Recorded before the suites run (a run that dies halfway has still used it), so the next run,
    from any process, resets what this one may change (see `reset`).
    """
    session = ctx.require_session()
    if setup.environment is None:  # a fresh environment: this run sets it up
        session = msgspec.structs.replace(session, set_up_by=run_id, runs_served=0)
    use = setup.environment or EnvironmentUse(set_up_by=run_id)
    await ctx.save(msgspec.structs.replace(session, served_by=run_id, runs_served=session.runs_served + 1))
    return msgspec.structs.replace(setup, environment=use)
