"""Scenarios: sequences, loops, `times`, reset, delays, faults and proxies, over real HTTP."""

from __future__ import annotations

import socket
import time

import anyio
import httpx
import pytest

from preflight_sdk.mocks import MockHost

pytestmark = pytest.mark.anyio


def seq(*statuses: int, loop: bool = False, path: str = "/pay") -> dict[str, object]:
    return {
        "method": "POST",
        "path": path,
        "sequence": [{"status": s, "body": {"attempt": "{{counter}}", "status": s}} for s in statuses],
        "loop": loop,
    }


async def test_sequence_plays_500_500_then_200_in_order_and_the_last_repeats(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(m=[seq(500, 500, 200)]) as host:
        url = f"{host.url('m')}/pay"
        statuses = [(await client.post(url)).status_code for _ in range(5)]
        assert statuses == [500, 500, 200, 200, 200]
        assert [e.status for e in host.entries("m")] == statuses


async def test_sequence_with_loop_starts_over(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=[seq(201, 202, 203, loop=True)]) as host:
        url = f"{host.url('m')}/pay"
        assert [(await client.post(url)).status_code for _ in range(7)] == [201, 202, 203, 201, 202, 203, 201]


async def test_times_lets_later_routes_answer_once_used_up(serve, client: httpx.AsyncClient) -> None:
    routes = [
        {"path": "/token", "times": 2, "response": {"body": "fresh"}},
        {"path": "/token", "response": {"status": 429, "body": "used up"}},
    ]
    async with serve(m=routes) as host:
        url = f"{host.url('m')}/token"
        answers = [((r := await client.get(url)).status_code, r.text) for _ in range(4)]
        assert answers == [(200, "fresh"), (200, "fresh"), (429, "used up"), (429, "used up")]


async def test_times_exhausted_without_another_route_explains_it_in_the_404(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(m=[{"path": "/once", "times": 1, "response": {"body": "x"}}]) as host:
        url = f"{host.url('m')}/once"
        assert (await client.get(url)).status_code == 200
        miss = await client.get(url)
        assert miss.status_code == 404
        assert miss.json()["closestRoutes"][0]["why"] == ["route already answered its 1 time(s) (`times: 1`)"]


async def test_reset_endpoint_restarts_sequences_counters_times_and_the_journal(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [seq(500, 200), {"path": "/once", "times": 1, "response": {"body": "{{counter}}"}}]
    async with serve(m=routes) as host:
        url = host.url("m")
        assert (await client.post(f"{url}/pay")).status_code == 500
        assert (await client.post(f"{url}/pay")).status_code == 200
        assert (await client.get(f"{url}/once")).status_code == 200
        assert (await client.get(f"{url}/once")).status_code == 404
        reset = await client.post(f"{url}/_mock/reset")
        assert reset.json() == {"message": "reset"}
        assert host.entries("m") == []
        assert (await client.post(f"{url}/pay")).status_code == 500
        assert (await client.get(f"{url}/once")).json() == 1
        assert len(host.entries("m")) == 2


async def test_a_run_reset_keeps_the_journal_but_restarts_sequences_counters_and_times(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [seq(500, 200), {"path": "/once", "times": 1, "response": {"body": "{{counter}}"}}]
    async with serve(m=routes) as host:
        url = host.url("m")
        assert (await client.post(f"{url}/pay")).status_code == 500
        assert (await client.post(f"{url}/pay")).status_code == 200
        assert (await client.get(f"{url}/once")).json() == 1
        reset = await client.post(f"{url}/_mock/reset", params={"keepJournal": "true"})
        assert reset.json() == {"message": "reset"}
        assert len(host.entries("m")) == 3  # what earlier runs sent is still there to read
        assert (await client.post(f"{url}/pay")).status_code == 500
        assert (await client.get(f"{url}/once")).json() == 1
        host.reset(keep_journal=True)
        assert (await client.post(f"{url}/pay")).status_code == 500
        assert len(host.entries("m")) == 6


async def test_host_reset_of_one_mock_leaves_the_others(serve, client: httpx.AsyncClient) -> None:
    async with serve(a=[seq(500, 200)], b=[seq(500, 200)]) as host:
        for name in ("a", "b"):
            await client.post(f"{host.url(name)}/pay")
        host.reset("a")
        assert (await client.post(f"{host.url('a')}/pay")).status_code == 500
        assert (await client.post(f"{host.url('b')}/pay")).status_code == 200
        assert host.request_count("a") == 1
        assert host.request_count("b") == 2


async def test_delay_holds_the_answer(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=[{"path": "/slow", "response": {"delay": "300ms", "body": "late"}}]) as host:
        began = time.perf_counter()
        response = await client.get(f"{host.url('m')}/slow")
        elapsed = time.perf_counter() - began
        assert response.text == "late"
        assert 0.29 <= elapsed < 2.0
        assert host.entries("m")[0].duration_ms is not None
        assert host.entries("m")[0].duration_ms >= 290  # type: ignore[operator]


async def test_fault_reset_closes_the_connection_without_a_response(serve, client: httpx.AsyncClient) -> None:
    routes = [{"path": "/boom", "response": {"fault": "reset"}}, {"path": "/ok", "response": {"body": "ok"}}]
    async with serve(m=routes) as host:
        with pytest.raises(httpx.TransportError) as caught:
            await client.get(f"{host.url('m')}/boom")
        assert isinstance(caught.value, httpx.ReadError | httpx.RemoteProtocolError)
        assert (await client.get(f"{host.url('m')}/ok")).text == "ok"
        boom = host.entries("m")[0]
        assert boom.fault == "reset"
        assert boom.status is None


async def test_fault_reset_is_seen_as_a_reset_by_a_raw_socket(serve) -> None:
    async with serve(m=[{"path": "/boom", "response": {"fault": "reset"}}]) as host:

        def exchange() -> bytes | str:
            with socket.create_connection(("127.0.0.1", host.port("m")), timeout=5) as sock:
                sock.sendall(b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
                try:
                    return sock.recv(100)
                except ConnectionResetError:
                    return "reset"

        assert await anyio.to_thread.run_sync(exchange) == "reset"


async def test_fault_timeout_never_answers_and_the_client_times_out(serve) -> None:
    async with serve(m=[{"path": "/hang", "response": {"fault": "timeout"}}]) as host:
        async with httpx.AsyncClient(timeout=0.3, trust_env=False) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"{host.url('m')}/hang")
        entry = host.entries("m")[0]
        assert entry.fault == "timeout"
        assert entry.status is None


async def test_stop_returns_promptly_while_a_client_waits_on_a_timeout_fault() -> None:
    import msgspec

    from preflight_sdk.config.model import MockConfig

    config = msgspec.convert(
        {"port": 0, "routes": [{"path": "/hang", "response": {"fault": "timeout"}}]}, MockConfig
    )
    host = MockHost({"m": config})
    await host.start()
    outcome: list[BaseException] = []
    arrived = anyio.Event()

    async def wait_forever() -> None:
        async with httpx.AsyncClient(timeout=30, trust_env=False) as client:
            try:
                await client.get(f"{host.url('m')}/hang")
            except httpx.HTTPError as exc:
                outcome.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(wait_forever)
        with anyio.fail_after(5):
            while host.request_count("m") == 0:
                await anyio.sleep(0.01)
            arrived.set()
            began = time.perf_counter()
            actions = await host.stop()
            stopped_in = time.perf_counter() - began
    assert [a.action for a in actions] == ["stopped"]
    assert stopped_in < 3.0
    assert len(outcome) == 1
    assert isinstance(outcome[0], httpx.TransportError)


async def test_stop_cuts_a_long_delay_short() -> None:
    import msgspec

    from preflight_sdk.config.model import MockConfig

    config = msgspec.convert(
        {"port": 0, "routes": [{"path": "/slow", "response": {"delay": "60s"}}]}, MockConfig
    )
    host = MockHost({"m": config})
    await host.start()
    async with anyio.create_task_group() as group:

        async def call() -> None:
            async with httpx.AsyncClient(timeout=30, trust_env=False) as client:
                with pytest.raises(httpx.TransportError):
                    await client.get(f"{host.url('m')}/slow")

        group.start_soon(call)
        with anyio.fail_after(5):
            while host.request_count("m") == 0:
                await anyio.sleep(0.01)
            await host.stop()


async def test_route_proxy_relays_status_headers_and_body_of_another_mock(
    serve, client: httpx.AsyncClient, make_config
) -> None:
    upstream_routes = [
        {
            "method": "POST",
            "path": "/v1/charge/:id",
            "response": {
                "status": 202,
                "headers": {"X-Upstream": "yes"},
                "body": {
                    "charged": "{{request.params.id}}",
                    "q": "{{request.query.x}}",
                    "got": "{{request.body}}",
                },
            },
        }
    ]
    async with serve(up=upstream_routes) as upstream:
        front = make_config(
            [
                {
                    "method": "POST",
                    "path": "/v1/*",
                    "response": {
                        "proxy": upstream.url("up") + "/",
                        "headers": {"X-Via": "mock-{{counter}}", "X-Upstream": "overridden"},
                    },
                }
            ]
        )
        async with serve(front=front) as host:
            response = await client.post(f"{host.url('front')}/v1/charge/9?x=1", json={"amount": 5})
            assert response.status_code == 202
            assert response.headers["x-upstream"] == "overridden"  # listed headers win
            assert response.headers["x-via"] == "mock-1"
            assert len(response.headers.get_list("date")) == 1
            assert response.json() == {"charged": "9", "q": "1", "got": {"amount": 5}}
            entry = host.entries("front")[0]
            assert entry.proxied_to == f"{upstream.url('up')}/v1/charge/9?x=1"
            assert entry.status == 202
        [seen] = upstream.entries("up")
        assert seen.body == {"amount": 5}
        assert seen.path == "/v1/charge/9"


async def test_mock_level_proxy_forwards_only_unmatched_requests(
    serve, client: httpx.AsyncClient, make_config
) -> None:
    async with serve(
        real=[{"path": "/users/:id", "response": {"body": {"real": "{{request.params.id}}"}}}]
    ) as up:
        front = make_config(
            [{"path": "/users/1", "response": {"body": {"stubbed": True}}}], proxy=up.url("real")
        )
        async with serve(front=front) as host:
            url = host.url("front")
            assert (await client.get(f"{url}/users/1")).json() == {"stubbed": True}
            assert (await client.get(f"{url}/users/2")).json() == {"real": "2"}
            missing = await client.get(f"{url}/nothing")
            assert missing.status_code == 404
            assert missing.json()["mock"] == "real"  # the upstream's own 404, relayed
            assert [e.proxied_to is not None for e in host.entries("front")] == [False, True, True]


async def test_proxy_to_an_unreachable_upstream_answers_502_and_journals_why(
    serve, client: httpx.AsyncClient
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    async with serve(m=[{"path": "/x", "response": {"proxy": f"http://127.0.0.1:{dead}"}}]) as host:
        response = await client.get(f"{host.url('m')}/x")
        assert response.status_code == 502
        assert response.json()["error"] == "proxy failed"
        entry = host.entries("m")[0]
        assert entry.status == 502
        assert entry.error is not None and "ConnectError" in entry.error
