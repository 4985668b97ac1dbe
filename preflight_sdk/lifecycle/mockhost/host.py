"""The bridge between the lifecycle and the mock servers (`preflight_sdk.mocks`).

Mocks run in the process that started them. A later process (the CLI after the MCP server, a
new notebook kernel) finds them through `.preflight/state.json`; when nobody serves them any
more, `ensure_mocks` starts them again on the same ports, so containers keep reaching them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Literal

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, MockConfig
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import MockSetup
from preflight_sdk.engine.base import Engine

from ..session.removal import SessionWatch
from ..session.state import STATE_DIR, MockRecord, SessionState, read_state, state_path, write_state
from .address import MockRoute, decide_mock_route
from .tls import ensure_project_ca, hosts_changed, identity

if TYPE_CHECKING:
    from preflight_sdk.config.engine_target import EngineTarget
    from preflight_sdk.mocks import MockHost

    from ..session.context import ProjectContext
    from ..setup.plan import MocksPlan

_REPORTED: dict[str, Literal["started", "reloaded", "reused"]] = {
    "start": "started",
    "reload": "reloaded",
    "reuse": "reused",
}

__all__ = [
    "ensure_mocks",
    "mock_records",
    "mock_route",
    "mocks_alive",
    "mocks_folder",
    "serve_mocks",
    "start_mock_host",
    "stop_detached_mocks",
]


async def start_mock_host(
    loaded: LoadedConfig,
    session_id: str,
    *,
    binds: list[str],
    ports: Mapping[str, int] | None = None,
    detach_at_exit: bool = False,
) -> MockHost:
    """Start the project's mocks in this process (`PORT_CONFLICT` if a port is taken).

    `ports` gives a port to each mock the configuration leaves to the system (port 0); `binds`
    are the addresses, besides 127.0.0.1, the engine's containers reach this machine on. With
    `detach_at_exit`, a kept environment's mocks move to a detached host when this process exits.
    """
    from preflight_sdk.mocks import MockHost  # lazy: starlette and uvicorn load only when mocks are used

    mocks: dict[str, MockConfig] = {
        name: msgspec.structs.replace(mock, port=ports[name])
        if ports and name in ports and not mock.port
        else mock
        for name, mock in loaded.config.mocks.items()
    }
    from preflight_sdk.mocks.admin import ensure_admin_token

    token = await anyio.to_thread.run_sync(ensure_admin_token, mocks_folder(loaded.state_root))
    # Mocks standing in for real host names answer HTTPS on 443 where containers reach them.
    tls = await identity(loaded) if binds else None
    host = MockHost(
        mocks,
        bind_hosts=["127.0.0.1", *binds],
        still_wanted=SessionWatch(loaded.state_root, session_id),
        redactor=loaded.redactor,
        admin_token=token,
        tls=tls,
        tls_binds=[b for b in binds if b != "127.0.0.1"],
    )
    await host.start()
    if detach_at_exit and loaded.services:
        _keep_after_exit(host, loaded.state_root, session_id)
    return host


def _keep_after_exit(host: MockHost, root: str, session_id: str) -> None:
    """At this interpreter's exit, move the mocks to a detached host if the environment is kept."""
    from preflight_sdk.mocks.detached import keep_on_exit

    def wanted() -> bool:
        # Kept, for this session, with containers that call the mocks (a project of mocks and tests
        # only starts its mocks again on demand: `status`, `run` and `mock_requests` do).
        state = read_state(root)
        return (
            state is not None
            and state.session_id == session_id
            and state.state == "running"
            and bool(state.containers)
        )

    def record(pid: int) -> None:
        state = read_state(root)
        if state is not None and state.session_id == session_id:
            mocks = [msgspec.structs.replace(m, pid=pid) for m in state.mocks]
            write_state(root, msgspec.structs.replace(state, mocks=mocks))

    folder = mocks_folder(root)
    keep_on_exit(
        host,
        state_file=str(state_path(root)),
        session_id=session_id,
        folder=folder,
        wanted=wanted,
        record=record,
    )


def mocks_folder(root: str) -> str:
    """`.preflight/mocks` of the environment rooted at `root`: the detached host's log, the admin token."""
    return os.path.join(root, STATE_DIR, "mocks")


async def stop_detached_mocks(records: list[MockRecord], root: str) -> int:
    """Stop the detached mock hosts serving `records` for the environment rooted at `root` (a host
    serving another checkout, and any other process, are left alone); return how many."""
    from preflight_sdk.mocks.detached import stop_detached

    state_file = str(state_path(root))
    pids = {r.pid for r in records if r.pid != os.getpid()}
    stopped = 0
    for pid in pids:
        stopped += await anyio.to_thread.run_sync(partial(stop_detached, pid, state_file=state_file))
    return stopped


async def serve_mocks(
    plan: MocksPlan,
    loaded: LoadedConfig,
    session: SessionState,
    host: MockHost | None,
    *,
    binds: list[str],
    reporter: Reporter,
    detach_at_exit: bool = False,
) -> tuple[MockHost | None, list[MockSetup]]:
    """Carry out the mocks' part of a plan; return the server this process runs now, and each mock."""
    configs = loaded.config.mocks
    if plan.host == "keep" and host is not None and hosts_changed(host, loaded):
        # A new host name may need the HTTPS listener (or none): start the mocks again, same ports.
        ports = {**plan.ports, **{n: host.port(n) for n in host.names if n in configs}}
        steps = [
            msgspec.structs.replace(m, action="start", reason="its host names changed") for m in plan.mocks
        ]
        plan = msgspec.structs.replace(plan, host="start", ports=ports, mocks=steps)
    await ensure_project_ca(loaded)  # before any container mounts the CA bundle
    if plan.host in ("stop", "start") and host is not None:
        await host.stop()
        host = None
    if plan.host in ("stop", "start"):
        # A detached host that kept the mocks of an earlier command: this process serves them now.
        await stop_detached_mocks(session.mocks, loaded.state_root)
    if plan.host == "start":
        reporter.step(f"starting {len(configs)} mock(s)", scope="mocks")
        host = await start_mock_host(
            loaded, session.session_id, binds=binds, ports=plan.ports, detach_at_exit=detach_at_exit
        )
    elif plan.host == "keep" and host is not None:
        reloaded = {step.name: configs[step.name] for step in plan.mocks if step.action == "reload"}
        if reloaded:
            host.reload(reloaded)
            for name in sorted(reloaded):
                reporter.step(f"mock {name}: routes changed, reloaded in place", scope="mocks")
    if plan.warning is not None:
        reporter.step(plan.warning, scope="mocks", status="failed")
    served = (
        {name: host.port(name) for name in host.names}
        if host is not None and host.running()
        else {r.name: r.port for r in session.mocks}
    )
    results = [
        MockSetup(
            name=step.name,
            port=(port := served.get(step.name, configs[step.name].port)),
            status="running",
            route_count=len(configs[step.name].routes),
            url=f"http://127.0.0.1:{port}",
            action=_REPORTED[step.action],
            hosts=list(configs[step.name].hosts),
        )
        for step in plan.mocks
    ]
    return host, results


async def mock_route(engine: Engine, target: EngineTarget) -> MockRoute:
    """How the engine's containers reach the mocks (`UNSUPPORTED_ON_ENGINE` when they cannot)."""
    info = await engine.info()
    decide = partial(
        decide_mock_route,
        address=info.address,
        gateway=info.host_gateway,
        mock_host=target.mock_host,
        engine=target.host or info.endpoint or target.name,
    )
    return await anyio.to_thread.run_sync(decide)  # resolves names and binds a probe socket


def mock_records(host: MockHost | None, loaded: LoadedConfig) -> list[MockRecord]:
    """Return the mocks `host` serves in this process, for the state file."""
    if host is None:
        return []
    return [MockRecord(name=name, port=host.port(name), pid=os.getpid()) for name in loaded.config.mocks]


async def mocks_alive(records: list[MockRecord]) -> dict[str, bool]:
    """Ask each recorded mock's admin endpoint whether it still answers."""
    import httpx  # lazy: httpx pulls in click, which `import preflight_sdk` must not

    alive: dict[str, bool] = {}
    async with httpx.AsyncClient(timeout=1.0) as client:
        for record in records:
            try:
                response = await client.get(f"http://127.0.0.1:{record.port}/_mock/health")
                alive[record.name] = response.status_code == 200
            except httpx.HTTPError:
                alive[record.name] = False
    return alive


async def ensure_mocks(ctx: ProjectContext, reporter: Reporter) -> None:
    """Make sure every configured mock of the project is served (here or by another process)."""
    loaded = ctx.require_loaded()
    session = ctx.require_session()
    if not loaded.config.mocks or (ctx.mocks is not None and ctx.mocks.running()):
        return
    records = session.mocks
    alive = await mocks_alive(records) if records else {}
    if records and all(alive.get(name) for name in loaded.config.mocks):
        return  # another process serves them
    reporter.step("mocks are not served any more: starting them in this process", scope="mocks")
    binds = list((await mock_route(ctx.engine, ctx.engine_target())).binds) if loaded.services else []
    if ctx.mocks is not None:
        await ctx.mocks.stop()
        ctx.mocks = None
    ctx.mocks = await start_mock_host(
        loaded,
        session.session_id,
        binds=binds,
        ports={r.name: r.port for r in records},
        detach_at_exit=ctx.owns_engine,
    )
    await ctx.transition(mocks=mock_records(ctx.mocks, loaded))
