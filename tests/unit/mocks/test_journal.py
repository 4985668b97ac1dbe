"""The request journal: bodies of every kind, order under load, bounds, windows and clearing."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import anyio
import httpx
import pytest

from preflight_sdk.core.errors import InputError, MockError
from preflight_sdk.mocks import MockHost

pytestmark = pytest.mark.anyio

ANY_ROUTE = [{"method": "ANY", "path": "/*", "response": {"body": {"ok": True}}}]


async def test_json_body_is_recorded_as_its_value(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=ANY_ROUTE) as host:
        sent = b'{"items":[{"sku":"A","qty":2}],"total":9.5}'
        await client.post(
            f"{host.url('m')}/orders?a=1", content=sent, headers={"content-type": "application/json"}
        )
        [entry] = host.entries("m")
        assert entry.body == {"items": [{"sku": "A", "qty": 2}], "total": 9.5}
        assert entry.body_encoding == "json"
        assert entry.body_size == len(sent)
        assert entry.form is None


async def test_urlencoded_form_is_recorded_with_its_fields(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=ANY_ROUTE) as host:
        await client.post(f"{host.url('m')}/login", data={"user": "ann", "pass": "s3cret"})
        await client.post(
            f"{host.url('m')}/tags",
            content=b"t=a&t=b&empty=",
            headers={"content-type": "application/x-www-form-urlencoded; charset=utf-8"},
        )
        login, tags = host.entries("m")
        assert login.form == {"user": "ann", "pass": "s3cret"}
        assert login.body == "user=ann&pass=s3cret"
        assert login.body_encoding == "text"
        assert tags.form == {"t": ["a", "b"], "empty": ""}


async def test_text_body_is_recorded_as_text_even_when_it_looks_like_json(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(m=ANY_ROUTE) as host:
        await client.post(
            f"{host.url('m')}/log",
            content="line one\nzwei ü".encode(),
            headers={"content-type": "text/plain; charset=utf-8"},
        )
        await client.post(f"{host.url('m')}/log", content=b"42", headers={"content-type": "text/plain"})
        text, number = host.entries("m")
        assert (text.body, text.body_encoding) == ("line one\nzwei ü", "text")
        assert (number.body, number.body_encoding) == ("42", "text")


async def test_binary_body_is_recorded_as_base64_with_a_flag(serve, client: httpx.AsyncClient) -> None:
    payload = bytes(range(256))
    async with serve(m=ANY_ROUTE) as host:
        await client.put(
            f"{host.url('m')}/blob", content=payload, headers={"content-type": "application/octet-stream"}
        )
        [entry] = host.entries("m")
        assert entry.body_encoding == "base64"
        assert base64.b64decode(entry.body) == payload
        assert entry.body_size == 256


async def test_a_request_without_body_records_null(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=ANY_ROUTE) as host:
        await client.get(f"{host.url('m')}/nothing")
        [entry] = host.entries("m")
        assert entry.body is None
        assert entry.body_encoding is None
        assert entry.body_size == 0


async def test_entry_holds_method_url_query_headers_route_status_and_times(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [{"method": "PATCH", "path": "/items/:id", "name": "patch-item", "response": {"status": 202}}]
    async with serve(m=routes) as host:
        before = datetime.now(UTC)
        await client.patch(
            f"{host.url('m')}/items/5?tag=a&tag=b&page=2", headers={"X-Trace": "abc"}, json=[1]
        )
        after = datetime.now(UTC)
        [entry] = host.entries("m")
        assert entry.method == "PATCH"
        assert entry.url == f"http://127.0.0.1:{host.port('m')}/items/5?tag=a&tag=b&page=2"
        assert entry.path == "/items/5"
        assert entry.query == {"tag": ["a", "b"], "page": "2"}
        assert entry.headers["x-trace"] == "abc"
        assert entry.matched_route == "patch-item"
        assert entry.route_index == 0
        assert entry.status == 202
        moment = datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00"))
        assert before - timedelta(milliseconds=1) <= moment <= after
        assert abs(entry.epoch_ms - moment.timestamp() * 1000) < 1
        assert entry.duration_ms is not None and 0 <= entry.duration_ms < 5000


async def test_200_parallel_requests_are_all_journaled_in_timestamp_order(serve) -> None:
    async with serve(m=ANY_ROUTE) as host:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(timeout=30, limits=limits, trust_env=False) as client:

            async def one(n: int) -> None:
                response = await client.post(f"{host.url('m')}/p/{n}", json={"n": n})
                assert response.status_code == 200

            async with anyio.create_task_group() as group:
                for n in range(200):
                    group.start_soon(one, n)
        entries = host.entries("m")
        assert len(entries) == 200
        assert host.request_count("m") == 200
        assert sorted(e.body["n"] for e in entries) == list(range(200))
        assert {e.path for e in entries} == {f"/p/{n}" for n in range(200)}
        stamps = [e.epoch_ms for e in entries]
        assert stamps == sorted(stamps)
        assert all(e.status == 200 for e in entries)


async def test_journal_is_bounded_and_counts_what_it_dropped(
    serve, client: httpx.AsyncClient, make_config
) -> None:
    async with serve(m=make_config(ANY_ROUTE, journalLimit=5)) as host:
        for n in range(8):
            await client.get(f"{host.url('m')}/n/{n}")
        result = host.requests("m")
        [mock] = result.mocks
        assert [e.path for e in mock.requests] == [f"/n/{n}" for n in range(3, 8)]
        assert mock.dropped == 3
        assert mock.total_requests == 5
        assert host.request_count("m") == 8


async def test_requests_since_a_moment_and_clear(serve, client: httpx.AsyncClient) -> None:
    async with serve(a=ANY_ROUTE, b=ANY_ROUTE) as host:
        await client.get(f"{host.url('a')}/old")
        mark = datetime.now(UTC)
        await client.get(f"{host.url('a')}/new")
        await client.get(f"{host.url('b')}/other")
        recent = host.requests("a", since=mark.isoformat())
        assert [e.path for e in recent.mocks[0].requests] == ["/new"]
        assert [e.path for e in host.entries("a", since=mark)] == ["/new"]
        everything = host.requests(since="1m", clear=True)
        assert [(m.name, m.total_requests) for m in everything.mocks] == [("a", 2), ("b", 1)]
        assert [(m.name, m.total_requests) for m in host.requests().mocks] == [("a", 0), ("b", 0)]


async def test_requests_result_has_the_wire_shape(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=ANY_ROUTE) as host:
        await client.post(f"{host.url('m')}/x", json={"a": 1})
        data = host.requests().to_dict()
        [mock] = data["mocks"]
        assert {"name", "port", "totalRequests", "requests"} <= set(mock)
        request = mock["requests"][0]
        assert {"method", "url", "body", "headers", "timestamp", "status", "epochMs", "bodyEncoding"} <= set(
            request
        )


async def test_requests_for_an_unknown_mock_lists_the_valid_names(serve) -> None:
    async with serve(alpha=ANY_ROUTE, beta=ANY_ROUTE) as host:
        with pytest.raises(MockError) as caught:
            host.requests("gamma")
        assert caught.value.code == "MOCK_NOT_FOUND"
        assert caught.value.details == {"mock": "gamma", "valid": ["alpha", "beta"]}
        assert caught.value.hint is not None and "alpha, beta" in caught.value.hint
        with pytest.raises(InputError):
            host.requests(since="yesterday-ish")


async def test_requests_before_start_says_the_mocks_are_not_running(make_config) -> None:
    host = MockHost({"m": make_config(ANY_ROUTE)})
    with pytest.raises(MockError) as caught:
        host.requests()
    assert caught.value.code == "MOCKS_NOT_RUNNING"
    with pytest.raises(MockError) as not_running:
        host.port("m")
    assert not_running.value.code == "MOCKS_NOT_RUNNING"
    assert host.request_count("m") == 0
    assert host.entries("m") == []


async def test_the_journal_can_still_be_read_after_stop(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=ANY_ROUTE) as host:
        await client.get(f"{host.url('m')}/kept")
    assert [e.path for e in host.entries("m")] == ["/kept"]
    assert host.requests("m").mocks[0].total_requests == 1


async def test_large_bodies_are_cut_in_the_journal_but_matched_whole(
    serve, client: httpx.AsyncClient
) -> None:
    big = b"x" * (300 * 1024) + b"END"
    routes = [
        {"method": "POST", "path": "/up", "when": {"body": {"endsWith": "END"}}, "response": {"status": 201}}
    ]
    async with serve(m=routes) as host:
        response = await client.post(
            f"{host.url('m')}/up", content=big, headers={"content-type": "text/plain"}
        )
        assert response.status_code == 201
        [entry] = host.entries("m")
        assert entry.body_size == len(big)
        assert entry.body_truncated is True
        assert len(entry.body) == 256 * 1024
