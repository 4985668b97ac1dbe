"""The bridge between the lifecycle and the mock servers (`preflight_sdk.mocks`).

Mocks run in the process that started them while it lives; when it exits with the environment
still running, they move to a detached mock host on the same ports (`mocks.detached`) and serve
until `clean`. A later process (the CLI after the MCP server, a new notebook kernel) finds them
through `.preflight/state.json`; when nobody serves them any more (the owner was killed),
`ensure_mocks` starts them again on the same ports, so containers keep reaching them.
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING

import anyio
import msgspec

from ..config import MockConfig
from ..engine.endpoint import MockRoute, decide_mock_route
from ..progress import Reporter
from ..results.lifecycle import MockSetup
from .context import ProjectContext
from .removal import SessionWatch

if TYPE_CHECKING:
    from ..mocks.host import MockHost

from .state import STATE_DIR, MockRecord, read_state, state_path, write_state

__all__ = ["ensure_mocks", "mock_records", "mock_route", "mocks_alive", "start_mocks", "stop_detached_mocks"]


async def start_mocks(
    ctx: ProjectContext, reporter: Reporter, *, ports: dict[str, int] | None = None
) -> list[MockSetup]:
    """Start the project's mocks in this process (`PORT_CONFLICT` if a port is taken)."""
    loaded = ctx.require_loaded()
    if not loaded.config.mocks:
        return []
    from ..mocks import MockHost  # lazy: starlette and uvicorn load only when mocks are used

    if ctx.mocks is not None:
        await ctx.mocks.stop()
        ctx.mocks = None
    mocks: dict[str, MockConfig] = {
        name: msgspec.structs.replace(mock, port=ports[name])
        if ports and name in ports and not mock.port
        else mock
        for name, mock in loaded.config.mocks.items()
    }
    binds = ["127.0.0.1"]
    if loaded.services:
        binds.extend((await mock_route(ctx)).binds)
    reporter.step(f"starting {len(mocks)} mock(s)", scope="mocks")
    session_id, root = ctx.require_session().session_id, loaded.state_root
    host = MockHost(mocks, bind_hosts=binds, still_wanted=SessionWatch(root, session_id))
    results: list[MockSetup] = await host.start()
    ctx.mocks = host
    # A kept environment's containers keep calling the mocks after this process exits. Not for an
    # engine the caller handed in (a test's fake: no container calls anything).
    if ctx._engine is None or ctx._engine_target is not None:
        _keep_after_exit(host, root, session_id)
    return results


def _keep_after_exit(host: MockHost, root: str, session_id: str) -> None:
    """At this interpreter's exit, move the mocks to a detached host if the environment is kept."""
    from ..mocks.detached import keep_on_exit

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

    folder = os.path.join(root, STATE_DIR, "mocks")
    keep_on_exit(
        host,
        state_file=str(state_path(root)),
        session_id=session_id,
        folder=folder,
        wanted=wanted,
        record=record,
    )


async def stop_detached_mocks(records: list[MockRecord]) -> int:
    """Stop the detached mock hosts serving `records` (other processes are left alone); return how many."""
    from ..mocks.detached import stop_detached

    pids = {r.pid for r in records if r.pid != os.getpid()}
    stopped = 0
    for pid in pids:
        stopped += await anyio.to_thread.run_sync(stop_detached, pid)
    return stopped


async def mock_route(ctx: ProjectContext) -> MockRoute:
    """How the engine's containers reach the mocks (`UNSUPPORTED_ON_ENGINE` when they cannot)."""
    info = await ctx.engine.info()
    target = ctx.engine_target()
    decide = partial(
        decide_mock_route,
        address=info.address,
        gateway=info.host_gateway,
        mock_host=target.mock_host,
        engine=target.host or info.endpoint or target.name,
    )
    return await anyio.to_thread.run_sync(decide)  # resolves names and binds a probe socket


def mock_records(ctx: ProjectContext) -> list[MockRecord]:
    """Return the mocks this process serves, for the state file."""
    host = ctx.mocks
    loaded = ctx.loaded
    if host is None or loaded is None:
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
    """Make sure every configured mock is served (here or by another process)."""
    loaded = ctx.require_loaded()
    session = ctx.require_session()
    if not loaded.config.mocks or (ctx.mocks is not None and ctx.mocks.running()):
        return
    records = session.mocks
    alive = await mocks_alive(records) if records else {}
    if records and all(alive.get(name) for name in loaded.config.mocks):
        return  # another process serves them
    ports = {r.name: r.port for r in records}
    reporter.step("mocks are not served any more: starting them in this process", scope="mocks")
    await start_mocks(ctx, reporter, ports=ports)
    await ctx.transition(mocks=mock_records(ctx))
