"""Fixtures for the mock tests: build `MockConfig`s from plain data and serve them for real."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import msgspec
import pytest

from preflight_sdk.config.model import MockConfig
from preflight_sdk.mocks import MockHost


def mock_config(routes: list[dict[str, Any]] | None = None, **fields: Any) -> MockConfig:
    """Return a MockConfig from e2e.yaml-shaped data (camelCase keys), on a free port by default."""
    data: dict[str, Any] = {"port": 0, "routes": routes or [], **fields}
    return msgspec.convert(data, MockConfig)


Serve = Callable[..., AbstractAsyncContextManager[MockHost]]


@pytest.fixture
def serve() -> Serve:
    """`async with serve(name=config_or_routes, ...) as host:` starts a MockHost and stops it after."""

    @asynccontextmanager
    async def run(bind_hosts: tuple[str, ...] = ("127.0.0.1",), **mocks: Any) -> AsyncIterator[MockHost]:
        configs = {
            name: value if isinstance(value, MockConfig) else mock_config(value)
            for name, value in mocks.items()
        }
        host = MockHost(configs, bind_hosts=bind_hosts)
        await host.start()
        try:
            yield host
        finally:
            await host.stop()

    return run


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10.0, trust_env=False) as http:
        yield http


@pytest.fixture
def make_config() -> Callable[..., MockConfig]:
    """`make_config(routes, proxy=..., journalLimit=...)` → MockConfig."""
    return mock_config
