"""setup and status on an engine of another machine (the fake, with a remote address)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.lifecycle.mockhost import address as mock_address
from preflight_sdk.lifecycle.session.state import read_state

pytestmark = pytest.mark.anyio

REMOTE = "198.51.100.20"  # TEST-NET-2: the engine's host
PROJECT = """
project: {name: far}
engine: {mockHost: "127.0.0.1"}
services:
  api:
    build: {image: "busybox:test"}
    container:
      ports: ["0:8080"]
      healthcheck: {path: /health}
      environment: {PAY: "{{mocks.pay.url}}"}
  db:
    build: {image: "busybox:test"}
    container: {ports: ["0:5432"], healthcheck: {tcp: 5432}}
mocks:
  pay:
    port: 0
    routes: [{method: GET, path: /x, response: {status: 200}}]
"""


async def test_ports_are_probed_and_shown_at_the_engines_address_and_mocks_at_mock_host(
    make_project: Callable[..., Path],
) -> None:
    async with FakeEngine(images=["busybox:test"], address=REMOTE, routable=False) as engine:
        engine.behave("api", Behaviour(ready_after=1))
        engine.behave("db", Behaviour(ready_after=1))
        project = Project.open(make_project(PROJECT), engine=engine)
        try:
            result = await project.setup()
            by_name = {s.name: s for s in result.services}
            port = by_name["api"].ports[0].host
            assert by_name["api"].url == f"http://{REMOTE}:{port}"
            # Container IPs of another machine are never probed: the TCP check goes to the published port.
            assert set(engine.probed_hosts) == {REMOTE}
            assert by_name["db"].readiness.target.startswith(REMOTE)
            specs = {c.spec.labels["preflight.service"]: c.spec for c in engine.containers.values()}
            assert list(specs["api"].add_hosts) == [("pay", "127.0.0.1")]
            status = await project.status()
            assert {s.name: s.url for s in status.services} == {
                "api": f"http://{REMOTE}:{port}",
                "db": f"http://{REMOTE}:{by_name['db'].ports[0].host}",
            }
            assert status.mocks[0].url.startswith("http://127.0.0.1:")
        finally:
            await project.clean()


async def test_a_remote_engine_without_a_way_back_to_the_mocks_is_refused_and_nothing_is_left(
    make_project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mock_address, "route_address", lambda host: "127.0.0.1")
    config = PROJECT.replace('engine: {mockHost: "127.0.0.1"}\n', "")
    async with FakeEngine(images=["busybox:test"], address=REMOTE, routable=False) as engine:
        project = Project.open(make_project(config), engine=engine)
        with pytest.raises(PreflightError) as caught:
            await project.setup()
        assert caught.value.code == "UNSUPPORTED_ON_ENGINE"
        assert "engine.mockHost" in (caught.value.hint or "")
        assert not [c for c in engine.containers.values() if c.running]
        state = read_state(project.path)
        assert state is None or state.state != "running"
        await project.clean()


async def test_a_port_published_on_the_remote_engines_loopback_is_refused_before_anything_starts(
    make_project: Callable[..., Path],
) -> None:
    config = """
    project: {name: far}
    services:
      api:
        build: {image: "busybox:test"}
        container: {ports: ["127.0.0.1:0:80"]}
    """
    async with FakeEngine(images=["busybox:test"], address=REMOTE, routable=False) as engine:
        project = Project.open(make_project(config), engine=engine)
        with pytest.raises(PreflightError) as caught:
            await project.setup()
        assert caught.value.code == "UNSUPPORTED_ON_ENGINE"
        assert "`0:80`" in (caught.value.hint or "") and REMOTE in caught.value.message
        assert not engine.containers
        await project.clean()
    # The same port on an engine of this machine starts.
    async with FakeEngine(images=["busybox:test"]) as local:
        project = Project.open(make_project(config, name="near"), engine=local)
        try:
            await project.setup()
            assert len(local.containers) == 1
        finally:
            await project.clean()
