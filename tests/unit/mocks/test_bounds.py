"""What one client can do to a mock over real HTTP: nested bodies, huge bodies, slow request heads."""

from __future__ import annotations

import socket
import time

import anyio
import httpx
import pytest

pytestmark = pytest.mark.anyio

ANY_ROUTE = [{"method": "ANY", "path": "/*", "when": {"body": {"a": 1}}, "response": {"body": {"ok": True}}}]
NESTED = b"[" * 1000 + b"]" * 1000  # 2 KB, 1,000 levels deep


async def test_a_deeply_nested_body_is_journaled_as_marked_text_and_the_journal_still_reads(
    serve, client: httpx.AsyncClient, make_config
) -> None:
    async with serve(m=make_config(ANY_ROUTE)) as host:
        base = host.url("m")
        nested = await client.post(
            f"{base}/deep", content=NESTED, headers={"content-type": "application/json"}
        )
        await client.post(f"{base}/fine", json={"a": 1})
        over_http = await client.get(f"{base}/_mock/requests")
        entries = host.entries("m")
    assert nested.status_code == 404  # answered (no route matched), not a 500
    assert over_http.status_code == 200
    deep = over_http.json()["requests"][0]
    assert deep["bodyEncoding"] == "text" and deep["body"] == NESTED.decode()
    assert "nested deeper than 64" in deep["bodyNote"]
    assert [e.status for e in entries] == [404, 200]


async def test_a_body_over_the_limit_gets_413_and_the_mock_keeps_serving(
    serve, client: httpx.AsyncClient, make_config
) -> None:
    async with serve(m=make_config(ANY_ROUTE, maxBodyBytes=1000)) as host:
        base = host.url("m")
        big = await client.post(f"{base}/x", content=b"x" * 5000)
        small = await client.post(f"{base}/x", json={"a": 1})
        [first, _] = host.entries("m")
    assert big.status_code == 413 and big.json()["limit"] == 1000
    assert small.status_code == 200
    assert first.status == 413 and "maxBodyBytes" in (first.error or "")


async def test_a_request_head_sent_too_slowly_is_cut_off(serve, make_config) -> None:
    async with serve(m=make_config(ANY_ROUTE, headerTimeout="300ms")) as host:
        port = host.port("m")

        def slow_client() -> tuple[bytes, float]:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                began = time.monotonic()
                sock.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\n")  # the head never ends
                data = sock.recv(100)  # b"" once the mock closes the connection
                return data, time.monotonic() - began

        data, waited = await anyio.to_thread.run_sync(slow_client)
    assert data == b"" and 0.2 < waited < 3
