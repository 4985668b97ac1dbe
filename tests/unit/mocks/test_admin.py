"""Admin endpoints under /_mock/ and `fetch_requests` (reading a journal over HTTP)."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import httpx
import pytest

from preflight_sdk.core.errors import InputError, MockError
from preflight_sdk.mocks import fetch_requests

pytestmark = pytest.mark.anyio

ROUTES = [
    {"method": "GET", "path": "/a", "response": {"body": "a"}},
    {
        "method": "POST",
        "path": "/b/:id",
        "name": "b",
        "when": {"body": {"k": 1}},
        "times": 3,
        "response": {"status": 201},
    },
    {"method": "GET", "path": "/s", "sequence": [{"status": 500}, {"status": 200}]},
]


async def test_health_reports_status_uptime_and_route_count(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=ROUTES) as host:
        await client.get(f"{host.url('pay')}/a")
        data = (await client.get(f"{host.url('pay')}/_mock/health")).json()
        assert data["status"] == "ok"
        assert data["routeCount"] == 3
        assert data["name"] == "pay"
        assert data["port"] == host.port("pay")
        assert data["requestCount"] == 1
        assert isinstance(data["uptime"], int | float) and data["uptime"] >= 0


async def test_requests_endpoint_lists_requests_and_is_not_journaled_itself(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        await client.post(f"{url}/b/1", json={"k": 1})
        await client.get(f"{url}/_mock/health")
        await client.get(f"{url}/_mock/routes")
        data = (await client.get(f"{url}/_mock/requests")).json()
        assert data["count"] == 1
        assert data["dropped"] == 0
        [request] = data["requests"]
        assert request["method"] == "POST"
        assert request["url"].endswith("/b/1")
        assert request["body"] == {"k": 1}
        assert request["headers"]["content-type"] == "application/json"
        assert request["matchedRoute"] == "b"
        assert request["status"] == 201
        assert request["timestamp"].endswith("Z")
        assert len(host.entries("pay")) == 1


async def test_requests_endpoint_filters_by_since_as_duration_or_iso(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        await client.get(f"{url}/a")
        mark = datetime.now(UTC).isoformat()
        await client.get(f"{url}/s")
        assert (await client.get(f"{url}/_mock/requests", params={"since": "30s"})).json()["count"] == 2
        later = (await client.get(f"{url}/_mock/requests", params={"since": mark})).json()
        assert [r["path"] for r in later["requests"]] == ["/s"]
        bad = await client.get(f"{url}/_mock/requests", params={"since": "soon"})
        assert bad.status_code == 400
        assert "since" in bad.json()["error"]


async def test_delete_requests_clears_the_journal(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        await client.get(f"{url}/a")
        cleared = await client.delete(f"{url}/_mock/requests")
        assert cleared.json() == {"message": "cleared"}
        assert (await client.get(f"{url}/_mock/requests")).json()["count"] == 0


async def test_routes_endpoint_describes_every_route_with_hits(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        await client.get(f"{url}/s")
        routes = (await client.get(f"{url}/_mock/routes")).json()["routes"]
        assert routes[0] == {"index": 0, "method": "GET", "path": "/a", "status": 200, "hits": 0}
        assert routes[1] == {
            "index": 1,
            "method": "POST",
            "path": "/b/:id",
            "name": "b",
            "when": {"body": {"k": 1}},
            "status": 201,
            "times": 3,
            "hits": 0,
        }
        assert routes[2] == {
            "index": 2,
            "method": "GET",
            "path": "/s",
            "sequence": [500, 200],
            "loop": False,
            "hits": 1,
        }
        assert host.describe_routes("pay")[2]["hits"] == 1


async def test_unknown_admin_paths_and_methods_are_reported(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        unknown = await client.get(f"{url}/_mock/nope")
        assert unknown.status_code == 404
        assert "GET /_mock/requests" in unknown.json()["endpoints"]
        wrong = await client.put(f"{url}/_mock/health")
        assert wrong.status_code == 405
        assert host.entries("pay") == []


async def test_fetch_requests_reads_and_clears_over_http(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        await client.post(f"{url}/b/7", json={"k": 1})
        await client.get(f"{url}/a?x=1")
        fetched = await fetch_requests(host.port("pay"), "pay", None, clear=True)
        assert fetched.name == "pay"
        assert fetched.port == host.port("pay")
        assert fetched.total_requests == 2
        assert [r.path for r in fetched.requests] == ["/b/7", "/a"]
        assert fetched.requests[0].body == {"k": 1}
        assert fetched.requests[0].params == {"id": "7"}
        assert fetched.requests[1].query == {"x": "1"}
        again = await fetch_requests(host.port("pay"), "pay", None, clear=False)
        assert again.total_requests == 0


async def test_fetch_requests_with_since(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=ROUTES) as host:
        await client.get(f"{host.url('pay')}/a")
        mark = datetime.now(UTC).isoformat()
        await client.get(f"{host.url('pay')}/s")
        fetched = await fetch_requests(host.port("pay"), "pay", mark, clear=False)
        assert [r.path for r in fetched.requests] == ["/s"]
        with pytest.raises(InputError):
            await fetch_requests(host.port("pay"), "pay", "not a time", clear=False)


async def test_fetch_requests_refuses_another_mock_on_the_port(serve) -> None:
    async with serve(other=ROUTES) as host:
        with pytest.raises(MockError) as caught:
            await fetch_requests(host.port("other"), "pay", None, clear=False)
        assert caught.value.code == "MOCKS_NOT_RUNNING"
        assert "mock `other`" in caught.value.message


async def test_fetch_requests_from_a_port_nobody_serves() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(MockError) as caught:
        await fetch_requests(port, "pay", None, clear=False)
    assert caught.value.code == "MOCKS_NOT_RUNNING"
    assert caught.value.details == {"mock": "pay", "port": port}


async def test_why_no_route_matched_travels_over_http_to_another_process(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(pay=ROUTES) as host:
        url = host.url("pay")
        await client.post(f"{url}/b/1", json={"k": 2})  # `when` fails: 404
        await client.post(f"{url}/b/1", json={"k": 1})
        listed = (await client.get(f"{url}/_mock/requests")).json()["requests"]
        assert listed[0]["closestRoutes"][0] == {
            "route": "POST /b/:id",
            "index": 1,
            "name": "b",
            "why": ["body.k: expected 1, got 2"],
        }
        assert "closestRoutes" not in listed[1]
        fetched = await fetch_requests(host.port("pay"), "pay", None, clear=False)
        missed, answered = fetched.requests
        assert missed.closest_routes is not None and missed.closest_routes[0].why == [
            "body.k: expected 1, got 2"
        ]
        assert answered.closest_routes is None


async def _asgi(app: object, method: str, path: str, server: str, client_address: str) -> tuple[int, bytes]:
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": b"",
        "headers": [],
        "server": (server, 9081),
        "client": (client_address, 40000),
    }
    await app(scope, receive, send)  # type: ignore[operator]
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]
    return int(status), body  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/_mock/requests"),
        ("DELETE", "/_mock/requests"),
        ("POST", "/_mock/reset"),
        ("GET", "/_mock/routes"),
    ],
)
async def test_the_admin_endpoints_refuse_a_connection_that_is_not_from_this_machine(
    serve, method: str, path: str
) -> None:
    async with serve(pay=ROUTES) as host:
        app = host._apps["pay"]
        async with httpx.AsyncClient(trust_env=False) as client:
            await client.get(f"{host.url('pay')}/a")
        status, body = await _asgi(app, method, path, server="172.17.0.1", client_address="172.18.0.5")
        assert status == 403 and b"this machine only" in body
        assert len(host.entries("pay")) == 1  # neither emptied nor reset
        status, _ = await _asgi(app, "GET", "/_mock/requests", server="127.0.0.1", client_address="127.0.0.1")
        assert status == 200


async def test_what_the_admin_endpoints_show_goes_through_the_redaction_policy(serve) -> None:
    routes = [
        {"method": "POST", "path": "/c", "when": {"headers": {"X-Api-Key": "k-1234567"}}, "response": {}}
    ]
    async with serve(pay=routes) as host:
        url = host.url("pay")
        async with httpx.AsyncClient(trust_env=False) as client:
            await client.post(f"{url}/c", headers={"X-Api-Key": "k-1234567"}, json={"password": "hunter22"})
            journal = (await client.get(f"{url}/_mock/requests")).text
            described = (await client.get(f"{url}/_mock/routes")).text
    assert "k-1234567" not in journal and "hunter22" not in journal and "[redacted]" in journal
    assert "k-1234567" not in described
