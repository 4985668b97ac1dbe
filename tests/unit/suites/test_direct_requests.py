"""A plain request goes straight on the wire exactly as httpx's client would send and read it.

Each check sends the same request both ways (`DirectRequests` and httpx's client on the same
pool) to a raw socket server, and compares what reached the server and what was read back.
"""

from __future__ import annotations

import gzip
import socket
import threading
from typing import Any

import anyio
import httpx
import pytest
from support.raw_http import RawServer, read_request

from preflight_sdk.config.testfile import RequestStep
from preflight_sdk.suites.yaml.direct import Answer, DirectRequests, _plain_target
from preflight_sdk.suites.yaml.http import HttpSession, send
from preflight_sdk.suites.yaml.transport import LeanTransport
from preflight_sdk.suites.yaml.wire import WirePool

pytestmark = pytest.mark.anyio

_NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"


class _Both:
    """The two ways onto one pool, as `HttpSession` builds them."""

    def __init__(self) -> None:
        self.pool = WirePool()
        self.client = httpx.AsyncClient(transport=LeanTransport(self.pool), timeout=5.0, trust_env=False)
        self.direct = DirectRequests(self.pool, self.client)

    async def aclose(self) -> None:
        await self.client.aclose()


def _recording(seen: list[bytes], answer: bytes = _NO_CONTENT) -> Any:
    def script(sock: socket.socket, head: bytes) -> None:
        data = head
        while True:
            request = read_request(sock, data)
            if not request:
                return
            seen.append(request)
            sock.sendall(answer)
            data = b""

    return script


REQUESTS: list[tuple[str, str, dict[str, str], bytes | None]] = [
    ("GET", "/items/7", {}, None),
    ("GET", "/search?q=a+b&page=2&x=%2F", {"X-Trace": "t-1"}, None),
    ("POST", "/orders", {}, None),  # httpx adds Content-Length: 0 up front
    ("POST", "/orders", {"Content-Type": "application/json"}, b'{"a": 1}'),
    ("PUT", "/a;b=c/~d", {"accept": "application/json", "User-Agent": "mine"}, b"x"),
    ("PATCH", "/p", {"Content-Length": "3"}, b"abc"),
    ("DELETE", "/d", {"Host": "elsewhere.test"}, b"gone"),
    ("GET", "/", {"Connection": "close"}, b""),
    ("OPTIONS", "/o(1)!$'*,:@", {"Transfer-Encoding": "identity"}, None),
]


@pytest.mark.parametrize(("method", "path", "headers", "content"), REQUESTS)
async def test_a_direct_request_reaches_the_server_byte_for_byte_as_httpx_sends_it(
    raw_server: RawServer, method: str, path: str, headers: dict[str, str], content: bytes | None
) -> None:
    seen: list[bytes] = []
    url = raw_server(_recording(seen)) + path
    both = _Both()
    try:
        answer = await both.direct.send(method, url, dict(headers), content, 5.0)
        reply = await both.client.request(method, url, headers=dict(headers), content=content)
    finally:
        await both.aclose()
    assert answer is not None and answer.status == reply.status_code == 204
    direct, through_httpx = seen
    assert direct == through_httpx


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/a/b?c=d",
        "http://example.test/",
        "http://example.test",
        "http://example.test:80/x",
        "http://[::1]:9000/v6",
        "http://h.test/%41%2f?%7e=1",
        "http://h.test/a b",
        "http://h.test/%zz",
        "http://h.test/./x",
        "http://h.test/a/../b",
        "http://h.test/é",
        "http://HOST.test/",
        "http://user:pw@h.test/",
        "http://h.test/x#frag",
        "http://h.test/x?",
        "http://h.test/x?a=<b>",
        "http://h.test/{id}",
        "http://h.test:0/",
        "http://h.test:99999/",
        "https://h.test/",
        "http://h.test/a'b(c)*!",
    ],
)
def test_a_url_goes_direct_only_when_httpx_would_send_it_as_it_is(url: str) -> None:
    where = _plain_target(url)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        assert where is None
        return
    if where is None:
        return  # httpx's client sends it: nothing to compare
    assert (where.host, where.port) == (parsed.host, parsed.port or 80)
    assert where.netloc == parsed.netloc
    assert where.target == parsed.raw_path


def test_urls_httpx_rewrites_are_left_to_httpx() -> None:
    rewritten = [
        "http://h.test/a b",
        "http://h.test/%zz",
        "http://h.test/a/../b",
        "http://h.test/é",
        "http://HOST.test/",
        "http://user:pw@h.test/",
        "http://h.test/x#frag",
        "https://h.test/",
    ]
    assert [url for url in rewritten if _plain_target(url) is not None] == []
    assert _plain_target("http://127.0.0.1:8080/items/1?x=2") is not None


ANSWERS = [
    b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"a": 1}',
    # repeated names in mixed case, joined as httpx joins them
    b"HTTP/1.1 201 Created\r\nX-Tag: one\r\nx-tag: two\r\nContent-Length: 2\r\n\r\nok",
    # a charset other than UTF-8, and bytes that are not UTF-8
    b'HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset="ISO-8859-1"\r\nContent-Length: 4\r\n\r\ncaf\xe9',
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\ncaf\xff",
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=no-such-codec\r\nContent-Length: 2\r\n\r\nhi",
    # a header value that is UTF-8
    b"HTTP/1.1 200 OK\r\nX-Name: J\xc3\xbcrgen\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(gzip.compress(b'{"zipped": true}'))).encode()
    + b"\r\n\r\n"
    + gzip.compress(b'{"zipped": true}'),
]


@pytest.mark.parametrize("answer", ANSWERS)
async def test_a_direct_answer_reads_as_httpx_reads_it(raw_server: RawServer, answer: bytes) -> None:
    url = raw_server(_recording([], answer)) + "/r"
    both = _Both()
    try:
        direct = await both.direct.send("GET", url, {}, None, 5.0)
        reply = await both.client.get(url)
    finally:
        await both.aclose()
    assert direct == Answer(reply.status_code, dict(reply.headers.items()), reply.text)


async def test_a_cookie_set_on_a_direct_answer_goes_with_the_next_request(raw_server: RawServer) -> None:
    seen: list[bytes] = []
    answer = b"HTTP/1.1 200 OK\r\nSet-Cookie: sid=abc; Path=/\r\nContent-Length: 2\r\n\r\nok"
    url = raw_server(_recording(seen, answer))
    session = HttpSession()
    try:
        for path in ("/login", "/me"):
            outcome = await send(session, RequestStep(method="GET", path=path), base_url=url)
            assert outcome.status == 200, outcome.error
    finally:
        await session.aclose()
    first, second = seen
    assert b"cookie:" not in first.lower()
    assert b"\r\nCookie: sid=abc\r\n" in second


async def test_a_cancelled_request_closes_its_connection_so_its_late_answer_is_never_read(
    raw_server: RawServer,
) -> None:
    connections: list[int] = []
    first_closed = threading.Event()

    def script(sock: socket.socket, head: bytes) -> None:
        connections.append(1)
        number = len(connections)
        if number == 1:
            sock.settimeout(2.0)  # answer only after the client gave up, once it closed
            try:
                if sock.recv(1) == b"":
                    first_closed.set()
            except OSError:
                pass
        body = f"c{number}".encode()
        try:
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            read_request(sock)  # a second request on this connection would be answered here
        except OSError:
            return

    url = raw_server(script) + "/x"
    both = _Both()
    try:
        with anyio.move_on_after(0.1) as scope:
            await both.direct.send("GET", url, {}, None, 5.0)
        assert scope.cancelled_caught
        assert both.pool.idle == 0
        # the cancelled exchange closed its socket itself: the server sees the end at once
        assert await anyio.to_thread.run_sync(first_closed.wait, 1.5)
        again = await both.direct.send("GET", url, {}, None, 5.0)
    finally:
        await both.aclose()
    assert again is not None and again.text == "c2"


async def test_a_read_timeout_and_a_refused_connection_are_httpx_errors() -> None:
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        silent = listening.getsockname()[1]
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            closed = unused.getsockname()[1]
        both = _Both()
        try:
            with pytest.raises(httpx.ReadTimeout):
                await both.direct.send("GET", f"http://127.0.0.1:{silent}/", {}, None, 0.2)
            with pytest.raises(httpx.ConnectError) as refused:
                await both.direct.send("GET", f"http://127.0.0.1:{closed}/", {}, None, 2.0)
        finally:
            await both.aclose()
    assert isinstance(refused.value.__cause__, ConnectionRefusedError)
