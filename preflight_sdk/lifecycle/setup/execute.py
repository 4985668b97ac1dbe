"""Carry out a setup plan: network, mocks and containers as the plan says, nothing else.

The outcome is a value: the session as it now stands, the mock server this process runs, the
inputs stamped on each new container, and the result (or the error). On failure or cancellation
a fresh start removes everything it started; an update removes what it started and keeps what
ran unchanged. The caller persists the outcome either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import anyio
import msgspec

from preflight_sdk.config import ServiceConfig
from preflight_sdk.core.addresses import is_loopback
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import PreflightError, single_error
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import (
    EnvironmentUse,
    MockSetup,
    NetworkSetup,
    ServiceSetup,
    SetupResult,
)
from preflight_sdk.engine.base import ContainerSpec

from ..clean import remove_labelled
from ..images.inputs import LABEL_INPUTS, ServiceInputs, service_inputs
from ..mockhost.host import mock_records, serve_mocks
from ..session.state import ContainerRecord, SessionState
from ..status import running_service
from .facts import Given, Observed, inspect_images
from .plan import SetupPlan
from .port_check import check_host_ports, refuse_loopback_ports
from .reset import reset_how, reset_reason, restore_volumes, take_snapshot
from .reset_exec import exec_resets
from .room import create_network, make_room, remove_leftovers, remove_retired
from .signals import terminate_as_interrupt
from .start import Started, start_services

if TYPE_CHECKING:
    from preflight_sdk.mocks import MockHost

__all__ = ["Outcome", "carry_out"]


@dataclass(frozen=True)
class Outcome:
    """What a setup did: the session to persist, the mocks this process serves, the inputs stamped
    on the containers it created, and its result, or the error it ended with."""

    session: SessionState
    mocks: MockHost | None
    stamped: dict[str, ServiceInputs]
    result: SetupResult | None = None
    error: BaseException | None = None


async def carry_out(
    plan: SetupPlan, observed: Observed, given: Given, *, timeout: str | None, reporter: Reporter
) -> Outcome:
    """Make the environment what `plan` says; `observed` holds the images as they are now."""
    loaded, session, engine = observed.loaded, observed.session, given.engine
    override = parse_duration(timeout, field="timeout") if timeout is not None else None
    begun = anyio.current_time()
    since = datetime.now(UTC) - timedelta(seconds=2)
    started = Started()
    stamped: dict[str, ServiceInputs] = {}
    host = given.mocks
    mocks: list[MockSetup] = []
    fresh: list[ServiceSetup] = []

    restoring = {step.name for step in plan.changed() if step.restore}
    running = observed.running or {}
    images = dict(observed.images)

    async def stamp(service: ServiceConfig, spec: ContainerSpec) -> ContainerSpec:
        # Just before the container is created, its dependencies ready, its predecessor gone.
        if service.name in restoring:
            await restore_volumes(engine, loaded, session, plan.network, service)
        elif service.name not in running and reset_how(service) == "snapshot":
            try:  # new to this environment: its volumes as they are before it starts
                await take_snapshot(engine, loaded, session, plan.network, service)
            except PreflightError:
                pass  # an image without sh, find, cp: setup goes on, a reset says it cannot restore
        image = images.get(spec.image)
        inputs = stamped[service.name] = service_inputs(spec, image.id if image is not None else "missing")
        return msgspec.structs.replace(spec, labels={**spec.labels, LABEL_INPUTS: inputs.digest})

    async def serve() -> None:
        nonlocal host, mocks
        host, mocks = await serve_mocks(
            plan.mocks,
            loaded,
            session,
            host,
            binds=observed.mock_binds,
            reporter=reporter,
            detach_at_exit=given.detach_mocks,
        )

    if not plan.fresh:
        for step in [*plan.changed(), *plan.in_place()]:
            how = f" by {step.reset}" if step.reset is not None else ""
            reporter.step(f"{step.name}: {step.reported}{how} ({step.reason})", scope=step.name)
    execs = [step.name for step in plan.in_place() if step.reset == "exec" and not step.done]
    try:
        with terminate_as_interrupt():
            if plan.clear is not None:
                reporter.step(f"{plan.clear}: removing what is left", status="started")
                if host is not None:
                    await host.stop()
                    host = None
                await remove_labelled(engine, loaded.label_root, session, force=True)
            retired: set[str] = set()

            async def room() -> None:
                retired.update(await make_room(engine, plan, observed.running or {}))

            async with anyio.create_task_group() as tg:
                # All independent. A missing image is found by the container's creation itself
                # (NOT_BUILT), without a separate check.
                if plan.fresh and loaded.services:  # mocks and tests only never need Docker
                    # The network first: every container waits for it; nothing waits for the listing.
                    tg.start_soon(
                        create_network, engine, loaded, session.session_id, plan.network, started, reporter
                    )
                    tg.start_soon(remove_leftovers, engine, loaded, plan.network)
                # The images the plan did not need: their ids go into the containers' labels.
                tg.start_soon(
                    inspect_images, engine, {s.build.image for s in loaded.services} - images.keys(), images
                )
                tg.start_soon(serve)
                if not plan.fresh:
                    tg.start_soon(room)
                if execs:  # in containers the plan keeps: independent of the others' room
                    tg.start_soon(exec_resets, engine, loaded, session, execs, loaded.redactor)
            if plan.fresh and loaded.services:
                address, routable = await engine.reach()
                if routable or is_loopback(address):  # the engine runs on this machine
                    await check_host_ports(loaded)
                else:  # another machine's ports are its daemon's to refuse
                    refuse_loopback_ports(loaded, address)
            failure: Exception | None = None
            async with anyio.create_task_group() as tg:
                if retired:
                    tg.start_soon(remove_retired, engine, retired, reporter)
                try:
                    fresh = await start_services(
                        engine,
                        loaded,
                        session.session_id,
                        plan.network,
                        started,
                        mocks={m.name: m.port for m in mocks},
                        mock_address=observed.mock_address,
                        since=since,
                        override=override,
                        reporter=reporter,
                        only={step.name for step in plan.changed()},
                        stamp=stamp,
                    )
                except Exception as exc:  # raised below as itself, not in the task group's group
                    failure = exc
            if failure is not None:
                raise failure
    except BaseException as exc:
        with anyio.CancelScope(shield=True):
            host, after = await _undo(plan, observed, given, host, started, reporter)
        return Outcome(session=after, mocks=host, stamped={}, error=single_error(exc))
    kept = _kept(plan, session)
    records = {**kept, **started.containers}
    reset = reset_reason(session) if any(step.reset for step in plan.services) else None
    use = EnvironmentUse(set_up_by=session.set_up_by, runs_served=session.runs_served, reset=reset)
    after = msgspec.structs.replace(
        session,
        **(
            {"set_up_by": None, "runs_served": 0, "served_by": None, "resets": 0}
            if plan.fresh
            else {"served_by": None, "resets": session.resets + 1}
            if reset is not None
            else {}
        ),
        state="running",
        recreate=[],  # every service marked for it was recreated (plan: `its last reset did not finish`)
        network=started.network if plan.fresh else session.network,
        containers=[records[s.name] for s in loaded.services if s.name in records],
        mocks=mock_records(host, loaded) if plan.fresh else mock_records(host, loaded) or session.mocks,
        config_digest=loaded.digest,
        images={**session.images, **{s.name: s.build.image for s in loaded.services}},
        **given.engine_fields,
    )
    services = await _services(plan, observed, given, fresh)
    result = SetupResult(
        network=NetworkSetup(name=plan.network, created=started.network is not None),
        services=services,
        mocks=mocks,
        total_duration=int((anyio.current_time() - begun) * 1000),
        environment=None if plan.fresh else use,
        warnings=list(loaded.warnings),  # what the configuration set aside or hands the host
    )
    if plan.fresh:
        reporter.emit("done", f"environment ready in {result.total_duration} ms", status="ok")
    else:
        summary = _what_changed(plan, len(services))
        reporter.emit(
            "done", f"environment up to date in {result.total_duration} ms ({summary})", status="ok"
        )
    return Outcome(session=after, mocks=host, stamped=stamped, result=result)


def _what_changed(plan: SetupPlan, total: int) -> str:
    """`2 of 5 service(s) changed`, `4 of 5 service(s) reset`, `1 changed and 3 reset of 5 service(s)`:
    a service reset between runs (recreated, restored, its exec or jobs) is not a change."""
    steps = [*plan.changed(), *plan.in_place()]
    reset = sum(1 for step in steps if step.reset is not None)
    changed = len(steps) - reset
    if changed and reset:
        return f"{changed} changed and {reset} reset of {total} service(s)"
    if changed or reset:
        return f"{changed or reset} of {total} service(s) {'changed' if changed else 'reset'}"
    return "nothing changed"


async def _services(
    plan: SetupPlan, observed: Observed, given: Given, fresh: list[ServiceSetup]
) -> list[ServiceSetup]:
    """Each service's result, in configuration order: what was started, and what was reused."""
    steps = {step.name: step for step in plan.services}
    by_name = {s.name: s for s in fresh}
    reused = [s for s in observed.loaded.services if s.name not in by_name]
    address = (await given.engine.reach())[0] if reused else "127.0.0.1"
    running = observed.running or {}
    return [
        msgspec.structs.replace(
            by_name[s.name],
            action=steps[s.name].reported,
            reason=steps[s.name].reason,
            reset=steps[s.name].reset,
        )
        if s.name in by_name
        else msgspec.structs.replace(
            running_service(s, running[s.name], address),
            action="reset",
            reason=steps[s.name].reason,
            reset=steps[s.name].reset,
        )
        if steps[s.name].action == "reset"
        else msgspec.structs.replace(
            running_service(s, running[s.name], address), action="reused", reason="unchanged"
        )
        for s in observed.loaded.services
    ]


def _kept(plan: SetupPlan, session: SessionState) -> dict[str, ContainerRecord]:
    """The session's records of the containers the plan keeps (reused, or reset in place)."""
    reused = {step.name for step in plan.services if step.action in ("reuse", "reset")}
    return {r.service: r for r in session.containers if r.service in reused and not plan.fresh}


async def _undo(
    plan: SetupPlan,
    observed: Observed,
    given: Given,
    host: MockHost | None,
    started: Started,
    reporter: Reporter,
) -> tuple[MockHost | None, SessionState]:
    """Remove what this setup started; return the mocks still served and the session as it stands."""
    loaded, session = observed.loaded, observed.session
    if not plan.fresh:
        # What runs unchanged stays; what failed to start is removed, so the next setup starts it,
        # and so is what the plan replaced (moved aside, perhaps not yet removed).
        kept = _kept(plan, session)
        replaced = [step.replaces for step in plan.changed() if step.replaces is not None]
        try:
            await given.engine.remove_containers(
                [*(r.id for r in started.containers.values()), *replaced, *plan.remove], force=True
            )
        except PreflightError:
            pass
        containers = [kept[s.name] for s in loaded.services if s.name in kept]
        return host, msgspec.structs.replace(session, containers=containers)
    reporter.step("setup failed: removing everything it started", status="failed")
    try:
        if host is not None:
            await host.stop()
            host = None
        await remove_labelled(given.engine, loaded.label_root, session, force=True)
    except PreflightError:
        pass  # best effort: the next setup or clean finds leftovers by label
    # Nothing of this setup runs any more; a "running" session found broken is now stopped.
    state = "stopped" if session.state == "running" else session.state
    return host, msgspec.structs.replace(session, state=state, network=None, containers=[], mocks=[])
