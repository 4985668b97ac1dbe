"""Single readiness probes from the host: an HTTP GET or a TCP connect, over real sockets or faked.

Probing a port is the network's business, not the engine's: every real engine is probed over
real sockets (`NetworkProber`). An engine made for tests may carry its own `prober` (the in-memory
fake answers from its scripted containers, so health checks in unit tests need no real port);
`prober_for` picks it. The polling schedule around single probes is `polling.py`.

An HTTP probe GETs the health path on the published host port and is ready on a status below 400.
A TCP probe connects to the container's own address on the project network: Docker's userland
proxy accepts every connection on a published port even while nothing listens behind it, so a
connect to the host port proves nothing. Where container addresses are not routable (Docker
Desktop), the host port is used and an immediate close by the proxy counts as "not listening".
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import anyio
import msgspec

__all__ = ["NetworkProber", "ProbeResult", "Prober", "prober_for"]


class ProbeResult(msgspec.Struct, frozen=True):
    """One probe's answer."""

    ok: bool
    detail: str


class Prober(Protocol):
    """Performs single probes (the real network, or a fake in unit tests)."""

    async def http(self, host: str, port: int, path: str, timeout: float) -> ProbeResult:
        """GET `path`; ok when the status is below 400."""
        ...

    async def tcp(self, host: str, port: int, timeout: float, *, proxied: bool) -> ProbeResult:
        """Connect; with `proxied`, an immediate close by a proxy counts as a failure."""
        ...


class NetworkProber:
    """Probes over real sockets."""

    async def http(self, host: str, port: int, path: str, timeout: float) -> ProbeResult:
        request = (
            f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: preflight-health\r\n\r\n".encode()
        )
        head = b""
        try:
            with anyio.fail_after(timeout):
                async with await anyio.connect_tcp(host, port) as stream:
                    await stream.send(request)
                    while b"\r\n" not in head and len(head) < 4096:
                        chunk = await stream.receive(1024)
                        head += chunk
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return ProbeResult(
                False, "connection closed before a response" if not head else "incomplete response"
            )
        except TimeoutError:
            return ProbeResult(False, f"no answer within {timeout:.1f}s")
        except OSError as exc:
            return ProbeResult(False, _os_detail(exc))
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            return ProbeResult(False, f"not an HTTP response: {status_line[:60]!r}")
        status = int(parts[1])
        return ProbeResult(status < 400, f"HTTP {status}")

    async def tcp(self, host: str, port: int, timeout: float, *, proxied: bool) -> ProbeResult:
        try:
            with anyio.fail_after(timeout):
                async with await anyio.connect_tcp(host, port) as stream:
                    if not proxied:
                        return ProbeResult(True, "connected")
                    # Behind Docker's proxy a refused backend shows up as an immediate close.
                    with anyio.move_on_after(0.03):
                        try:
                            await stream.receive(1)
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            return ProbeResult(
                                False, "closed at once (nothing listens behind the published port)"
                            )
                    return ProbeResult(True, "connected")
        except TimeoutError:
            return ProbeResult(False, f"no answer within {timeout:.1f}s")
        except OSError as exc:
            return ProbeResult(False, _os_detail(exc))


@runtime_checkable
class _ProbesItself(Protocol):
    """An engine that answers probes of its own containers (the in-memory fake of the unit tests)."""

    prober: Prober


_NETWORK = NetworkProber()  # stateless: one for every engine


def prober_for(engine: object) -> Prober:
    """The prober for `engine`'s containers: its own when it carries one, else real sockets."""
    return engine.prober if isinstance(engine, _ProbesItself) else _NETWORK


def _os_detail(exc: OSError) -> str:
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[0].lower() + text[1:] if text else "connection failed"
