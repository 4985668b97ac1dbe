"""A lean HTTP/1.1 transport for the test runner's httpx client (plain `http://` only).

httpx's default async stack (httpcore, h11, anyio stream wrappers) costs most of a millisecond per
request on a keep-alive loopback connection: more than the rest of a YAML case altogether. This
transport parses responses with httptools (C, already a dependency of the mock server), keeps
idle connections per host, and leaves everything above the wire to httpx (redirects, content
decoding, text encodings). `https://` requests go to httpx's own transport.

Semantics kept from httpx: connect/read/write timeouts from the request's `timeout` extension
(raising `ConnectTimeout`, `ReadTimeout`, `WriteTimeout`), `ConnectError` with the socket error
as its cause, a reused connection that the server closed meanwhile is retried once on a new one,
and a connection is reused only when the response allows it (keep-alive, body fully read).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any

import anyio
import httptools
import httpx
from anyio.abc import SocketStream

__all__ = ["LeanTransport"]

_NO_BODY_STATUS = {204, 304}
_MAX_IDLE_PER_HOST = 32
_READ_SIZE = 65_536


CLOSED_WITHOUT_ANSWER = "the server accepted the request and closed the connection without answering"
"""A fresh connection ended before any byte of a response: the server was reached, then gave up
(typically its process crashed, or its handler died, while handling the request)."""
_CLOSED_EARLY = "the server closed the connection before the response was complete"


class _StaleConnection(Exception):
    """A reused connection was closed by the server before it answered."""


class _Response:
    """httptools callbacks: collect one response."""

    def __init__(self) -> None:
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.reason = b""
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.status = 0
        self.version = "1.1"
        self.parser: Any = None

    def on_message_begin(self) -> None:
        # A 1xx answer and the final one can arrive in one read: each message starts afresh.
        self.headers.clear()
        self.body.clear()
        self.reason = b""
        self.headers_done = False
        self.complete = False

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.headers_done = True
        # llhttp forgets these once the message is complete (or the next one began): read them now.
        self.keep_alive = bool(self.parser.should_keep_alive())
        self.status = int(self.parser.get_status_code())
        self.version = str(self.parser.get_http_version())

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


class LeanTransport(httpx.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 over anyio streams, parsed by httptools (see the module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[SocketStream]] = defaultdict(list)
        self._fallback: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` and return the whole response (its body already read)."""
        if request.url.scheme != "http":
            if self._fallback is None:
                self._fallback = httpx.AsyncHTTPTransport(trust_env=False)
            return await self._fallback.handle_async_request(request)
        key = (request.url.host, request.url.port or 80)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        payload = await _serialise(request)
        while True:
            reused = bool(self._idle[key])
            stream = (
                self._idle[key].pop() if reused else await _connect(request, key, timeouts.get("connect"))
            )
            try:
                return await self._exchange(request, key, stream, payload, timeouts, reused)
            except _StaleConnection:
                continue  # only a reused connection raises it: the next try opens a new one

    async def _exchange(
        self,
        request: httpx.Request,
        key: tuple[str, int],
        stream: SocketStream,
        payload: bytes,
        timeouts: dict[str, float | None],
        reused: bool,
    ) -> httpx.Response:
        keep = False
        try:
            try:
                with anyio.fail_after(timeouts.get("write")):
                    await stream.send(payload)
            except TimeoutError as exc:
                raise httpx.WriteTimeout("timed out sending the request", request=request) from exc
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                if reused:
                    raise _StaleConnection from exc
                raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from exc
            response = await self._receive(request, stream, timeouts.get("read"), reused)
            keep = (
                response.complete
                and response.keep_alive
                and request.method != "HEAD"
                and len(self._idle[key]) < _MAX_IDLE_PER_HOST
            )
        finally:
            if keep:
                self._idle[key].append(stream)
            else:
                with anyio.CancelScope(shield=True), contextlib.suppress(OSError, anyio.BrokenResourceError):
                    await stream.aclose()
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=httpx.ByteStream(b"".join(response.body)),
            extensions={
                "http_version": f"HTTP/{response.version}".encode(),
                "reason_phrase": response.reason,
            },
        )

    async def _receive(
        self, request: httpx.Request, stream: SocketStream, timeout: float | None, reused: bool
    ) -> _Response:
        response = _Response()
        parser = httptools.HttpResponseParser(response)
        response.parser = parser
        received = False
        try:
            with anyio.fail_after(timeout):
                while True:
                    try:
                        data = await stream.receive(_READ_SIZE)
                    except (anyio.EndOfStream, anyio.BrokenResourceError, OSError) as exc:
                        if not received and reused:
                            raise _StaleConnection from exc
                        if _ends_at_close(request, response):
                            response.complete = True
                            return response
                        raise httpx.RemoteProtocolError(
                            _CLOSED_EARLY if received else CLOSED_WITHOUT_ANSWER, request=request
                        ) from exc
                    received = True
                    try:
                        parser.feed_data(data)
                    except httptools.HttpParserError as exc:
                        raise httpx.RemoteProtocolError(
                            f"malformed response: {exc}", request=request
                        ) from exc
                    if response.complete and response.status >= 200:
                        return response
                    if response.complete:  # an interim 1xx answer: the real one follows
                        continue
                    if (
                        response.headers_done
                        and response.status >= 200
                        and _bodiless(request, response.status)
                    ):
                        return response
        except TimeoutError as exc:
            raise httpx.ReadTimeout("timed out waiting for the response", request=request) from exc

    async def aclose(self) -> None:
        """Close every idle connection (and the https transport)."""
        streams = [s for idle in self._idle.values() for s in idle]
        self._idle.clear()
        for stream in streams:
            with contextlib.suppress(OSError, anyio.BrokenResourceError):
                await stream.aclose()
        if self._fallback is not None:
            await self._fallback.aclose()


async def _connect(request: httpx.Request, key: tuple[str, int], timeout: float | None) -> SocketStream:
    try:
        with anyio.fail_after(timeout):
            return await anyio.connect_tcp(key[0], key[1])
    except TimeoutError as exc:
        raise httpx.ConnectTimeout(f"timed out connecting to {key[0]}:{key[1]}", request=request) from exc
    except OSError as exc:
        raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc


async def _serialise(request: httpx.Request) -> bytes:
    try:
        body = request.content
    except httpx.RequestNotRead:
        body = await request.aread()
    lines = [request.method.encode("ascii") + b" " + request.url.raw_path + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in request.headers.raw]
    if body and "content-length" not in request.headers and "transfer-encoding" not in request.headers:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def _bodiless(request: httpx.Request, status: int) -> bool:
    return request.method == "HEAD" or status in _NO_BODY_STATUS


def _ends_at_close(request: httpx.Request, response: _Response) -> bool:
    """Whether a body delimited by the connection's end is now complete (no length, not chunked)."""
    if not response.headers_done or response.status < 200:
        return False
    names = {name.lower() for name, _ in response.headers}
    return _bodiless(request, response.status) or (
        b"content-length" not in names and b"transfer-encoding" not in names
    )
