"""A run's environment as a value: what its suites reach, built from the project's `Environment`.

The suites never see the lifecycle: before they start, the run's owner reads the session and the
engine once (each service's container and published ports, the mocks' ports, served again here
when nobody serves them any more) into a `RunEnvironment`, and hands it to `run_suites` with the
pytest interpreters kept warm, if any.
"""

from __future__ import annotations

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.addresses import http_url
from preflight_sdk.core.errors import StateError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.lifecycle.environment import Environment
from preflight_sdk.lifecycle.health.probe import NetworkProber
from preflight_sdk.lifecycle.session.state import SessionState
from preflight_sdk.suites.commands.warm_pytest import WarmPytest
from preflight_sdk.suites.environment import MockEndpoint, RunEnvironment, ServiceEndpoint
from preflight_sdk.suites.orchestrator import TestRunState, run_suites

__all__ = ["run_environment", "run_suites_on"]


async def run_suites_on(
    environment: Environment,
    state: TestRunState,
    *,
    suite_ids: list[str] | None,
    parallel: bool | None,
    reporter: Reporter,
) -> RunResult:
    """Run the suites of `state` against the environment as it stands now."""
    state.phase = "environment"
    env = await run_environment(environment, reporter, optional=state.environment_optional)
    servers = environment.pytest_servers
    warm = servers if isinstance(servers, WarmPytest) else None
    return await run_suites(
        env, suite_ids=suite_ids, parallel=parallel, reporter=reporter, state=state, warm=warm
    )


async def run_environment(
    environment: Environment, reporter: Reporter, *, optional: bool = False
) -> RunEnvironment:
    """The running environment; with `optional`, an empty one when it is not running.

    Raises:
        StateError: NOT_RUNNING when it is not running (or a service of it is missing or exited).
    """
    loaded = await environment.ensure_loaded()
    session = environment.require_session()
    needs = bool(loaded.services or loaded.config.mocks)
    if not needs or (optional and session.state != "running"):
        return RunEnvironment(loaded=loaded, services={}, mocks={}, engine=None, prober=NetworkProber())
    if session.state != "running":
        raise StateError(
            f"the environment is not running (state: {session.state})",
            code="NOT_RUNNING",
            hint="call `setup` first (or `run`, which builds, sets up, runs and cleans)",
            details={"state": session.state},
        )
    services = await _services(environment, loaded, session)
    await environment.ensure_mocks(reporter)
    host = environment.mocks
    recorded = {r.name: r.port for r in environment.require_session().mocks}
    mocks: dict[str, MockEndpoint] = {}
    for name, mock in loaded.config.mocks.items():
        port = host.port(name) if host is not None and host.running() else recorded.get(name, mock.port)
        mocks[name] = MockEndpoint(name=name, url=f"http://127.0.0.1:{port}", port=port)
    return RunEnvironment(
        loaded=loaded,
        services=services,
        mocks=mocks,
        engine=environment.engine,
        mock_host=host,
        network=session.network,
        prober=NetworkProber(),
    )


async def _services(
    environment: Environment, loaded: LoadedConfig, session: SessionState
) -> dict[str, ServiceEndpoint]:
    """Each service as tests reach it (NOT_RUNNING naming the services missing or exited)."""
    engine = environment.engine
    records = {r.service: r for r in session.containers}
    infos = {i.id: i for i in await engine.inspect([r.id for r in records.values()])} if records else {}
    address = (await engine.reach())[0] if records else "127.0.0.1"
    services: dict[str, ServiceEndpoint] = {}
    broken: list[str] = []
    for service in loaded.services:
        record = records.get(service.name)
        info = infos.get(record.id) if record else None
        if info is None or (service.kind == "service" and not info.running):
            broken.append(f"{service.name} ({info.status if info else 'missing'})")
            continue
        first = info.ports[0] if info.ports else None
        services[service.name] = ServiceEndpoint(
            name=service.name,
            url=http_url(address, first.host) if first else None,
            host=address,
            port=first.host if first else None,
            ports={p.container: p.host for p in info.ports},
            container_id=info.id,
            container_name=info.name,
        )
    if broken:
        raise StateError(
            "the environment is broken: " + ", ".join(broken),
            code="NOT_RUNNING",
            hint="read their `logs`, then call `clean` and `setup` again",
            details={"broken": broken},
        )
    return services
