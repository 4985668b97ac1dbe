"""`setup`: network, mocks and services started in dependency order, each probed until ready.

Independent services start at the same time; a service waits only for its `dependsOn` (ready
services, finished jobs). A container that exits while it is waited on fails the setup at once
(Docker's event stream tells us, no polling). On any failure, or on cancellation, everything
this setup started is removed before the error (with the failing service's last log lines and
probe outcomes) reaches the caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from contextlib import aclosing
from datetime import UTC, datetime, timedelta

import anyio
import msgspec

from ..config import LoadedConfig, ServiceConfig, parse_port
from ..durations import parse_duration
from ..engine.base import ContainerSpec
from ..engine.endpoint import http_url, is_loopback
from ..engine.probe import Prober
from ..errors import EnvironmentError_, PreflightError, StateError
from ..progress import Reporter
from ..results.lifecycle import NetworkSetup, PortMapping, Readiness, ServiceSetup, SetupResult
from .clean import remove_labelled, stop_mocks
from .context import LABEL_ROOT, ProjectContext
from .health import ProbePlan, wait_docker_healthy, wait_ready
from .mockhost import mock_records, mock_route, start_mocks
from .ports import check_host_ports, refuse_loopback_ports
from .signals import terminate_as_interrupt
from .specs import container_spec, network_name, session_labels
from .state import ContainerRecord
from .status import running_setup

__all__ = ["Stamp", "Started", "setup", "start_services"]

# Adds the inputs label to a service's container spec just before `docker run`.
Stamp = Callable[[ServiceConfig, ContainerSpec], Awaitable[ContainerSpec]]

_JOB_DEADLINE = 300.0
_NO_HEALTHCHECK_DEADLINE = 60.0
_LOG_TAIL = 30
_EXIT_CODE_POLLS = 20


class Started:
    """What this setup has started so far (for the clean-up on failure)."""

    def __init__(self) -> None:
        self.network: str | None = None
        self.containers: dict[str, ContainerRecord] = {}


async def setup(
    ctx: ProjectContext, *, timeout: str | None, reporter: Reporter, stamp: Stamp | None = None
) -> SetupResult:
    """Start the environment from nothing (see `Project.setup`); `stamp` labels each container."""
    loaded = await ctx.ensure_loaded()
    session = ctx.require_session()
    if ctx.stale:
        raise StateError(
            "e2e.yaml changed while the environment of the previous version is running",
            hint="call `clean`, then `setup` again",
        )
    override = parse_duration(timeout, field="timeout") if timeout is not None else None
    if session.state == "running":
        current = await running_setup(ctx)
        if current is not None:
            reporter.step("the environment is already running", status="ok")
            return current
        reporter.step("the previous environment is gone or broken: removing what is left", status="started")
        await stop_mocks(ctx)
        await remove_labelled(ctx, loaded.label_root, force=True)
    begun = anyio.current_time()
    since = datetime.now(UTC) - timedelta(seconds=2)
    started = Started()
    net = network_name(loaded, session.session_id)
    try:
        with terminate_as_interrupt():
            mock_results = []
            async with anyio.create_task_group() as tg:
                # All independent: leftovers of a crashed or killed process (which may hold names
                # and ports) go, the network and the mocks come up. A missing image is found by
                # `docker run --pull never` itself (NOT_BUILT), without a separate check.
                if loaded.services:  # a project of mocks and tests only never needs Docker
                    tg.start_soon(_remove_leftovers, ctx, loaded, net)
                    tg.start_soon(_create_network, ctx, net, started, reporter)

                async def mocks() -> None:
                    mock_results.extend(await start_mocks(ctx, reporter))

                tg.start_soon(mocks)
            if loaded.services:
                address, routable = await ctx.engine.reach()
                if routable or is_loopback(address):  # the engine runs on this machine
                    await check_host_ports(loaded)
                else:  # another machine's ports are its daemon's to refuse
                    refuse_loopback_ports(loaded, address)
            services = await start_services(
                ctx, loaded, net, started, since=since, override=override, reporter=reporter, stamp=stamp
            )
    except BaseException as exc:
        with anyio.CancelScope(shield=True):
            await _undo(ctx, loaded, started, reporter)
        error = _single(exc)
        if error is not None and error is not exc:
            raise error from None
        raise

    records = [started.containers[s.name] for s in loaded.services if s.name in started.containers]
    images = {**session.images, **{s.name: s.build.image for s in loaded.services}}
    await ctx.transition(
        images=images,
        state="running",
        network=started.network,
        containers=records,
        mocks=mock_records(ctx),
        **ctx.engine_record(),
    )
    ctx.owns_environment = True
    result = SetupResult(
        network=NetworkSetup(name=net, created=started.network is not None),
        services=services,
        mocks=mock_results,
        total_duration=int((anyio.current_time() - begun) * 1000),
    )
    reporter.emit("done", f"environment ready in {result.total_duration} ms", status="ok")
    return result


async def _remove_leftovers(ctx: ProjectContext, loaded: LoadedConfig, keep_network: str) -> None:
    """Remove containers (and then networks) an earlier, killed process left for this checkout.

    Only containers can hold names and host ports, so one cheap `docker ps` decides; networks
    without containers are left for `clean` rather than listed on every setup.
    """
    if await ctx.engine.list_containers({LABEL_ROOT: loaded.label_root}, detail=False):
        await remove_labelled(ctx, loaded.label_root, force=True, keep_network=keep_network)


async def _create_network(ctx: ProjectContext, name: str, started: Started, reporter: Reporter) -> None:
    loaded = ctx.require_loaded()
    session = ctx.require_session()
    labels = session_labels(loaded.project_name, loaded.label_root, session.session_id)
    labels["preflight.managed"] = "true"
    reporter.step(f"creating network {name}", scope="network")
    try:
        await ctx.engine.create_network(name, labels)
    except EnvironmentError_ as exc:
        if "already exists" not in str(exc.details):
            raise
        # Left by a crash of this very session, with our labels: use it.
    started.network = name


async def start_services(
    ctx: ProjectContext,
    loaded: LoadedConfig,
    net: str,
    started: Started,
    *,
    since: datetime,
    override: float | None,
    reporter: Reporter,
    only: Collection[str] | None = None,
    stamp: Stamp | None = None,
) -> list[ServiceSetup]:
    """Start the services (or `only` those: the others are taken as ready) in dependency order."""
    chosen = [s for s in loaded.services if only is None or s.name in only]
    if not chosen:
        return []
    session = ctx.require_session()
    ready = {s.name: anyio.Event() for s in loaded.services}
    for service in loaded.services:
        if service not in chosen:
            ready[service.name].set()
    exited: dict[str, anyio.Event] = {}
    dead: set[str] = set()
    results: dict[str, ServiceSetup] = {}
    prober: Prober = ctx.engine.prober
    host = ctx.mocks
    mocks = {
        name: host.port(name) if host is not None else mock.port for name, mock in loaded.config.mocks.items()
    }
    mock_address = (await mock_route(ctx)).address if mocks else "host-gateway"
    total = len(chosen)

    first_started = anyio.Event()

    async def watch(scope: anyio.CancelScope) -> None:
        # Started once a container exists (`--since` replays earlier exits), so the events
        # process does not compete with the first `docker run` for the CPU.
        await first_started.wait()
        labels = {LABEL_ROOT: loaded.label_root, "preflight.session": session.session_id}
        async with aclosing(ctx.engine.watch_exits(labels, since=since)) as stream:
            async for container_id in stream:
                dead.add(container_id)
                if container_id in exited:
                    exited[container_id].set()

    async def start(service: ServiceConfig) -> None:
        for dependency in service.depends_on:
            await ready[dependency].wait()
        reporter.step(f"starting {service.name}", scope=service.name, done=len(results), total=total)
        spec = container_spec(
            loaded, service, session=session.session_id, network=net, mocks=mocks, mock_address=mock_address
        )
        if stamp is not None:
            spec = await stamp(service, spec)
        try:
            container_id = await ctx.engine.run(spec)
        except EnvironmentError_ as exc:
            if "already in use" not in str(exc.details):
                raise
            # A container of this very session survived a crash: replace it.
            await ctx.engine.remove_containers([spec.name], force=True)
            container_id = await ctx.engine.run(spec)
        started.containers[service.name] = ContainerRecord(
            service=service.name, name=spec.name, id=container_id, kind=service.kind
        )
        first_started.set()
        event = exited.setdefault(container_id, anyio.Event())
        if container_id in dead:
            event.set()
        if service.kind == "job":
            results[service.name] = await _run_job(ctx, service, spec.name, container_id, override, event)
        else:
            results[service.name] = await _await_ready(
                ctx, service, spec.name, container_id, net, override, event, prober
            )
        outcome = results[service.name]
        reporter.step(
            f"{service.name} {outcome.status} in {outcome.health_check_duration or 0} ms",
            scope=service.name,
            status="ok",
            done=len(results),
            total=total,
        )
        ready[service.name].set()

    async with anyio.create_task_group() as outer:
        watcher = anyio.CancelScope()

        async def run_watch() -> None:
            with watcher:
                await watch(watcher)

        outer.start_soon(run_watch)
        async with anyio.create_task_group() as tg:
            for service in chosen:
                tg.start_soon(start, service)
        watcher.cancel()
    return [results[s.name] for s in chosen]


async def _await_ready(
    ctx: ProjectContext,
    service: ServiceConfig,
    name: str,
    container_id: str,
    net: str,
    override: float | None,
    exited: anyio.Event,
    prober: Prober,
) -> ServiceSetup:
    address, routable = await ctx.engine.reach()
    known = _published(service)
    if known is not None:
        # Every host port is fixed and the probe is HTTP on one of them: no need to ask Docker.
        ports, ip = known, ""
    else:
        infos = await ctx.engine.inspect([container_id])
        ports = list(infos[0].ports) if infos else []
        # A container's own address is reachable only from the engine's machine.
        ip = infos[0].networks.get(net, "") if infos and routable else ""
    plan = _plan(service, {p.container: p.host for p in ports}, ip, override, address)
    readiness: Readiness | None = None
    async with anyio.create_task_group() as tg:

        async def probe() -> None:
            nonlocal readiness
            readiness = await wait_ready(plan, prober)
            if readiness.probe == "running" and service.container.docker_healthcheck is not None:
                readiness = await _docker_health(ctx, service, container_id, override)
            tg.cancel_scope.cancel()

        async def on_exit() -> None:
            await exited.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(probe)
        tg.start_soon(on_exit)
    if readiness is None or (not readiness.ready and exited.is_set()):
        raise await _exited_error(ctx, service, container_id, plan, readiness)
    if not readiness.ready:
        tail = await _log_tail(ctx, container_id)
        raise EnvironmentError_(
            f"service `{service.name}` did not become ready within {plan.deadline:.0f}s ({plan.target}; "
            f"last probe: {readiness.last_outcomes[-1].detail if readiness.last_outcomes else 'none'})",
            code="HEALTH_CHECK_TIMEOUT",
            hint="read details.logTail; check the health path and port, or give setup a longer timeout",
            details={"service": service.name, "readiness": msgspec.to_builtins(readiness), "logTail": tail},
        )
    return ServiceSetup(
        name=service.name,
        container_id=container_id,
        container_name=name,
        status="running" if readiness.probe == "running" else "healthy",
        ports=ports,
        readiness=readiness,
        url=http_url(address, ports[0].host) if ports else None,
        health_check_duration=readiness.time_to_ready,
    )


async def _run_job(
    ctx: ProjectContext,
    service: ServiceConfig,
    name: str,
    container_id: str,
    override: float | None,
    exited: anyio.Event,
) -> ServiceSetup:
    deadline = override if override is not None else _JOB_DEADLINE
    begun = anyio.current_time()
    with anyio.move_on_after(deadline) as scope:
        code = await ctx.engine.wait_exit(container_id)
    elapsed = int((anyio.current_time() - begun) * 1000)
    readiness = Readiness(
        probe="exit",
        target="exit status 0",
        attempts=1,
        ready=not scope.cancelled_caught and code == 0,
        time_to_ready=elapsed,
    )
    if scope.cancelled_caught:
        tail = await _log_tail(ctx, container_id)
        raise EnvironmentError_(
            f"job `{service.name}` did not finish within {deadline:.0f}s",
            code="HEALTH_CHECK_TIMEOUT",
            hint="read details.logTail; give setup a longer timeout if the job is just slow",
            details={"service": service.name, "logTail": tail},
        )
    if code != 0:
        tail = await _log_tail(ctx, container_id)
        raise EnvironmentError_(
            f"job `{service.name}` failed with exit status {code}" + (f": {tail[-1]}" if tail else ""),
            code="JOB_FAILED",
            hint="read details.logTail: the services that depend on this job were not started",
            details={"service": service.name, "exitCode": code, "logTail": tail},
        )
    return ServiceSetup(
        name=service.name,
        container_id=container_id,
        container_name=name,
        status="completed",
        ports=[],
        readiness=readiness,
        health_check_duration=elapsed,
    )


async def _docker_health(
    ctx: ProjectContext, service: ServiceConfig, container_id: str, override: float | None
) -> Readiness:
    check = service.container.docker_healthcheck
    assert check is not None
    budget = parse_duration(check.start_period) + (
        parse_duration(check.interval) + parse_duration(check.timeout)
    ) * max(1, check.retries)
    deadline = override if override is not None else max(budget, 5.0)

    async def status() -> str:
        infos = await ctx.engine.inspect([container_id])
        return infos[0].health if infos else "none"

    return await wait_docker_healthy(status, deadline=deadline, target=f"docker health: {check.test[-1]}")


def _published(service: ServiceConfig) -> list[PortMapping] | None:
    """Return the published ports when the config alone says them and the probe needs no more."""
    specs = [parse_port(spec) for spec in service.container.ports]
    health = service.container.healthcheck
    http_only = health is not None and health.path is not None
    if not specs or not http_only or any(spec.host == 0 for spec in specs):
        return None
    return sorted(
        (PortMapping(host=spec.host, container=spec.container) for spec in specs), key=lambda m: m.container
    )


def _plan(
    service: ServiceConfig, mapping: dict[int, int], ip: str, override: float | None, address: str
) -> ProbePlan:
    """What to probe: `ip` is the container's (empty when unreachable), `address` the engine's published ports'."""
    health = service.container.healthcheck
    if health is not None and (health.path is not None or health.tcp is not None):
        deadline = (
            override
            if override is not None
            else (
                parse_duration(health.start_period) + parse_duration(health.interval) * max(1, health.retries)
            )
        )
        probe_timeout = parse_duration(health.timeout)
        if health.path is not None:
            container_port = health.port or next(iter(sorted(mapping)), 0)
            return ProbePlan(
                kind="http",
                host=address,
                port=mapping.get(container_port, 0),
                path=health.path,
                deadline=deadline,
                probe_timeout=probe_timeout,
            )
        assert health.tcp is not None
        return ProbePlan(
            kind="tcp",
            host=ip or address,
            port=health.tcp if ip else mapping.get(health.tcp, 0),
            fallback_host=address,
            fallback_port=mapping.get(health.tcp),
            deadline=deadline,
            probe_timeout=probe_timeout,
        )
    deadline = override if override is not None else _NO_HEALTHCHECK_DEADLINE
    if mapping and service.container.docker_healthcheck is None:
        first = min(mapping)
        return ProbePlan(
            kind="port",
            host=ip or address,
            port=first if ip else mapping[first],
            fallback_host=address,
            fallback_port=mapping[first],
            deadline=deadline,
        )
    return ProbePlan(kind="running", deadline=deadline)


async def _exited_error(
    ctx: ProjectContext,
    service: ServiceConfig,
    container_id: str,
    plan: ProbePlan,
    readiness: Readiness | None,
) -> EnvironmentError_:
    infos = await ctx.engine.inspect([container_id])
    for _ in range(_EXIT_CODE_POLLS):
        # An engine may report the stop before it has recorded the exit status (Podman's
        # cleanup runs in a process of its own): look again for a short while.
        if not infos or infos[0].exit_code is not None or infos[0].oom_killed:
            break
        await anyio.sleep(0.1)
        infos = await ctx.engine.inspect([container_id])
    code = infos[0].exit_code if infos else None
    oom = bool(infos and infos[0].oom_killed)
    tail = await _log_tail(ctx, container_id)
    reason = "was killed for using too much memory" if oom else f"exited with status {code}"
    return EnvironmentError_(
        f"service `{service.name}` {reason} while waiting for it to be ready"
        + (f": {tail[-1]}" if tail else ""),
        code="CONTAINER_EXITED",
        hint="read details.logTail: the process in the container stopped (wrong command, crash, missing config)",
        details={
            "service": service.name,
            "exitCode": code,
            "oomKilled": oom,
            "logTail": tail,
            "readiness": msgspec.to_builtins(readiness) if readiness else None,
            "probe": plan.target,
        },
    )


async def _log_tail(ctx: ProjectContext, container_id: str) -> list[str]:
    try:
        lines = await ctx.engine.logs(container_id, tail=_LOG_TAIL)
    except PreflightError:
        return []
    return [f"{line.stream}: {line.text}" if line.stream == "stderr" else line.text for line in lines]


async def _undo(ctx: ProjectContext, loaded: LoadedConfig, started: Started, reporter: Reporter) -> None:
    reporter.step("setup failed: removing everything it started", status="failed")
    try:
        await stop_mocks(ctx)
        await remove_labelled(ctx, loaded.label_root, force=True)
    except PreflightError:
        pass  # best effort: the next setup or clean finds leftovers by label
    session = ctx.session
    if session is not None:
        # Nothing of this setup runs any more; a "running" session whose containers were found
        # broken before this attempt is now stopped.
        state = "stopped" if session.state == "running" else session.state
        try:
            await ctx.transition(state=state, network=None, containers=[], mocks=[])
        except OSError:
            pass


def _single(exc: BaseException) -> BaseException | None:
    """Return the one meaningful error inside (nested) exception groups, if there is one."""
    while isinstance(exc, BaseExceptionGroup):
        preflight = [e for e in exc.exceptions if isinstance(e, PreflightError | BaseExceptionGroup)]
        if not preflight:
            return exc
        exc = preflight[0]
    return exc
