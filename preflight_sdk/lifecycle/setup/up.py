"""The steps of bringing the environment up to date: build and start only what is missing or changed.

Like an incremental build. Each image carries the hash of its build inputs and each container
the hash of its resolved spec (see `inputs`). Setup reads the project's state once (`Given`),
observes the engine (`observe`), computes a plan (`plan`: what to build, create, replace and
reuse, and why), carries it out (`execute`) and keeps the outcome: the session, the mocks this
process serves, the inputs of the new containers. A running environment of this checkout is
kept; only services whose hash changed are rebuilt or recreated, then the services that
`dependsOn` them. Mocks whose routes changed reload in place.

`Environment.up` (`lifecycle/environment.py`) runs these steps in order and persists what each
one returns: the images built, then the setup's outcome.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import single_error
from preflight_sdk.core.progress import Reporter
from preflight_sdk.engine.base import Engine

from ..images.build import build_images
from ..images.inputs import ServiceInputs, mock_digest, read_record, write_record
from ..session.state import SessionState
from .execute import carry_out
from .facts import Given, Observed, inspect_images, observe
from .plan import plan_builds, plan_pulls, plan_setup
from .reset import resets_beside_builds
from .reset_exec import exec_resets, recreate_next

__all__ = [
    "Stage",
    "build_planned",
    "carry_out",
    "images_built",
    "observe",
    "plan_builds",
    "plan_pulls",
    "plan_setup",
    "pull_planned",
    "recreate_next",
    "remember_inputs",
    "resets_beside_builds",
]


class Stage(Reporter):
    """A reporter for a stage of a larger operation: its end is a step, not the operation's `done`."""

    def __init__(self, outer: Reporter) -> None:
        super().__init__(None, outer.operation)
        self._outer = outer

    def emit(self, kind: Literal["log", "step", "case", "done"], message: str, **fields: Any) -> None:
        self._outer.emit("step" if kind == "done" else kind, message, **fields)


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


async def build_planned(
    given: Given,
    observed: Observed,
    builds: dict[str, str],
    beside: frozenset[str],
    *,
    fresh: bool,
    reporter: Reporter,
) -> Observed:
    """Build the planned images (while the `exec` resets of `beside` run, if any: the first error
    is raised); return the facts with the images as they now are."""
    if not beside:
        return await _build(given.engine, observed, builds, fresh=fresh, reporter=reporter)
    built: list[Observed] = []

    async def build() -> None:
        built.append(await _build(given.engine, observed, builds, fresh=fresh, reporter=reporter))

    # Commands in running containers no build touches: they run while the images build.
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


def images_built(session: SessionState, loaded: LoadedConfig, builds: dict[str, str]) -> SessionState:
    """The session once the planned images are built (`built`, unless it already runs)."""
    images = {s.name: s.build.image for s in loaded.services if s.name in builds}
    state = session.state if session.state == "running" else "built"
    return msgspec.structs.replace(session, state=state, images={**session.images, **images})


async def pull_planned(
    engine: Engine, observed: Observed, pulls: dict[str, str], *, reporter: Reporter
) -> Observed:
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


def remember_inputs(loaded: LoadedConfig, stamped: dict[str, ServiceInputs]) -> None:
    """Record the inputs of the containers just created and of the mocks (the builds recorded
    theirs), for the next setup to say what changed."""
    record = read_record(loaded.state_root)
    record.services = {**record.services, **stamped}
    record.mocks = {name: mock_digest(mock) for name, mock in loaded.config.mocks.items()}
    write_record(loaded.state_root, record)
