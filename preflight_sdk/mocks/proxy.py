"""Forwarding a request to a real upstream (route `proxy:` and mock-level `proxy:` for unmatched).

One httpx client per mock host, created on first use inside the server loop and closed at stop.
The upstream's status, headers and body are relayed; hop-by-hop headers are not, and since httpx
decodes compressed bodies, `content-encoding` and `content-length` are recomputed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .request import RequestView

if TYPE_CHECKING:
    import httpx

__all__ = ["Forwarder", "ProxyFailure"]

_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
    }
)
_NOT_FORWARDED = _HOP_BY_HOP | {b"host", b"content-length"}
# uvicorn adds its own `date` and `server`: relaying the upstream's would send them twice.
_NOT_RELAYED = _HOP_BY_HOP | {b"content-length", b"content-encoding", b"date", b"server"}


class ProxyFailure(Exception):
    """The upstream could not be reached or did not answer in time."""


class Forwarder:
    """Sends requests on to upstreams with one shared connection pool."""

    def __init__(self, timeout: float = 30.0) -> None:
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None

    async def forward(
        self, request: RequestView, target: str
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Send `request` to `target` and return the upstream's status, headers and body.

        Raises:
            ProxyFailure: the upstream refused, timed out or broke the connection.
        """
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        headers = [(name, value) for name, value in request.raw_headers if name.lower() not in _NOT_FORWARDED]
        try:
            response = await self._client.request(
                request.method, target, headers=headers, content=request.body
            )
        except httpx.HTTPError as exc:
            raise ProxyFailure(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from exc
        head = [
            (name.lower(), value) for name, value in response.headers.raw if name.lower() not in _NOT_RELAYED
        ]
        payload = response.content
        status = response.status_code
        if status >= 200 and status not in (204, 304):
            head.append((b"content-length", str(len(payload)).encode("ascii")))
        return status, head, payload

    async def aclose(self) -> None:
        """Close the connection pool."""
        client: Any = self._client
        self._client = None
        if client is not None:
            await client.aclose()
