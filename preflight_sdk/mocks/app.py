"""The ASGI application of one mock: journal, match, answer (or fault, or proxy).

A raw ASGI callable rather than a Starlette app: the hot path (a matched route with a static
answer) is a journal append, a few segment compares and two `send` calls with pre-encoded bytes.

Faults work below HTTP. `reset` finds the request's connection among the server's, sets
`SO_LINGER 0` and aborts it, so the client sees a connection reset. `timeout` never answers and
waits for the client to give up. Every wait (faults, delays, proxy calls) is registered so that
stopping the mock ends it at once instead of holding shutdown.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.templates import UnknownVariableError

from .admin import handle_admin
from .journal import Journal, Record
from .matching import near_misses
from .proxy import Forwarder, ProxyFailure
from .request import RequestView
from .responses import Head, json_response, template_scope

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    from .record.recorder import Recorder
    from .routes import CompiledMock

    Scope = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
    Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

__all__ = ["MockApp"]

_LINGER_RESET = struct.pack("ii", 1, 0)


class MockApp:
    """One running mock: its compiled routes, journal and route state, served over ASGI."""

    def __init__(
        self,
        mock: CompiledMock,
        port: int,
        forwarder: Forwarder,
        *,
        redactor: Redactor = DEFAULT,
        admin_token: str | None = None,
    ) -> None:
        self.mock = mock
        self.name = mock.name
        self.port = port
        self.journal = Journal(mock.journal_limit)
        self.hits: list[int] = [0] * len(mock.routes)
        self.started = time.monotonic()
        self.forwarder = forwarder
        # The uvicorn servers it answers on (its own, and the HTTPS one of `hosts`), to find a
        # request's connection for a `reset` fault.
        self.servers: list[Any] = []
        # While recording (`run --record`): keeps every exchange forwarded to the upstream.
        self.recorder: Recorder | None = None
        self.redactor = redactor  # what the admin endpoints show goes through it
        self.admin_token = admin_token  # with it, `GET /_mock/requests` reads the journal as recorded
        self._waits: set[anyio.CancelScope] = set()

    # -- state -------------------------------------------------------------------------------

    def reset(self, *, keep_journal: bool = False) -> None:
        """Forget sequence positions, counters, `times` and (unless `keep_journal`) the journal.

        Safe from any thread.
        """
        self.hits = [0] * len(self.mock.routes)
        if not keep_journal:
            self.journal.clear()

    def replace_routes(self, mock: CompiledMock) -> None:
        """Answer with `mock`'s routes from now on (the journal stays; route hits start over)."""
        # A request on the server thread reads `hits` then `mock`: make `hits` long enough for
        # both route lists during the swap, so no reader indexes past its end.
        self.hits = [0] * max(len(self.mock.routes), len(mock.routes))
        self.mock = mock
        self.hits = [0] * len(mock.routes)

    def cancel_waits(self) -> None:
        """End every pending delay, fault and proxy call (called on the server loop at stop)."""
        for scope in list(self._waits):
            scope.cancel()

    # -- ASGI --------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path.startswith("/_mock/") or path == "/_mock":
            await handle_admin(self, scope, receive, send)
            return
        began = time.perf_counter()
        request = RequestView(scope["method"], path, scope["query_string"], scope["headers"])
        record = Record(request, scope.get("server"), time.time())
        record.scheme = scope.get("scheme", "http")
        self.journal.arrived()
        message = await receive()
        body: bytes = message.get("body", b"")
        if message.get("more_body", False):
            chunks = [body]
            size = len(body)
            limit = self.mock.max_body
            while message.get("more_body", False) and size <= limit:
                message = await receive()
                chunk = message.get("body", b"")
                chunks.append(chunk)
                size += len(chunk)
            body = b"".join(chunks)
        if len(body) > self.mock.max_body:
            await self._too_large(send, record, body, began)
            return
        record.set_body(body)
        request.body = body
        try:
            await self._answer(scope, receive, send, request, record)
        except Exception as exc:
            # The one broad catch of the server: a bug must cost one 500, never the mock.
            record.error = f"internal error: {type(exc).__name__}: {exc}"
            head, payload = json_response({"error": "mock internal error", "detail": record.error})
            await self._send(send, record, 500, head, payload)
        finally:
            if record.duration is None:  # not journaled yet (a timeout fault is, when it starts)
                record.duration = time.perf_counter() - began
                self.journal.append(record)

    async def _too_large(self, send: Send, record: Record, body: bytes, began: float) -> None:
        """Answer 413 to a body over `maxBodyBytes` without reading the rest (journaled, cut)."""
        record.set_body(body)
        record.error = f"request body over the mock's limit of {self.mock.max_body} bytes (maxBodyBytes)"
        head, payload = json_response({"error": "request body too large", "limit": self.mock.max_body})
        await self._send(send, record, 413, head, payload)
        record.duration = time.perf_counter() - began
        self.journal.append(record)

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, request: RequestView, record: Record
    ) -> None:
        hits = self.hits
        found = self.mock.match(request, hits)
        if found is None:
            if self.mock.proxy is not None:
                await self._proxy(scope, receive, send, request, record, self.mock.proxy, [], self.recorder)
                return
            await self._no_match(send, request, record, hits)
            return
        route, params = found
        hits[route.index] += 1
        hit = hits[route.index]
        record.route_index = route.index
        record.route_label = route.label
        record.route_recorded = route.recorded_at
        record.sequence_step = route.step(hit)
        if params:
            record.params = params
        answer = route.answer(hit)
        if answer.delay and not await self._wait(anyio.sleep, answer.delay):
            await self._drop(scope, receive)
            return
        if answer.fault is not None:
            # Journaled before the fault: a client that sees its connection reset (or still
            # waits) and reads the journal at once must find the request there.
            record.fault = answer.fault
            record.duration = time.time() - record.epoch
            self.journal.append(record)
        if answer.fault == "reset":
            await self._drop(scope, receive)
            return
        if answer.fault == "timeout":
            if not await self._wait(_until_disconnect, receive):
                await self._drop(scope, receive)
            return
        if not answer.templated and answer.proxy is None:  # the hot path: pre-encoded bytes
            await self._send(send, record, answer.status, answer.static_head, answer.static_body)
            return
        try:
            head, payload = answer.render(template_scope(request, params, hit, _url(scope)))
        except UnknownVariableError as exc:
            unread = _unread_body(request) if exc.name.startswith("request.body.") else None
            if unread is not None:
                # The variable may well be in the body: it is the body that could not be read.
                record.error = (
                    f"the request body could not be parsed ({unread}), so `{{{{{exc.name}}}}}` is unknown"
                )
                problem: dict[str, Any] = {"error": "request body could not be parsed", "reason": unread}
                hint = "send a JSON body (nested at most 64 levels) with a JSON content type, or template from another field"
            else:
                record.error = f"unknown template variable `{{{{{exc.name}}}}}`"
                problem = {"error": "unknown template variable"}
                hint = (
                    "templates may use request.{method,path,url,params,query,headers,body}, "
                    "uuid, timestamp, epoch, now, counter"
                )
            head, payload = json_response(
                {
                    **problem,
                    "variable": exc.name,
                    "route": route.label,
                    "routeIndex": route.index,
                    "hint": hint,
                }
            )
            await self._send(send, record, 500, head, payload)
            return
        if answer.proxy is not None:
            await self._proxy(scope, receive, send, request, record, answer.proxy, head)
            return
        await self._send(send, record, answer.status, head, payload)

    async def _no_match(self, send: Send, request: RequestView, record: Record, hits: list[int]) -> None:
        """Answer 404 with the closest routes and why each missed; the journal keeps the same list."""
        closest = msgspec.json.encode(near_misses(self.mock.routes, request, hits))
        record.closest = closest
        head, payload = json_response(
            {
                "error": "no route matched",
                "mock": self.name,
                "request": {"method": request.method, "path": request.path},
                "closestRoutes": msgspec.Raw(closest),  # encoded once, for the answer and the journal
            }
        )
        await self._send(send, record, 404, head, payload)

    async def _send(self, send: Send, record: Record, status: int, head: Head, payload: bytes) -> None:
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": payload})
        record.status = status
        record.set_answer(head, payload)

    async def _proxy(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        request: RequestView,
        record: Record,
        base: str,
        extra: Head,
        recorder: Recorder | None = None,
    ) -> None:
        target = base + scope.get("raw_path", request.path.encode()).decode("latin-1")
        if request.query_string:
            target += "?" + request.query_string.decode("latin-1")
        record.proxied_to = target
        outcome: list[tuple[int, Head, bytes]] = []
        failure: list[str] = []

        async def forward() -> None:
            try:
                outcome.append(await self.forwarder.forward(request, target))
            except ProxyFailure as exc:
                failure.append(str(exc))

        if not await self._wait(forward):
            await self._drop(scope, receive)
            return
        if failure:
            record.error = f"proxy to {target} failed: {failure[0]}"
            if recorder is not None:
                recorder.failure(record.error)
            head, payload = json_response({"error": "proxy failed", "target": target, "detail": failure[0]})
            await self._send(send, record, 502, head, payload)
            return
        status, head, payload = outcome[0]
        if recorder is not None:
            recorder.keep(
                request.method,
                request.path,
                request.query_string,
                request.raw_headers,
                request.body,
                status,
                head,
                payload,
                record.epoch,
            )
        if extra:
            names = {name for name, _ in extra if name not in (b"content-type", b"content-length")}
            head = [h for h in head if h[0] not in names] + [h for h in extra if h[0] in names]
        await self._send(send, record, status, head, payload)

    async def _wait(self, wait: Callable[..., Awaitable[Any]], *args: Any) -> bool:
        """Run `wait`; return False when the mock is stopping and cut it short."""
        scope = anyio.CancelScope()
        self._waits.add(scope)
        try:
            with scope:
                await wait(*args)
        finally:
            self._waits.discard(scope)
        return not scope.cancelled_caught

    async def _drop(self, scope: Scope, receive: Receive) -> None:
        """Close the request's connection without an answer (a TCP reset)."""
        transport = self._transport(scope)
        if transport is None:  # already gone
            return
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
            except OSError:
                pass
        transport.abort()
        # Wait until the server has seen the connection go, so it sends no 500 of its own.
        await _until_disconnect(receive)

    def _transport(self, scope: Scope) -> Any:
        client = scope.get("client")
        for server in list(self.servers):
            for connection in list(server.server_state.connections):
                if getattr(connection, "client", None) == client:
                    return connection.transport
        return None


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _url(scope: Scope) -> str:
    host = ""
    for name, value in scope["headers"]:
        if name == b"host":
            host = value.decode("latin-1")
            break
    if not host:
        server = scope.get("server") or ("127.0.0.1", 0)
        host = f"{server[0]}:{server[1]}"
    query = scope.get("query_string", b"").decode("latin-1")
    return f"{scope.get('scheme', 'http')}://{host}{scope['path']}" + (f"?{query}" if query else "")


def _unread_body(request: RequestView) -> str | None:
    """Why the request's body has no fields to template from, or None when it has them."""
    parsed = request.parsed_body
    if parsed.note is not None:
        return parsed.note  # e.g. JSON nested deeper than the limit, kept as text
    if parsed.encoding is None:
        return "the request has no body"
    if parsed.encoding == "base64":
        return "the body is not text (kept as base64)"
    if parsed.encoding == "text" and parsed.form is None:
        kind = request.headers.get("content-type") or "no content type"
        return f"the body is text, not JSON ({kind})"
    return None
