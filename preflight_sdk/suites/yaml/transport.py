"""httpx's transport for the test runner: its requests go out on `wire` (plain `http://` only).

httpx does everything above the wire (redirects, cookies, content decoding, text encodings); the
wire is `wire.WirePool`, keep-alive HTTP/1.1 parsed by httptools, which costs a fraction of
httpx's default async stack per request. `https://` requests go to httpx's own transport.

Timeouts come from the request's `timeout` extension: `connect` bounds opening a connection,
`read` the wait for the whole response (a request is written without waiting, so it is within
that bound too).
"""

from __future__ import annotations

import httpx

from .wire import WirePool

__all__ = ["LeanTransport"]


class LeanTransport(httpx.AsyncBaseTransport):
    """Plain-http requests on a `WirePool` (shared with the runner's direct requests)."""

    def __init__(self, pool: WirePool | None = None) -> None:
        self.pool = pool if pool is not None else WirePool()
        self._fallback: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` and return the whole response (its body already read)."""
        if request.url.scheme != "http":
            if self._fallback is None:
                self._fallback = httpx.AsyncHTTPTransport(trust_env=False)
            return await self._fallback.handle_async_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        reply = await self.pool.exchange(
            request.url.host,
            request.url.port or 80,
            await _serialise(request),
            head_only=request.method == "HEAD",
            connect_timeout=timeouts.get("connect"),
            read_timeout=timeouts.get("read"),
        )
        return httpx.Response(
            status_code=reply.status,
            headers=reply.headers,
            stream=httpx.ByteStream(reply.body),
            extensions={"http_version": f"HTTP/{reply.version}".encode(), "reason_phrase": reply.reason},
        )

    async def aclose(self) -> None:
        """Close every idle connection (and the https transport)."""
        self.pool.close()
        if self._fallback is not None:
            await self._fallback.aclose()


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
