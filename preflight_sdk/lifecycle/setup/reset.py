"""Reset between runs: a kept environment that served a run goes back to its state after setup.

Planning (`plan_resets`) is pure, like the rest of the plan: once a run has used the environment
(`served_by` in its recorded state, visible to any process), each service whose container is kept
gets a reset step from its `reset:` (see docs/setup-plan.md, "Reset between runs"):

- `recreate` (and `auto` without named volumes): its container is replaced from the same image;
  the jobs that depend on it run again afterwards, in dependency order.
- `snapshot` (and `auto` with named volumes): as `recreate`, and its named volumes are first put
  back as they were when setup created its container (copied aside then, with no container using
  them, so the copy is consistent). With its jobs run again, the service is where setup left it.
- `{exec: command}`: the command runs in the running container (it must exit 0).
- `{jobs: [...]}`: the container stays; those jobs run again.
- `none`: nothing; the run sees what earlier runs left.

The steps that start containers go through the same start as any setup (`start_services`), so
independent resets run at the same time and a job waits for the services it depends on.

The bookkeeping that decides whether a reset is due lives here too, as pure functions over the
session: `served_by` (a run is about to use the environment: the next run resets it),
`after_setup` (a setup or a reset left it as setup does: no reset is due), and `reset_reason`
(why one is due now). `Environment` persists what they return.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, ServiceConfig
from preflight_sdk.config.reset_rules import named_volumes
from preflight_sdk.core.errors import InfrastructureError, single_error
from preflight_sdk.core.results.lifecycle import EnvironmentUse, ResetHow, SetupResult
from preflight_sdk.engine.base import ContainerSpec, Engine

from ..session.state import SessionState
from .facts import Observed
from .labels import LABEL_ROOT, LABEL_SERVICE, LABEL_SESSION

if TYPE_CHECKING:
    from .plan import ServiceStep  # plan imports this module

__all__ = [
    "plan_resets",
    "reset_how",
    "reset_reason",
    "resets_beside_builds",
    "restore_volumes",
    "snapshot_volume",
    "take_snapshot",
]

# A complete snapshot holds this file (a copy cut short, or a volume made by Docker when the
# snapshot was missing, does not): a restore never empties a volume from an empty snapshot.
_MARK = ".preflight-snapshot"
_NO_SNAPSHOT = 86
_COPY = {
    False: f"find /to -mindepth 1 -delete && cp -a /from/. /to/ && touch /to/{_MARK}",
    True: f"[ -e /from/{_MARK} ] || exit {_NO_SNAPSHOT}; "
    f"find /to -mindepth 1 -delete && cp -a /from/. /to/ && rm -f /to/{_MARK}",
}


def reset_how(service: ServiceConfig) -> ResetHow | None:
    """How `service` is reset (None: it is not), its `auto` resolved."""
    reset = service.reset
    if service.kind == "job" or reset == "none":
        return None
    if reset == "auto":
        return "snapshot" if named_volumes(service.container.volumes) else "recreate"
    if isinstance(reset, str):
        return reset
    return "exec" if reset.exec is not None else "jobs"


def served_by(session: SessionState, run_id: str, setup: SetupResult) -> tuple[SessionState, SetupResult]:
    """The session once run `run_id` uses the environment `setup` brought up to date, and `setup`
    saying which run set the environment up and how many runs it served before this one.

    Recorded before the suites run (a run that dies halfway has still used it), so the next run,
    from any process, resets what this one may change.
    """
    if setup.environment is None:  # a fresh environment: this run sets it up
        session = msgspec.structs.replace(session, set_up_by=run_id, runs_served=0)
    use = setup.environment or EnvironmentUse(set_up_by=run_id)
    served = msgspec.structs.replace(session, served_by=run_id, runs_served=session.runs_served + 1)
    return served, msgspec.structs.replace(setup, environment=use)


def after_setup(session: SessionState, *, fresh: bool, reset: str | None) -> dict[str, object]:
    """The bookkeeping fields of the session after a setup: all cleared by a fresh one, the run
    served cleared (and the resets counted) by a reset, unchanged otherwise."""
    if fresh:
        return {"set_up_by": None, "runs_served": 0, "served_by": None, "resets": 0}
    if reset is not None:
        return {"served_by": None, "resets": session.resets + 1}
    return {}


def reset_reason(session: SessionState) -> str | None:
    """Why the environment is reset before this run, or None when it is as setup left it."""
    if session.served_by is None:
        return None
    since = "its last reset" if session.resets else "setup"
    return f"served run {session.served_by} since {since}"


def resets_beside_builds(observed: Observed, builds: dict[str, str]) -> frozenset[str]:
    """The `exec` resets a served environment needs that no build changes: they run while the
    images are built (a rebuilt service's container is replaced instead, a reset is moot)."""
    if reset_reason(observed.session) is None or observed.running is None:
        return frozenset()
    built = {observed.build_specs[name].image for name in builds}
    return frozenset(
        s.name
        for s in observed.loaded.services
        if reset_how(s) == "exec" and s.name in observed.running and s.build.image not in built
    )


def plan_resets(
    observed: Observed, steps: list[ServiceStep], *, done: frozenset[str] = frozenset()
) -> list[ServiceStep]:
    """The steps with the resets a served environment needs (unchanged when it served no run);
    those in `done` already ran beside the builds."""
    from .plan import may_overlap  # plan imports this module

    reason = reset_reason(observed.session)
    if reason is None or observed.running is None:
        return steps
    loaded = observed.loaded
    by_name = {step.name: step for step in steps}
    rerun: dict[str, str] = {}  # job -> the service whose reset runs it again
    recreated: set[str] = set()
    for service in loaded.services:
        how = reset_how(service)
        step = by_name[service.name]
        if how is None:
            continue
        if step.action != "reuse":
            # A new container starts anyway; only its named volumes still hold what runs left.
            if how == "snapshot":
                by_name[service.name] = msgspec.structs.replace(step, restore=True)
            continue
        if how in ("recreate", "snapshot"):
            info = observed.running.get(service.name)
            by_name[service.name] = msgspec.structs.replace(
                step,
                action="replace",
                reset=how,
                restore=how == "snapshot",
                reason=reason,
                replaces=info.id if info is not None else None,
                overlap=may_overlap(observed.specs[service.name]),
            )
            recreated.add(service.name)
            continue
        by_name[service.name] = msgspec.structs.replace(
            step, action="reset", reset=how, reason=reason, done=service.name in done
        )
        if how == "jobs":
            assert not isinstance(service.reset, str)
            rerun.update(dict.fromkeys(service.reset.jobs or (), service.name))
    # A job runs again after a service it depends on was recreated (its work is gone with the
    # container and the volumes put back), and after a job it depends on ran again.
    grew = True
    while grew:
        grew = False
        for job in (s for s in loaded.services if s.kind == "job" and s.name not in rerun):
            cause = next((d for d in job.depends_on if d in recreated or d in rerun), None)
            if cause is not None and by_name[job.name].action == "reuse":
                rerun[job.name] = rerun.get(cause, cause)
                grew = True
    for name, cause in rerun.items():
        step = by_name[name]
        if step.action != "reuse":
            continue
        info = observed.running.get(name)
        by_name[name] = msgspec.structs.replace(
            step,
            action="replace",
            reset="jobs",
            reason=f"runs again for {cause}'s reset ({reason})",
            replaces=info.id if info is not None else None,
            overlap=True,
        )
    return [by_name[step.name] for step in steps]


def snapshot_volume(loaded: LoadedConfig, volume: str) -> str:
    """The volume that holds `volume`'s copy taken at setup (one per project and volume)."""
    digest = hashlib.sha256(loaded.label_root.encode()).hexdigest()[:12]
    return f"preflight-snapshot-{digest}-{volume}"


async def take_snapshot(
    engine: Engine, loaded: LoadedConfig, session: SessionState, network: str, service: ServiceConfig
) -> None:
    """Copy `service`'s named volumes aside, before its first container uses them."""
    await _copy_volumes(engine, loaded, session, network, service, restore=False)


async def restore_volumes(
    engine: Engine, loaded: LoadedConfig, session: SessionState, network: str, service: ServiceConfig
) -> None:
    """Put back `service`'s named volumes as the snapshot holds them (its container is gone)."""
    await _copy_volumes(engine, loaded, session, network, service, restore=True)


async def _copy_volumes(
    engine: Engine,
    loaded: LoadedConfig,
    session: SessionState,
    network: str,
    service: ServiceConfig,
    *,
    restore: bool,
) -> None:
    """Copy each named volume of `service` to its snapshot (or back, `restore`), all at once, in
    throwaway containers of the service's own image."""
    # The copy needs these tools in the service's image; without them, another reset must do.
    needs_tools = (
        f"the copy runs `sh`, `find` and `cp` from {service.build.image}: an image without "
        f"them cannot use `reset: snapshot`; use `recreate`, `exec` or `jobs` for {service.name}"
    )

    async def copy(volume: str) -> None:
        snapshot = snapshot_volume(loaded, volume)
        source, target = (snapshot, volume) if restore else (volume, snapshot)
        name = f"{network}-{'restore' if restore else 'snapshot'}-{service.name}-{volume}"[:200]
        spec = ContainerSpec(
            name=name,
            image=service.build.image,
            network=network,
            volumes=[f"{source}:/from:ro", f"{target}:/to"],
            # Found by clean like the session's containers; `:` keeps it apart from any service.
            labels={
                LABEL_ROOT: loaded.label_root,
                LABEL_SESSION: session.session_id,
                LABEL_SERVICE: f"{service.name}:volumes",
            },
            entrypoint="sh",
            command=["-c", _COPY[restore]],
            user="0",
        )
        await engine.remove_containers([name], force=True)
        try:
            container = await engine.run(spec)
        except InfrastructureError as exc:  # e.g. no `sh` in the image
            raise InfrastructureError(
                f"the named volume `{volume}` of `{service.name}` could not be copied: {exc.message}",
                code="RESET_FAILED",
                hint=needs_tools,
                details={"service": service.name, "volume": volume},
            ) from exc
        try:
            code = await engine.wait_exit(container)
        finally:
            await engine.remove_containers([container], force=True)
        if restore and code == _NO_SNAPSHOT:
            raise InfrastructureError(
                f"`{service.name}` cannot be reset: its volume `{volume}` has no snapshot ({snapshot} "
                "was removed, could not be taken with the service's image, or the environment was set up "
                "before it was taken); the volume is untouched",
                code="RESET_FAILED",
                hint="call `run` with fresh=true to set the environment up anew; "
                f"an image without sh, find and cp needs another `reset:` for {service.name} (exec, jobs)",
                details={"service": service.name, "volume": volume, "snapshot": snapshot},
            )
        if code != 0:
            verb = "restored" if restore else "copied aside"
            raise InfrastructureError(
                f"the named volume `{volume}` of `{service.name}` could not be {verb} (exit status {code})",
                code="RESET_FAILED",
                hint=needs_tools,
                details={"service": service.name, "volume": volume, "exitCode": code},
            )

    try:
        async with anyio.create_task_group() as tg:
            for volume in named_volumes(service.container.volumes):
                tg.start_soon(copy, volume)
    except BaseExceptionGroup as group:
        raise single_error(group) from None
