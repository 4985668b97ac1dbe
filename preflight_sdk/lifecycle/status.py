"""`status`: what runs now, read from Docker and `.preflight/state.json` (works from any process)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

import anyio

from preflight_sdk.config import LoadedConfig, ServiceConfig
from preflight_sdk.core.addresses import http_url
from preflight_sdk.core.results.lifecycle import (
    LifecycleState,
    MockStatus,
    NetworkStatus,
    PortStatus,
    Readiness,
    ServiceSetup,
    ServiceStatus,
    StatusResult,
)
from preflight_sdk.engine.base import ContainerInfo, Engine

from .clean import first_error
from .health.probe import prober_for
from .session.state import SessionState
from .setup.labels import LABEL_ROOT, LABEL_SERVICE, LABEL_SESSION
from .setup.specs import network_name

if TYPE_CHECKING:
    from preflight_sdk.mocks import MockHost

__all__ = ["running_service", "service_now", "status"]


@dataclass(frozen=True)
class _Seen:
    """What the environment holds that a status reads."""

    loaded: LoadedConfig
    session: SessionState
    engine: Engine
    mocks: MockHost | None
    problem: str | None


async def status(
    loaded: LoadedConfig, session: SessionState, engine: Engine, mocks: MockHost | None, problem: str | None
) -> StatusResult:
    """Report the project's state (see `Project.status`); `problem`: why the state file could not be used."""
    ctx = _Seen(loaded, session, engine, mocks, problem)
    containers: list[ContainerInfo] = []
    network_names: list[str] = []

    async def read_containers() -> None:
        containers.extend(await engine.list_containers({LABEL_ROOT: loaded.label_root}))

    async def read_networks() -> None:
        network_names.extend(n.name for n in await engine.list_networks({LABEL_ROOT: loaded.label_root}))

    reach = ("127.0.0.1", True)

    async def read_reach() -> None:
        nonlocal reach
        reach = await engine.reach()

    if loaded.services:  # a project of mocks and tests only never needs Docker
        with first_error():
            async with anyio.create_task_group() as tg:
                tg.start_soon(read_containers)
                tg.start_soon(read_networks)
                tg.start_soon(read_reach)

    warnings: list[str] = list(loaded.warnings)  # compose keys set aside, once per key and file
    state, session_id = session.state, session.session_id
    if ctx.problem is not None:
        warnings.append(ctx.problem)
        recovered = _recovered_session(containers)
        if recovered is not None:
            session_id, state = recovered
    chosen = _by_service(containers, session_id)
    services: list[ServiceStatus] = []

    async def describe(name: str) -> None:
        services.append(await _service_status(ctx, name, chosen.get(name), reach))

    async with anyio.create_task_group() as tg:
        for service in loaded.services:
            tg.start_soon(describe, service.name)
    order = {s.name: i for i, s in enumerate(loaded.services)}
    services.sort(key=lambda s: order[s.name])
    net = network_name(loaded, session_id)
    return StatusResult(
        state=state,
        session_id=session_id,
        warnings=warnings,
        network=NetworkStatus(name=net, exists=net in network_names) if loaded.services else None,
        services=services,
        mocks=await _mock_statuses(ctx),
        owner_pid=session.owner_pid or None,
    )


def _recovered_session(containers: list[ContainerInfo]) -> tuple[str, LifecycleState] | None:
    """The session the labelled containers belong to (the one with most running), and its state."""
    counts: dict[str, tuple[int, int]] = {}
    for info in containers:
        session = info.labels.get(LABEL_SESSION)
        if session:
            running, total = counts.get(session, (0, 0))
            counts[session] = (running + info.running, total + 1)
    if not counts:
        return None
    best = max(counts, key=lambda name: counts[name])
    return best, "running" if counts[best][0] else "stopped"


def running_service(service: ServiceConfig, info: ContainerInfo, address: str) -> ServiceSetup:
    """Describe a service found already running (or a job found finished) as setup would.

    `address` is where the engine's published ports are reached (`Engine.reach`).
    """
    return ServiceSetup(
        name=service.name,
        container_id=info.id,
        container_name=info.name,
        status="completed" if service.kind == "job" else "running",
        ports=list(info.ports),
        readiness=Readiness(
            probe="running", target="already running", attempts=0, ready=True, time_to_ready=0
        ),
        url=http_url(address, info.ports[0].host) if info.ports else None,
    )


async def service_now(
    loaded: LoadedConfig, session: SessionState | None, engine: Engine, service: str
) -> tuple[str, ServiceSetup | None]:
    """The lifecycle state, and `service`'s container of this session when it runs now (else None)."""
    state = session.state if session is not None else "not initialized"
    record = next((r for r in session.containers if r.service == service), None) if session else None
    configured = loaded.service(service)
    if session is None or state != "running" or record is None or configured is None:
        return state, None
    found = await engine.inspect([record.id])
    if not found or not found[0].running:
        return state, None
    return state, running_service(configured, found[0], (await engine.reach())[0])


def _by_service(containers: list[ContainerInfo], session: str) -> dict[str, ContainerInfo]:
    chosen: dict[str, ContainerInfo] = {}
    for info in containers:
        name = info.labels.get(LABEL_SERVICE)
        if name is None:
            continue
        current = chosen.get(name)
        # Prefer this session's container, then a running one.
        rank = (info.labels.get(LABEL_SESSION) == session, info.running)
        if current is None or rank > (current.labels.get(LABEL_SESSION) == session, current.running):
            chosen[name] = info
    return chosen


async def _service_status(
    ctx: _Seen, name: str, info: ContainerInfo | None, reach: tuple[str, bool]
) -> ServiceStatus:
    if info is None:
        return ServiceStatus(name=name, status="missing", ports=[])
    address = reach[0]
    ports = [
        PortStatus(host=p.host, container=p.container, accessible=await _connects(address, p.host))
        for p in info.ports
    ]
    uptime = None
    if info.running and info.started_at is not None:
        uptime = int((datetime.now(UTC) - info.started_at).total_seconds() * 1000)
    return ServiceStatus(
        name=name,
        status=info.status,
        ports=ports,
        container_id=info.id,
        container_name=info.name,
        health=await _health(ctx, name, info, reach),
        uptime=uptime,
        exit_code=info.exit_code,
        url=http_url(address, info.ports[0].host) if info.ports else None,
    )


async def _health(
    ctx: _Seen, name: str, info: ContainerInfo, reach: tuple[str, bool]
) -> Literal["healthy", "unhealthy", "starting", "none"]:
    loaded = ctx.loaded
    service = loaded.service(name)
    check = service.container.healthcheck if service else None
    if not info.running:
        return "unhealthy" if check else "none"
    if check is None or (check.path is None and check.tcp is None):
        return info.health
    prober = prober_for(ctx.engine)
    address, routable = reach
    mapping = {p.container: p.host for p in info.ports}
    if check.path is not None:
        port = mapping.get(check.port or min(mapping, default=0), 0)
        result = await prober.http(address, port, check.path, 2.0)
    else:
        ip = next(iter(info.networks.values()), "") if routable else ""
        result = await prober.tcp(
            ip or address, (check.tcp or 0) if ip else mapping.get(check.tcp or 0, 0), 2.0, proxied=not ip
        )
    return "healthy" if result.ok else "unhealthy"


async def _connects(address: str, port: int) -> bool:
    try:
        with anyio.fail_after(0.5):
            stream = await anyio.connect_tcp(address, port)
            await stream.aclose()
    except (OSError, TimeoutError):
        return False
    return True


async def _mock_statuses(ctx: _Seen) -> list[MockStatus]:
    loaded = ctx.loaded
    if not loaded.config.mocks:
        return []
    host = ctx.mocks
    if host is not None and host.running():
        return [
            MockStatus(
                name=name,
                port=host.port(name),
                status="running",
                request_count=host.request_count(name),
                url=host.url(name),
            )
            for name in loaded.config.mocks
        ]
    session = ctx.session
    recorded = {r.name: r.port for r in session.mocks}
    statuses: list[MockStatus] = []
    import httpx  # lazy: httpx pulls in click, which `import preflight_sdk` must not

    # Plain http to the mocks' own ports: no TLS context (building one loads the CA bundle, about
    # 0.3 s on the first status of a process) and no proxy from the environment.
    async with httpx.AsyncClient(timeout=1.0, verify=False, trust_env=False) as client:
        for name, mock in loaded.config.mocks.items():
            port = recorded.get(name, mock.port)
            count, running = 0, False
            if port:
                try:
                    response = await client.get(f"http://127.0.0.1:{port}/_mock/health")
                    running = response.status_code == 200
                    count = int(response.json().get("requestCount", 0)) if running else 0
                except (httpx.HTTPError, ValueError):
                    running = False
            statuses.append(
                MockStatus(
                    name=name,
                    port=port,
                    status="running" if running else "stopped",
                    request_count=count,
                    url=f"http://127.0.0.1:{port}" if port else None,
                )
            )
    return statuses
