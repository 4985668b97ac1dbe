"""What a readiness probe answers, and what performs one: the shape the lifecycle and the suites share.

A probe is an HTTP GET of a health path or a TCP connect, from the host. The lifecycle performs
them over real sockets (`lifecycle/health/probe.py: NetworkProber`), or through a fake an engine
made for tests carries; a YAML suite's `waitHealthy` step gets its prober with the run's
environment, so the suites never reach into the lifecycle for one.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

__all__ = ["ProbeResult", "Prober"]


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
