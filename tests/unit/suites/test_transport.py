"""The runner's HTTP/1.1 transport on the wire: framing, keep-alive, stale connections, errors.

A raw socket server answers with scripted bytes, so each framing case is exactly what a real
server can send; the stub (uvicorn) covers the ordinary path.
"""

from __future__ import annotations

import gzip
import socket
import time

import httpx
import pytest
from support.raw_http import RawServer
from support.stub import Stub

from preflight_sdk.suites.yaml.transport import LeanTransport

pytestmark = pytest.mark.anyio


def client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=LeanTransport(), timeout=5.0, trust_env=False)


async def test_chunked_and_gzip_bodies_are_decoded(raw_server: RawServer) -> None:
    packed = gzip.compress(b'{"ok": true}')

    def script(sock: socket.socket, request: bytes) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        body = (
            b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (packed[:5], packed[5:])) + b"0\r\n\r\n"
        )
        sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + body)

    url = raw_server(script)
    async with client() as http:
        reply = await http.get(url + "/x")
    assert reply.status_code == 200 and reply.json() == {"ok": True}
    assert reply.http_version == "HTTP/1.1" and reply.reason_phrase == "OK"


async def test_a_body_delimited_by_the_connection_closing(raw_server: RawServer) -> None:
    def script(sock: socket.socket, request: bytes) -> None:
        sock.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")
        sock.shutdown(socket.SHUT_WR)

    url = raw_server(script)
    async with client() as http:
        reply = await http.get(url)
        again = await http.get(url)  # a new connection: the first was closed
    assert (reply.text, again.text) == ("until the end", "until the end")


async def test_a_truncated_body_is_a_protocol_error(raw_server: RawServer) -> None:
    def script(sock: socket.socket, request: bytes) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
        sock.shutdown(socket.SHUT_WR)

    url = raw_server(script)
    async with client() as http:
        with pytest.raises(httpx.RemoteProtocolError, match="before the response was complete"):
            await http.get(url)


async def test_a_kept_alive_connection_the_server_closed_is_retried_once(
    raw_server: RawServer,
) -> None:
    connections: list[int] = []

    def script(sock: socket.socket, request: bytes) -> None:
        connections.append(1)
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        sock.close()  # closes without saying so (no `Connection: close`)

    url = raw_server(script)
    async with client() as http:
        first = await http.post(url, content=b"one")
        second = await http.post(url, content=b"two")  # reuses the dead connection, then retries
    assert (first.text, second.text) == ("ok", "ok")
    assert len(connections) == 2


async def test_interim_responses_are_skipped(raw_server: RawServer) -> None:
    def script(sock: socket.socket, request: bytes) -> None:
        # the interim answer and the start of the final one in one packet, the rest later
        sock.sendall(
            b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
            b"HTTP/1.1 201 Created\r\nContent-Length: 4\r\nX-Final: yes\r\n\r\nd"
        )
        time.sleep(0.05)
        sock.sendall(b"one")

    url = raw_server(script)
    async with client() as http:
        reply = await http.get(url)
    assert (reply.status_code, reply.reason_phrase, reply.text) == (201, "Created", "done")
    assert (reply.headers.get("x-final"), reply.headers.get("link")) == ("yes", None)


async def test_a_malformed_response_is_a_protocol_error(raw_server: RawServer) -> None:
    def script(sock: socket.socket, request: bytes) -> None:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")

    url = raw_server(script)
    async with client() as http:
        with pytest.raises(httpx.RemoteProtocolError, match="malformed response"):
            await http.get(url)


async def test_the_request_goes_out_as_httpx_built_it(raw_server: RawServer) -> None:
    seen: list[bytes] = []

    def script(sock: socket.socket, request: bytes) -> None:
        while len(request.split(b"\r\n\r\n", 1)[1]) < 7:
            request += sock.recv(65536)
        seen.append(request)
        sock.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")

    url = raw_server(script)
    async with client() as http:
        reply = await http.put(url + "/a%20b/c?x=1&y=%2F", content=b"payload", headers={"X-Custom": "v"})
    assert reply.status_code == 204 and reply.content == b""
    [request] = seen
    head, body = request.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    assert lines[0] == b"PUT /a%20b/c?x=1&y=%2F HTTP/1.1"
    assert b"X-Custom: v" in lines and b"Content-Length: 7" in lines
    assert any(line.lower().startswith(b"host: 127.0.0.1:") for line in lines)
    assert body == b"payload"


async def test_keep_alive_reuses_one_connection_and_head_has_no_body(stub: Stub) -> None:
    async with client() as http:
        for _ in range(5):
            assert (await http.get(stub.url + "/doc")).status_code == 200
        transport = http._transport
        assert isinstance(transport, LeanTransport)
        assert transport.pool.idle == 1
        head = await http.head(stub.url + "/doc")
        assert head.status_code == 200 and head.content == b""
        assert int(head.headers["content-length"]) > 0
        assert (await http.get(stub.url + "/doc")).json()["id"] == 42


async def test_connection_refused_and_timeouts_are_httpx_errors(stub: Stub) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
        async with client() as http:
            with pytest.raises(httpx.ConnectError) as refused:
                await http.get(f"http://127.0.0.1:{closed}/")
            with pytest.raises(httpx.ReadTimeout):
                await http.get(stub.url + "/slow?ms=1000", timeout=0.1)
            assert (await http.get(stub.url + "/doc")).status_code == 200  # the pool still works
    chain: list[BaseException] = []
    cause: BaseException | None = refused.value
    while cause is not None:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    assert any(isinstance(c, ConnectionRefusedError) for c in chain)
