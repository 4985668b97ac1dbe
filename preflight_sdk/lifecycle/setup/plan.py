"""The plan of a setup: per service what to build, create, replace or reuse, and why; the network
and the mocks. A value computed from what is observed (see `observe`) before anything changes.

Planning is pure: the same facts give the same plan, so it is tested without an engine. It goes in
two steps because building changes the facts: `plan_builds` says which images to build; once they
are built, `plan_setup` decides every container from the images as they now are (a rebuild that
gives the very same image id leaves the container in place).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.results.lifecycle import ResetHow, ServiceAction
from preflight_sdk.engine.base import ContainerSpec

from ..images.inputs import (
    LABEL_BUILD_INPUTS,
    LABEL_INPUTS,
    BuildInputs,
    build_reasons,
    mock_digest,
    service_inputs,
    spec_reasons,
)
from .facts import Observed
from .reset import plan_resets

__all__ = [
    "MockStep",
    "MocksPlan",
    "ServiceStep",
    "SetupPlan",
    "StepAction",
    "may_overlap",
    "plan_builds",
    "plan_setup",
]

# What is done with a service's container. `reset`: the container stays and is brought back to
# its state after setup in place (a command run in it, its jobs run again; see `reset`); a reset
# that recreates the container is a `replace` with `reset` set.
StepAction = Literal["create", "replace", "reuse", "reset"]
MockAction = Literal["start", "reload", "reuse"]
# `start`: (re)start the mock server in this process; `keep`: it serves here, changed routes reload
# in place; `elsewhere`: another process serves them; `stop`: no mocks are configured any more.
MockHostAction = Literal["start", "keep", "elsewhere", "stop", "none"]


class _Step(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A part of a plan."""


class ServiceStep(_Step, frozen=True, kw_only=True):
    """What setup does with one service, and why.

    `create`: a new container (none runs, or the old one stopped or failed: `replaces` names it);
    `replace`: a running container gives way to a new one (its inputs or a dependency changed);
    `reuse`: the running container is kept. `build` says why its image is built first.
    `overlap`: the old container may be removed while its successor starts (no fixed host port,
    no named volume). `reset`: this step brings a served environment back to its state after
    setup (how); `restore`: the service's named volumes are restored from the snapshot taken at
    setup before its new container starts. `done`: an in-place reset already carried out while
    images were built (it did not depend on them).
    """

    name: str
    kind: Literal["service", "job"] = "service"
    action: StepAction
    reason: str
    build: str | None = None
    replaces: str | None = None
    overlap: bool = False
    reset: ResetHow | None = None
    restore: bool = False
    done: bool = False

    @property
    def reported(self) -> ServiceAction:
        """The action as a result reports it (`rebuilt`, `recreated`, `started`, `reused`, `reset`)."""
        if self.action == "reuse":
            return "reused"
        if self.reset is not None:
            return "reset"
        if self.build is not None:
            return "rebuilt"
        return "recreated" if self.action == "replace" else "started"


class MockStep(_Step, frozen=True, kw_only=True):
    """What setup does with one mock: start it, reload its routes in place, or reuse it."""

    name: str
    action: MockAction
    reason: str


class MocksPlan(_Step, frozen=True, kw_only=True):
    """The mocks: what their server does (`host`), the ports asked for, each mock's step."""

    host: MockHostAction
    ports: dict[str, int] = msgspec.field(default_factory=dict)
    mocks: list[MockStep] = msgspec.field(default_factory=list)
    warning: str | None = None


class SetupPlan(_Step, frozen=True, kw_only=True):
    """A whole setup: a `fresh` start (new network, every container created) or an update of the
    running environment. `clear` says why what a previous environment left is removed first;
    `remove` holds the containers of services e2e.yaml no longer has."""

    fresh: bool
    network: str
    services: list[ServiceStep]
    mocks: MocksPlan
    clear: str | None = None
    remove: list[str] = msgspec.field(default_factory=list)

    def changed(self) -> list[ServiceStep]:
        """The steps that start a container (`create`, `replace`), in configuration order."""
        return [step for step in self.services if step.action in ("create", "replace")]

    def in_place(self) -> list[ServiceStep]:
        """The resets done in a running container (`reset`), in configuration order."""
        return [step for step in self.services if step.action == "reset"]


def plan_builds(observed: Observed, *, build: bool, fresh: bool) -> dict[str, str]:
    """The services whose image must be built, with why (`app.py changed`, `no image yet`).

    `build`: images that do not exist yet are built too (setup alone leaves them to NOT_BUILT).
    """
    stale: dict[str, str] = {}
    for name, inputs in observed.build_inputs.items():
        image = observed.images.get(observed.build_specs[name].image)
        last = observed.record.builds.get(name)
        if fresh:
            stale[name] = "fresh build"
        elif image is None:
            if build:
                stale[name] = "no image yet"
        elif not _built_from(image.labels.get(LABEL_BUILD_INPUTS), image.id, inputs, last):
            if last is None:
                labelled = LABEL_BUILD_INPUTS in image.labels
                stale[name] = (
                    "build inputs changed" if labelled else "the image was not built from these inputs"
                )
            elif last.digest == inputs.digest:
                stale[name] = "the image was replaced by another build"
            else:
                stale[name] = ", ".join(build_reasons(last, inputs))
    return stale


def plan_pulls(observed: Observed) -> dict[str, str]:
    """The services whose ready-made image is pulled because it is missing (`build.pull: missing`)."""
    return {
        s.name: "not present locally"
        for s in observed.loaded.services
        if s.build.dockerfile is None
        and s.build.pull == "missing"
        and observed.images.get(s.build.image) is None
    }


def _built_from(label: str | None, image_id: str, inputs: BuildInputs, last: BuildInputs | None) -> bool:
    """Whether an image was built from `inputs`: its label says so, or this checkout built that very id."""
    if label is not None:
        return label == inputs.digest
    return last is not None and last.image == image_id and last.digest == inputs.digest


def plan_setup(
    observed: Observed, builds: dict[str, str], *, reset: bool = False, done: frozenset[str] = frozenset()
) -> SetupPlan:
    """Decide every container from `observed` (its images as they are now) and the `builds` done.

    `reset`: a run follows; an environment an earlier run used is reset first (see `reset`);
    `done`: the services whose in-place reset already ran beside the builds.
    """
    loaded, session = observed.loaded, observed.session
    mocks = _plan_mocks(observed)
    if observed.running is None:
        steps = [
            ServiceStep(
                name=s.name,
                kind=s.kind,
                action="create",
                reason=builds.get(s.name, "no container yet"),
                build=builds.get(s.name),
            )
            for s in loaded.services
        ]
        clear = None
        if session.state == "running" or observed.stale:
            clear = "the previous environment is gone or broken"
        return SetupPlan(fresh=True, network=observed.network, services=steps, mocks=mocks, clear=clear)
    steps = [_service_step(observed, s.name, s.kind, builds.get(s.name)) for s in loaded.services]
    steps = _with_dependants(loaded, steps, observed)
    if reset:
        steps = plan_resets(observed, steps, done=done)
    remove = [r.id for r in session.containers if loaded.service(r.service) is None]
    return SetupPlan(fresh=False, network=observed.network, services=steps, mocks=mocks, remove=remove)


def _service_step(
    observed: Observed, name: str, kind: Literal["service", "job"], build: str | None
) -> ServiceStep:
    info = observed.running.get(name) if observed.running is not None else None
    step = ServiceStep(name=name, kind=kind, action="reuse", reason="unchanged", build=build)
    if info is None:
        return msgspec.structs.replace(step, action="create", reason=build or "no container yet")
    spec = observed.specs[name]
    image = observed.images.get(spec.image)
    inputs = service_inputs(spec, image.id if image is not None else "missing")
    replacing = msgspec.structs.replace(step, replaces=info.id, overlap=may_overlap(spec))
    if info.labels.get(LABEL_INPUTS) != inputs.digest:
        reason = build or ", ".join(spec_reasons(observed.record.services.get(name), inputs))
        return msgspec.structs.replace(replacing, action="replace", reason=reason)
    if kind == "service" and not info.running:
        return msgspec.structs.replace(replacing, action="create", reason=f"container {info.status}")
    if name in observed.session.recreate:
        return msgspec.structs.replace(replacing, action="replace", reason="its last reset did not finish")
    if kind == "job" and info.exit_code != 0:
        return msgspec.structs.replace(replacing, action="create", reason="its last run failed")
    return step


def _with_dependants(loaded: LoadedConfig, steps: list[ServiceStep], observed: Observed) -> list[ServiceStep]:
    """Replace every service that depends (transitively) on one that starts again."""
    by_name = {step.name: step for step in steps}
    grew = True
    while grew:
        grew = False
        for service in loaded.services:
            step = by_name[service.name]
            if step.action != "reuse":
                continue
            cause = next(
                (d for d in service.depends_on if d in by_name and by_name[d].action != "reuse"), None
            )
            if cause is None:
                continue
            verb = "re-ran" if by_name[cause].kind == "job" else "was recreated"
            info = observed.running.get(service.name) if observed.running is not None else None
            by_name[service.name] = msgspec.structs.replace(
                step,
                action="replace",
                reason=f"depends on {cause}, which {verb}",
                replaces=info.id if info is not None else None,
                overlap=may_overlap(observed.specs[service.name]),
            )
            grew = True
    return [by_name[step.name] for step in steps]


def may_overlap(spec: ContainerSpec) -> bool:
    """Whether a container's successor may start while it is still being removed.

    Not when it publishes a fixed host port (held until the old one is gone) or mounts a named
    volume (two containers must never share a database's files, even for a moment).
    """
    fixed_port = any(port.host for port in spec.ports)
    named_volume = any(not volume.split(":", 1)[0].startswith(("/", ".", "~")) for volume in spec.volumes)
    return not fixed_port and not named_volume


def _plan_mocks(observed: Observed) -> MocksPlan:
    configs = observed.loaded.config.mocks
    served = observed.mocks_served_here
    if not configs:
        return MocksPlan(host="stop" if served is not None else "none")
    if observed.running is None:
        return MocksPlan(
            host="start", mocks=[MockStep(name=n, action="start", reason="not running") for n in configs]
        )
    recorded = observed.record.mocks
    changed = [name for name, mock in configs.items() if recorded.get(name) != mock_digest(mock)]
    ports = observed.mock_ports
    if served is not None:
        moved = any(mock.port and mock.port != served.get(name) for name, mock in configs.items())
        if set(served) != set(configs) or moved:
            steps = [MockStep(name=n, action="start", reason="the set of mocks changed") for n in configs]
            return MocksPlan(host="start", ports=ports, mocks=steps)
        steps = [
            MockStep(name=n, action="reload", reason="routes changed")
            if n in changed
            else MockStep(name=n, action="reuse", reason="unchanged")
            for n in configs
        ]
        return MocksPlan(host="keep", ports=ports, mocks=steps)
    if observed.mocks_served_elsewhere and changed and observed.mocks_detached:
        # Kept by a detached host since the command that set up exited: this process takes over.
        steps = [MockStep(name=n, action="start", reason="routes changed") for n in configs]
        return MocksPlan(host="start", ports=ports, mocks=steps)
    if observed.mocks_served_elsewhere:
        warning = None
        if changed:
            warning = (
                f"mock routes changed ({', '.join(sorted(changed))}) but another process serves the mocks: "
                "they keep the old routes until that process stops them (clean, then run)"
            )
        steps = [MockStep(name=n, action="reuse", reason="served by another process") for n in configs]
        return MocksPlan(host="elsewhere", ports=ports, mocks=steps, warning=warning)
    steps = [MockStep(name=n, action="start", reason="not served any more") for n in configs]
    return MocksPlan(host="start", ports=ports, mocks=steps)
