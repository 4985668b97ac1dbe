"""Readiness probes, run from the host with fast adaptive polling.

Never `wget` inside the image and never Docker's 2–30 s HEALTHCHECK intervals: the host probes
every ~10 ms at first, backing off to 250 ms, so a service that is up is seen within milliseconds.

Each single probe is a `Prober`'s (see `probe.py`): over the network for a real engine,
scripted for the in-memory fake. Here: what to probe for a service, and how often.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Literal

import anyio
import msgspec

from preflight_sdk.core.results.lifecycle import ProbeOutcome, Readiness

from .probe import Prober

__all__ = ["ProbePlan", "intervals", "wait_docker_healthy", "wait_ready"]

_KEEP_OUTCOMES = 5


class ProbePlan(msgspec.Struct, frozen=True, kw_only=True):
    """What to probe for one service and until when.

    Attributes:
        kind: `http`, `tcp`, `port` (TCP on the first published port), `running` (nothing to probe).
        host: where to connect (the engine's address for HTTP; the container IP for TCP, when routable).
        port: the port to connect to.
        path: the HTTP path.
        fallback_host/fallback_port: the published host port, for TCP when `host` is unreachable.
        deadline: seconds allowed from the start of waiting.
        probe_timeout: seconds allowed for one probe.
    """

    kind: Literal["http", "tcp", "port", "running"]
    host: str = "127.0.0.1"
    port: int = 0
    path: str = "/"
    fallback_host: str | None = None
    fallback_port: int | None = None
    deadline: float = 60.0
    probe_timeout: float = 2.0

    @property
    def target(self) -> str:
        """A human description of what is probed."""
        if self.kind == "http":
            return f"http://{self.host}:{self.port}{self.path}"
        if self.kind == "running":
            return "container running"
        return f"{self.host}:{self.port}"


def intervals(fast_for: float = 0.5, first: float = 0.01, cap: float = 0.25) -> Iterator[float]:
    """Yield waits between probes: `first` during the first `fast_for` seconds, then growing to `cap`."""
    elapsed = 0.0
    while elapsed < fast_for:
        elapsed += first
        yield first
    wait = first
    while True:
        wait = min(cap, wait * 1.3)
        yield wait


async def wait_ready(
    plan: ProbePlan,
    prober: Prober,
    *,
    clock_start: float | None = None,
    waiting: Callable[[], None] | None = None,
) -> Readiness:
    """Probe until ready or until the plan's deadline; return how it went (never raises on failure).

    The caller races this against "the container exited" and cancels it then; `waiting()` is
    called before each wait between probes (the caller watches for exits only from then on).
    """
    start = anyio.current_time() if clock_start is None else clock_start
    if plan.kind == "running":
        return Readiness(probe="running", target=plan.target, attempts=0, ready=True, time_to_ready=0)
    outcomes: list[ProbeOutcome] = []
    attempts = 0
    direct = True
    schedule = intervals()
    while True:
        attempts += 1
        now = anyio.current_time()
        remaining = plan.deadline - (now - start)
        timeout = max(0.05, min(plan.probe_timeout, remaining))
        if plan.kind == "http":
            result = await prober.http(plan.host, plan.port, plan.path, timeout)
        elif direct:
            result = await prober.tcp(plan.host, plan.port, timeout, proxied=False)
            if not result.ok and plan.fallback_port and _unroutable(result.detail):
                direct = False  # container addresses are not reachable from this host
                result = await prober.tcp(
                    plan.fallback_host or "127.0.0.1", plan.fallback_port, timeout, proxied=True
                )
        else:
            result = await prober.tcp(
                plan.fallback_host or "127.0.0.1", plan.fallback_port or 0, timeout, proxied=True
            )
        elapsed = anyio.current_time() - start
        outcomes.append(ProbeOutcome(at=int(elapsed * 1000), ok=result.ok, detail=result.detail))
        del outcomes[:-_KEEP_OUTCOMES]
        if result.ok:
            return Readiness(
                probe=plan.kind,
                target=plan.target,
                attempts=attempts,
                ready=True,
                time_to_ready=int(elapsed * 1000),
                last_outcomes=outcomes,
            )
        if elapsed >= plan.deadline:
            return Readiness(
                probe=plan.kind, target=plan.target, attempts=attempts, ready=False, last_outcomes=outcomes
            )
        if waiting is not None:
            waiting()
        await anyio.sleep(min(next(schedule), max(0.0, plan.deadline - elapsed)))


async def wait_docker_healthy(
    status: Callable[[], Awaitable[str]], *, deadline: float, target: str
) -> Readiness:
    """Poll Docker's health status (`status()`) until `healthy`, `unhealthy` or the deadline.

    Docker runs the check at its own interval; polling its verdict is cheap, so it is read often.
    """
    start = anyio.current_time()
    outcomes: list[ProbeOutcome] = []
    attempts = 0
    schedule = intervals(fast_for=0.2, first=0.05, cap=0.25)
    while True:
        attempts += 1
        health = await status()
        elapsed = anyio.current_time() - start
        if not outcomes or outcomes[-1].detail != health:
            outcomes.append(ProbeOutcome(at=int(elapsed * 1000), ok=health == "healthy", detail=health))
            del outcomes[:-_KEEP_OUTCOMES]
        if health == "healthy":
            return Readiness(
                probe="docker",
                target=target,
                attempts=attempts,
                ready=True,
                time_to_ready=int(elapsed * 1000),
                last_outcomes=outcomes,
            )
        if health == "unhealthy" or elapsed >= deadline:
            return Readiness(
                probe="docker", target=target, attempts=attempts, ready=False, last_outcomes=outcomes
            )
        await anyio.sleep(min(next(schedule), max(0.0, deadline - elapsed)))


def _unroutable(detail: str) -> bool:
    return any(word in detail for word in ("no route", "unreachable", "no answer", "timed out"))
