"""What a run sees of the environment: service and mock URLs, containers to exec in, logs, traffic.

Built once per run from the project's session (`.preflight/state.json` and Docker), so a run
works in any process. Without services and mocks (test-only mode) it is empty and suites target
absolute URLs or `BASE_URL`.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import InfrastructureError, PreflightError
from preflight_sdk.core.probes import Prober
from preflight_sdk.core.results.lifecycle import LogLine
from preflight_sdk.core.results.mocks import JournalEntry
from preflight_sdk.engine.base import ContainerInfo, Engine, ExecResult

__all__ = ["MockEndpoint", "RunEnvironment", "ServiceEndpoint"]


class ServiceEndpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A running service as tests reach it."""

    name: str
    url: str | None
    host: str = "127.0.0.1"
    port: int | None = None
    ports: dict[int, int] = msgspec.field(default_factory=dict)  # container port -> host port
    container_id: str | None = None
    container_name: str | None = None


class MockEndpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A running mock as tests reach it."""

    name: str
    url: str
    port: int


class RunEnvironment:
    """The environment one run executes against (see the module docstring)."""

    def __init__(
        self,
        *,
        loaded: LoadedConfig,
        services: dict[str, ServiceEndpoint],
        mocks: dict[str, MockEndpoint],
        engine: Engine | None,
        mock_host: Any = None,
        network: str | None = None,
        prober: Prober,
    ) -> None:
        self.loaded = loaded
        self.root = Path(loaded.root)
        self.services = services
        self.mocks = mocks
        self.engine = engine
        self.mock_host = mock_host
        self.network = network
        self.prober = prober  # the health probes of `waitHealthy` steps (from the host)
        self.redactor = loaded.redactor

    # -- addresses ---------------------------------------------------------------------------

    def base_url(self, service: str | None) -> str | None:
        """Return the base URL requests with a `path` go to (a service's, or `BASE_URL`)."""
        if service is not None:
            endpoint = self.services.get(service) or self._by_container_name(service)
            return endpoint.url if endpoint else None
        for endpoint in self.services.values():
            if endpoint.url:
                return endpoint.url
        return self.loaded.environ.get("BASE_URL")

    def _by_container_name(self, name: str) -> ServiceEndpoint | None:
        for endpoint in self.services.values():
            configured = self.loaded.service(endpoint.name)
            if configured is not None and configured.container.name == name:
                return endpoint
        return None

    def variables(self) -> dict[str, Any]:
        """Return `services.<name>.url/host/port` and `mocks.<name>.url/port` for templates."""
        return {
            "services": {
                name: {"url": e.url, "host": e.host, "port": e.port, "name": e.container_name}
                for name, e in self.services.items()
            },
            "mocks": {name: {"url": m.url, "port": m.port} for name, m in self.mocks.items()},
        }

    def process_env(self) -> dict[str, str]:
        """Environment for pytest and shell suites: `PREFLIGHT_<SERVICE>_URL`, `PREFLIGHT_<MOCK>_URL`, `BASE_URL`."""
        env: dict[str, str] = {}
        for name, endpoint in self.services.items():
            if endpoint.url:
                env[f"PREFLIGHT_{_env_name(name)}_URL"] = endpoint.url
        for name, mock in self.mocks.items():
            env[f"PREFLIGHT_{_env_name(name)}_URL"] = mock.url
        base = self.base_url(None)
        if base:
            env.setdefault("BASE_URL", base)
        env["PREFLIGHT_PROJECT_ROOT"] = str(self.root)
        return env

    # -- containers --------------------------------------------------------------------------

    def container_of(self, name: str | None) -> ServiceEndpoint:
        """Return the service endpoint for `name` (default: the first service).

        Raises:
            InfrastructureError: `CONTAINER_NOT_FOUND` listing the valid names.
        """
        if name is None and self.services:
            return next(iter(self.services.values()))
        endpoint = self.services.get(name or "") or (self._by_container_name(name) if name else None)
        if endpoint is None or endpoint.container_id is None:
            raise InfrastructureError(
                f"no running container for `{name}`"
                if name
                else "this project has no service to run commands in",
                code="CONTAINER_NOT_FOUND",
                hint=f"valid names: {', '.join(self.services) or '(none)'}",
                details={"container": name, "valid": list(self.services)},
            )
        return endpoint

    async def exec(self, container: str | None, argv: list[str], *, timeout: float) -> ExecResult:
        """Run `argv` in a service's container."""
        endpoint = self.container_of(container)
        assert self.engine is not None and endpoint.container_id is not None
        return await self.engine.exec(endpoint.container_id, argv, timeout=timeout)

    async def logs_between(self, service: str, start: datetime, end: datetime) -> list[LogLine]:
        """Return a service's log lines written between `start` and `end`."""
        endpoint = self.services.get(service)
        if self.engine is None or endpoint is None or endpoint.container_id is None:
            return []
        try:
            return await self.engine.logs(endpoint.container_id, since=start, until=end)
        except PreflightError:
            return []

    async def log_tail(self, service: str, lines: int) -> list[LogLine]:
        """Return a service's last lines."""
        endpoint = self.services.get(service)
        if self.engine is None or endpoint is None or endpoint.container_id is None:
            return []
        try:
            return await self.engine.logs(endpoint.container_id, tail=lines)
        except PreflightError:
            return []

    async def containers(self) -> list[ContainerInfo]:
        """Inspect every service container now."""
        ids = [e.container_id for e in self.services.values() if e.container_id]
        if self.engine is None or not ids:
            return []
        try:
            return await self.engine.inspect(ids)
        except PreflightError:
            return []

    # -- mock traffic ------------------------------------------------------------------------

    async def mock_entries(self, name: str, since: datetime | None = None) -> list[JournalEntry]:
        """Return what mock `name` received since `since` (here, or from the process serving it)."""
        host = self.mock_host
        if host is not None and host.running():
            entries: list[JournalEntry] = host.entries(name, since)
            return entries
        mock = self.mocks.get(name)
        if mock is None:
            return []
        from preflight_sdk.mocks import fetch_requests
        from preflight_sdk.mocks.admin import read_admin_token

        # With the mocks' admin token the journal comes as recorded: a check of what was sent
        # compares the same values here as in the process that serves the mocks.
        token = read_admin_token(Path(self.loaded.state_root) / ".preflight" / "mocks")
        try:
            fetched = await fetch_requests(
                mock.port, name, since.isoformat() if since else None, False, token=token
            )
        except PreflightError:
            return []
        return list(fetched.requests)


def _env_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()


async def settle(seconds: float = 0.0) -> None:
    """Give log writers a moment (used before collecting logs of a case that just ended)."""
    await anyio.sleep(seconds)
