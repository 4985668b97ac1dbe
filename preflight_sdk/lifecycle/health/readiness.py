"""Waiting for a started container: probed until ready (services) or until it exits (jobs).

A container that exits while it is waited on ends the wait at once (its `exited` event); the
error then carries its exit status, its last log lines and the probes' outcomes.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import msgspec

from preflight_sdk.config import ServiceConfig, parse_port
from preflight_sdk.core.addresses import http_url
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import InfrastructureError, PreflightError
from preflight_sdk.core.log_text import cause, excerpt
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.lifecycle import PortMapping, Readiness, ServiceSetup
from preflight_sdk.engine.base import ContainerInfo, Engine

from .polling import ProbePlan, wait_docker_healthy, wait_ready
from .probe import Prober

__all__ = ["await_ready", "run_job"]

_JOB_DEADLINE = 300.0
_NO_HEALTHCHECK_DEADLINE = 60.0
# Read enough of the output to keep its start (a failing probe writes a line a try), show at most
# `_SHOWN` lines of it: repeats folded, the first lines and the last (core/log_text.py).
_LOG_READ = 2000
_SHOWN = 30
_EXIT_CODE_POLLS = 20


async def await_ready(
    engine: Engine,
    service: ServiceConfig,
    name: str,
    container_id: str,
    net: str,
    override: float | None,
    exited: anyio.Event,
    prober: Prober,
    redactor: Redactor,
    *,
    waiting: Callable[[], None],
) -> ServiceSetup:
    """Wait until the started container is ready; `waiting()` is called once it is not ready at once
    (then `exited` must be set when the container exits)."""
    address, routable = await engine.reach()
    known = _published(service)
    if known is not None:
        # Every host port is fixed and the probe is HTTP on one of them: no need to ask Docker.
        ports, ip = known, ""
    else:
        infos = await engine.inspect([container_id])
        ports = list(infos[0].ports) if infos else []
        # A container's own address is reachable only from the engine's machine.
        ip = infos[0].networks.get(net, "") if infos and routable else ""
    plan = _probe_plan(service, {p.container: p.host for p in ports}, ip, override, address)
    readiness: Readiness | None = None
    async with anyio.create_task_group() as tg:

        async def probe() -> None:
            nonlocal readiness
            readiness = await wait_ready(plan, prober, waiting=waiting)
            if readiness.probe == "running" and service.container.docker_healthcheck is not None:
                waiting()
                readiness = await _docker_health(engine, service, container_id, override)
            tg.cancel_scope.cancel()

        async def on_exit() -> None:
            await exited.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(probe)
        tg.start_soon(on_exit)
    if readiness is None or (not readiness.ready and exited.is_set()):
        raise await _exited_error(engine, service, container_id, plan, readiness, redactor)
    if not readiness.ready:
        tail = await _log_tail(engine, container_id, redactor)
        raise InfrastructureError(
            f"service `{service.name}` did not become ready within {plan.deadline:.0f}s ({plan.target}; "
            f"last probe: {readiness.last_outcomes[-1].detail if readiness.last_outcomes else 'none'})",
            code="HEALTH_CHECK_TIMEOUT",
            hint=_read(tail, "check the health path and port, or call `setup` with a longer timeout"),
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


async def run_job(
    engine: Engine,
    service: ServiceConfig,
    name: str,
    container_id: str,
    override: float | None,
    exited: anyio.Event,
    redactor: Redactor,
) -> ServiceSetup:
    deadline = override if override is not None else _JOB_DEADLINE
    begun = anyio.current_time()
    with anyio.move_on_after(deadline) as scope:
        code = await engine.wait_exit(container_id)
    elapsed = int((anyio.current_time() - begun) * 1000)
    readiness = Readiness(
        probe="exit",
        target="exit status 0",
        attempts=1,
        ready=not scope.cancelled_caught and code == 0,
        time_to_ready=elapsed,
    )
    if scope.cancelled_caught:
        tail = await _log_tail(engine, container_id, redactor)
        raise InfrastructureError(
            f"job `{service.name}` did not finish within {deadline:.0f}s",
            code="HEALTH_CHECK_TIMEOUT",
            hint=_read(tail, "call `setup` with a longer timeout if the job is just slow"),
            details={"service": service.name, "logTail": tail},
        )
    if code != 0 and _gone(await engine.inspect([container_id])):
        raise removed_while_waiting(service, container_id)
    if code != 0:
        lines = await _output(engine, container_id, redactor)
        tail, why = excerpt(lines, limit=_SHOWN), cause(lines)
        raise InfrastructureError(
            f"job `{service.name}` failed with exit status {code}" + (f": {why}" if why else ""),
            code="JOB_FAILED",
            hint=_read(tail, "the services that depend on this job were not started"),
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
    engine: Engine, service: ServiceConfig, container_id: str, override: float | None
) -> Readiness:
    check = service.container.docker_healthcheck
    assert check is not None
    budget = parse_duration(check.start_period) + (
        parse_duration(check.interval) + parse_duration(check.timeout)
    ) * max(1, check.retries)
    deadline = override if override is not None else max(budget, 5.0)

    async def status() -> str:
        infos = await engine.inspect([container_id])
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


def _probe_plan(
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
    engine: Engine,
    service: ServiceConfig,
    container_id: str,
    plan: ProbePlan,
    readiness: Readiness | None,
    redactor: Redactor,
) -> InfrastructureError:
    infos = await engine.inspect([container_id])
    for _ in range(_EXIT_CODE_POLLS):
        # An engine may report the stop before it has recorded the exit status (Podman's
        # cleanup runs in a process of its own): look again for a short while.
        if not infos or infos[0].exit_code is not None or infos[0].oom_killed:
            break
        await anyio.sleep(0.1)
        infos = await engine.inspect([container_id])
    if _gone(infos):
        raise removed_while_waiting(service, container_id)
    code = infos[0].exit_code
    oom = bool(infos and infos[0].oom_killed)
    lines = await _output(engine, container_id, redactor)
    tail, why = excerpt(lines, limit=_SHOWN), cause(lines)
    reason = "was killed for using too much memory" if oom else f"exited with status {code}"
    return InfrastructureError(
        f"service `{service.name}` {reason} while waiting for it to be ready" + (f": {why}" if why else ""),
        code="CONTAINER_EXITED",
        hint=_read(tail, "the process in the container stopped (wrong command, crash, missing config)"),
        details={
            "service": service.name,
            "exitCode": code,
            "oomKilled": oom,
            "logTail": tail,
            "readiness": msgspec.to_builtins(readiness) if readiness else None,
            "probe": plan.target,
        },
    )


def _read(tail: list[str], then: str) -> str:
    """Send the reader to the log tail, or, when the container printed nothing, say so."""
    if tail:
        return f"read details.logTail; {then}"
    return f"the container printed nothing (no log tail to read); {then}"


def _gone(infos: list[ContainerInfo]) -> bool:
    """Whether the inspected container is removed, or being removed (`docker rm -f` kills it first)."""
    return not infos or infos[0].status == "removing"


def removed_while_waiting(service: ServiceConfig, container_id: str) -> InfrastructureError:
    """The container went while setup waited for it: removed by another run's reset, a clean, or by
    hand. Its exit status (none, or 137 from the kill) says nothing of the service: no verdict."""
    return InfrastructureError(
        f"the container of `{service.name}` was removed while setup waited for it (by another "
        "preflight run's reset, a clean, or by hand): this says nothing about the service",
        code="CONTAINER_NOT_FOUND",
        hint="call `setup` again once the other operation is done; `status` shows what runs now",
        details={"service": service.name, "containerId": container_id},
        retryable=True,
    )


async def _log_tail(engine: Engine, container_id: str, redactor: Redactor) -> list[str]:
    """The lines to show of the container's output (its start kept, repeats folded)."""
    return excerpt(await _output(engine, container_id, redactor), limit=_SHOWN)


async def _output(engine: Engine, container_id: str, redactor: Redactor) -> list[str]:
    """The container's last `_LOG_READ` lines, redacted, stderr's marked."""
    try:
        lines = await engine.logs(container_id, tail=_LOG_READ)
    except PreflightError:
        return []
    shown = [f"{line.stream}: {line.text}" if line.stream == "stderr" else line.text for line in lines]
    return redactor.lines(shown)
