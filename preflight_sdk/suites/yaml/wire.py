"""HTTP/1.1 on the wire for the test runner: keep-alive connections, one exchange at a time.

A request goes out as bytes already built (by `transport.LeanTransport` from an httpx request, or
by `direct` for a plain case) and its response comes back whole. Each connection is an asyncio
protocol that feeds what arrives straight into httptools (C), and resolves one future when the
response is complete, so an exchange costs one write, one future and one timer: a tenth of what
httpx's default async stack (httpcore, h11, anyio's stream wrappers) spends on a keep-alive
loopback request. anyio has no protocol-level API (its streams are the cost measured away here),
so this one module speaks asyncio: preflight runs on anyio's asyncio backend, and anyio's
cancellation reaches the future an exchange awaits.

Errors are httpx's: `ConnectError` (the socket error as its cause), `ConnectTimeout`,
`ReadTimeout`, `RemoteProtocolError`. A reused connection that the server closed meanwhile is
retried once on a new one; a connection is reused only when its response allows it (keep-alive,
body complete, not HEAD). A cancelled exchange closes its connection, so no late answer is read
as the next request's.
"""

from __future__ import annotations

import asyncio  # noqa: TID251 - see the module docstring
from typing import Any

import anyio
import httptools
import httpx

__all__ = ["CLOSED_WITHOUT_ANSWER", "Reply", "WirePool"]

_NO_BODY_STATUS = {204, 304}
_MAX_IDLE_PER_HOST = 32

CLOSED_WITHOUT_ANSWER = "the server accepted the request and closed the connection without answering"
"""A fresh connection ended before any byte of a response: the server was reached, then gave up
(typically its process crashed, or its handler died, while handling the request)."""
_CLOSED_EARLY = "the server closed the connection before the response was complete"


class Reply:
    """One whole response: status line, headers as sent, body (still content-encoded)."""

    __slots__ = (
        "_parser",
        "body",
        "complete",
        "headers",
        "headers_done",
        "keep_alive",
        "parts",
        "reason",
        "status",
        "version",
    )

    def __init__(self) -> None:
        self.headers: list[tuple[bytes, bytes]] = []
        self.parts: list[bytes] = []
        self.body = b""
        self.reason = b""
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.status = 0
        self.version = "1.1"
        self._parser: Any = None

    # httptools callbacks

    def on_message_begin(self) -> None:
        # A 1xx answer and the final one can arrive in one read: each message starts afresh.
        self.headers = []
        self.parts = []
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
        self.keep_alive = bool(self._parser.should_keep_alive())
        self.status = int(self._parser.get_status_code())
        self.version = str(self._parser.get_http_version())

    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


class _Stale(Exception):
    """A reused connection was closed by the server before it answered."""


class _Exchange:
    """The request in flight on a connection, and the future its response resolves."""

    __slots__ = ("future", "head_only", "parser", "received", "reply", "reused")

    def __init__(self, future: asyncio.Future[Reply], *, head_only: bool, reused: bool) -> None:
        self.future = future
        self.head_only = head_only
        self.reused = reused
        self.received = False
        self.reply = Reply()
        self.parser = httptools.HttpResponseParser(self.reply)
        self.reply._parser = self.parser

    def feed(self, data: bytes) -> None:
        self.received = True
        reply = self.reply
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.fail(httpx.RemoteProtocolError(f"malformed response: {exc}"))
            return
        if reply.status < 200:  # nothing yet, or an interim 1xx answer: the real one follows
            return
        if reply.complete or (reply.headers_done and (self.head_only or reply.status in _NO_BODY_STATUS)):
            self.done()

    def ended(self) -> None:
        """The server closed the connection: the response is complete, or it never will be."""
        reply = self.reply
        if not self.received and self.reused:
            self.fail(_Stale())
        elif _ends_at_close(reply, self.head_only):
            reply.complete = True
            self.done()
        else:
            self.fail(httpx.RemoteProtocolError(_CLOSED_EARLY if self.received else CLOSED_WITHOUT_ANSWER))

    def done(self) -> None:
        if not self.future.done():
            self.reply.body = b"".join(self.reply.parts)
            self.future.set_result(self.reply)

    def fail(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)


class _Connection(asyncio.Protocol):
    """One keep-alive connection; at most one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.current: _Exchange | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.current is None:  # bytes nobody asked for: the connection cannot be trusted again
            self.close()
            return
        self.current.feed(data)

    def eof_received(self) -> bool:
        self._ended()
        return False  # let the transport close

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended()

    def _ended(self) -> None:
        self.closed = True
        if self.current is not None:
            self.current.ended()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def exchange(
        self, payload: bytes, *, head_only: bool, timeout: float | None, reused: bool
    ) -> Reply:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        current = _Exchange(loop.create_future(), head_only=head_only, reused=reused)
        self.current = current
        timer = None if timeout is None else loop.call_later(timeout, _expire, current)
        try:
            if self.closed or self.transport.is_closing():
                current.ended()
            else:
                self.transport.write(payload)
            return await current.future
        except BaseException:
            self.close()  # a late answer must not be read as the next request's
            raise
        finally:
            self.current = None
            if timer is not None:
                timer.cancel()


def _expire(current: _Exchange) -> None:
    current.fail(httpx.ReadTimeout("timed out waiting for the response"))


def _ends_at_close(reply: Reply, head_only: bool) -> bool:
    """Whether a body delimited by the connection's end is now complete (no length, not chunked)."""
    if not reply.headers_done or reply.status < 200:
        return False
    if head_only or reply.status in _NO_BODY_STATUS:
        return True
    names = {name.lower() for name, _ in reply.headers}
    return b"content-length" not in names and b"transfer-encoding" not in names


class WirePool:
    """Idle keep-alive connections per (host, port), and the exchange that uses them."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    @property
    def idle(self) -> int:
        """How many idle connections are kept (all hosts)."""
        return sum(len(connections) for connections in self._idle.values())

    async def exchange(
        self,
        host: str,
        port: int,
        payload: bytes,
        *,
        head_only: bool,
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> Reply:
        """Send `payload` (a whole request) to host:port and return its whole response."""
        key = (host, port)
        while True:
            connection = self._take(key)
            reused = connection is not None
            if connection is None:
                connection = await _connect(host, port, connect_timeout)
            try:
                reply = await connection.exchange(
                    payload, head_only=head_only, timeout=read_timeout, reused=reused
                )
            except _Stale:
                continue  # only a reused connection raises it: the next try opens a new one
            idle = self._idle.setdefault(key, [])
            if reply.complete and reply.keep_alive and not head_only and len(idle) < _MAX_IDLE_PER_HOST:
                idle.append(connection)
            else:
                connection.close()
            return reply

    def _take(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
        return None

    def close(self) -> None:
        """Close every idle connection."""
        connections = [c for idle in self._idle.values() for c in idle]
        self._idle.clear()
        for connection in connections:
            connection.close()


async def _connect(host: str, port: int, timeout: float | None) -> _Connection:
    loop = asyncio.get_running_loop()
    try:
        with anyio.fail_after(timeout):
            _, connection = await loop.create_connection(_Connection, host, port)
    except TimeoutError as exc:
        raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from exc
    except OSError as exc:
        raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
    return connection
