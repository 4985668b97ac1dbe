"""MockHost lifecycle: bind addresses, ports, conflicts, background serving, stop."""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.request

import anyio
import httpx
import pytest

from preflight_sdk.core.errors import ConfigError, EnvironmentError_, InputError, StateError
from preflight_sdk.mocks import MockHost, find_port_holder

pytestmark = pytest.mark.anyio

OK = [{"path": "/ok", "response": {"body": {"ok": True}}}]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def refuses(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return False
    except OSError:
        return True


async def test_port_zero_gives_the_same_free_port_on_every_bind_address(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(bind_hosts=("127.0.0.1", "127.0.0.2"), a=OK, b=OK) as host:
        assert host.port("a") != host.port("b")
        for name in ("a", "b"):
            port = host.port(name)
            for address in ("127.0.0.1", "127.0.0.2"):
                response = await client.get(f"http://{address}:{port}/ok")
                assert response.json() == {"ok": True}
            assert refuses("127.0.0.3", port)  # not on every interface


async def test_start_returns_setups_and_url_uses_loopback(serve) -> None:
    port = free_port()
    async with serve(fixed=[*OK, *OK]) as host:
        assert host.running()
        assert host.url("fixed").startswith("http://127.0.0.1:")
    host2 = MockHost({"fixed": _config(port)})
    setups = await host2.start()
    try:
        assert [(s.name, s.port, s.status, s.route_count, s.url) for s in setups] == [
            ("fixed", port, "running", 1, f"http://127.0.0.1:{port}")
        ]
    finally:
        await host2.stop()


def _config(port: int, routes: list[dict[str, object]] | None = None):  # type: ignore[no-untyped-def]
    import msgspec

    from preflight_sdk.config.model import MockConfig

    return msgspec.convert({"port": port, "routes": routes if routes is not None else OK}, MockConfig)


async def test_wildcard_bind_addresses_are_refused() -> None:
    for wildcard in ("0.0.0.0", "::", "[::]"):
        with pytest.raises(InputError) as caught:
            MockHost({"m": _config(0)}, bind_hosts=("127.0.0.1", wildcard))
        assert caught.value.code == "INVALID_INPUT"


async def test_port_conflict_names_the_port_and_the_holding_process() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        found = find_port_holder(port)
        assert found is not None and found.pid == os.getpid()
        host = MockHost({"pay": _config(port)})
        with pytest.raises(EnvironmentError_) as caught:
            await host.start()
        error = caught.value
        assert error.code == "PORT_CONFLICT"
        assert str(port) in error.message
        assert f"pid {os.getpid()}" in error.message
        assert error.details is not None
        assert (error.details["port"], error.details["pid"], error.details["mock"]) == (
            port,
            os.getpid(),
            "pay",
        )
        assert "python" in str(error.details["command"])
        assert error.hint is not None and "mocks.pay.port" in error.hint
        assert not host.running()
    finally:
        holder.close()


async def test_when_one_mock_cannot_start_nothing_is_left_running() -> None:
    first = free_port()
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        host = MockHost({"first": _config(first), "second": _config(holder.getsockname()[1])})
        with pytest.raises(EnvironmentError_):
            await host.start()
        assert refuses("127.0.0.1", first)
        assert not host.running()
        assert [a.action for a in await host.stop()] == ["not_running", "not_running"]
    finally:
        holder.close()


async def test_two_mocks_on_the_same_fixed_port_conflict_with_this_process() -> None:
    port = free_port()
    host = MockHost({"a": _config(port), "b": _config(port)})
    with pytest.raises(EnvironmentError_) as caught:
        await host.start()
    assert caught.value.code == "PORT_CONFLICT"
    assert caught.value.details is not None and caught.value.details["mock"] == "b"
    assert refuses("127.0.0.1", port)


async def test_stop_is_idempotent_and_a_host_can_start_again(client: httpx.AsyncClient) -> None:
    host = MockHost({"m": _config(0)})
    await host.start()
    with pytest.raises(StateError):
        await host.start()
    port = host.port("m")
    assert [a.action for a in await host.stop()] == ["stopped"]
    assert [a.action for a in await host.stop()] == ["not_running"]
    assert not host.running()
    assert refuses("127.0.0.1", port)
    assert not any(t.name == "preflight-mocks" and t.is_alive() for t in threading.enumerate())
    await host.start()
    try:
        assert (await client.get(f"{host.url('m')}/ok")).json() == {"ok": True}
    finally:
        await host.stop()


async def test_mocks_answer_while_the_callers_event_loop_is_blocked() -> None:
    host = MockHost({"m": _config(0)})
    await host.start()
    try:
        answers: list[bytes] = []
        url = f"{host.url('m')}/ok"
        fetcher = threading.Thread(
            target=lambda: answers.append(urllib.request.urlopen(url, timeout=5).read())
        )
        fetcher.start()
        deadline = time.monotonic() + 5
        while not answers and time.monotonic() < deadline:  # busy: this loop never yields
            pass
        fetcher.join()
        assert answers == [b'{"ok":true}']
    finally:
        await host.stop()


def test_mocks_keep_serving_between_event_loop_runs_like_notebook_cells() -> None:
    host = MockHost({"m": _config(0, [{"path": "/n", "response": {"body": "{{counter}}"}}])})
    anyio.run(host.start)  # "cell 1": the loop ends, the mocks keep serving
    try:
        url = f"{host.url('m')}/n"
        assert urllib.request.urlopen(url, timeout=5).read() == b"1"
        assert urllib.request.urlopen(url, timeout=5).read() == b"2"
    finally:
        actions = anyio.run(host.stop)  # a later "cell"
    assert [a.action for a in actions] == ["stopped"]


async def test_invalid_routes_are_reported_when_the_host_is_built() -> None:
    routes = [
        {"path": "no-slash", "response": {"status": 200}},
        {"path": "/d", "response": {"delay": "soon"}},
    ]
    with pytest.raises(ConfigError) as caught:
        MockHost({"m": _config(0, routes)})
    assert [p.path for p in caught.value.problems] == ["$.mocks.m.routes[0].path", "$.mocks.m.routes[1]"]


async def test_unknown_bind_address_is_an_environment_error() -> None:
    host = MockHost({"m": _config(0)}, bind_hosts=("192.0.2.77",))
    with pytest.raises(EnvironmentError_) as caught:
        await host.start()
    assert "192.0.2.77" in caught.value.message
    assert not host.running()
