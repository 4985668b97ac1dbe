"""Collect what happened around a failing case: logs, container health, mock traffic, network.

Always on (the original had it off by default). Log lines and mock requests are those of the
case's own time window (with a short tail of the target service when it logged nothing then), so
the report shows the exception of *this* request, not an old one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import msgspec

from preflight_sdk.core.redaction import DEFAULT, Redactor, redact_recorded
from preflight_sdk.core.results.mocks import JournalEntry, MockAnswer
from preflight_sdk.core.results.run import (
    ContainerHealthInfo,
    ContainerLogInfo,
    DiagnosticReport,
    MockRequestInfo,
    MockTraffic,
    NetworkMembership,
)

from .environment import RunEnvironment
from .outcome import cap_body

__all__ = ["Limits", "collect", "mock_request_info"]

# A header value longer than this is cut: cookies and tokens are redacted, but a long trace or
# user-agent header must not crowd out the report.
_HEADER_CHARS = 200


class Limits:
    """How much of each kind of evidence a failure keeps in the run result."""

    def __init__(
        self, *, log_lines: int = 12, tail_lines: int = 5, mock_requests: int = 5, body_chars: int = 300
    ) -> None:
        self.log_lines = log_lines
        self.tail_lines = tail_lines
        self.mock_requests = mock_requests
        self.body_chars = body_chars


FULL = Limits(log_lines=200, tail_lines=30, mock_requests=100, body_chars=20_000)


async def collect(
    env: RunEnvironment,
    *,
    start: datetime,
    end: datetime,
    target: str | None,
    limits: Limits,
) -> DiagnosticReport:
    """Return the diagnostics of a case that ran from `start` to `end` against service `target`."""
    # Docker stamps a line when it reads it, never before the write, and mocks stamp arrivals with
    # this clock: nothing caused by the case is older than its start.
    window_start = start
    window_end = end + timedelta(milliseconds=500)
    logs: list[ContainerLogInfo] = []
    traffic: list[MockTraffic] = []
    containers = await env.containers()

    async def service_logs(name: str) -> None:
        lines = await env.logs_between(name, window_start, window_end)
        if not lines and name == target:
            lines = await env.log_tail(name, limits.tail_lines)
        if lines:
            redactor = env.redactor
            texts = [
                redactor.text(f"stderr: {line.text}" if line.stream == "stderr" else line.text)
                for line in lines
            ]
            kept = texts[-limits.log_lines :]
            logs.append(
                ContainerLogInfo(
                    container_name=name, lines=kept, line_count=len(texts), truncated=len(kept) < len(texts)
                )
            )

    async def mock_traffic(name: str) -> None:
        entries = [e for e in await env.mock_entries(name, window_start) if e.epoch_ms <= _ms(window_end)]
        if not entries:
            return
        kept = entries[-limits.mock_requests :]
        traffic.append(
            MockTraffic(
                mock_name=name,
                requests=[mock_request_info(e, limits, env.redactor) for e in kept],
                truncated=len(kept) < len(entries),
            )
        )

    async with anyio.create_task_group() as tg:
        for name in env.services:
            tg.start_soon(service_logs, name)
        for name in env.mocks:
            tg.start_soon(mock_traffic, name)
    order = list(env.services)
    logs.sort(
        key=lambda item: (
            item.container_name != target,
            order.index(item.container_name) if item.container_name in order else 0,
        )
    )
    by_id = {e.container_id: name for name, e in env.services.items()}
    health = [
        ContainerHealthInfo(
            container_name=by_id.get(c.id, c.name),
            status=c.status,
            health=c.health if c.health != "none" else None,
            exit_code=c.exit_code,
        )
        for c in containers
    ]
    network = None
    if env.network:
        members = [by_id.get(c.id, c.name) for c in containers if env.network in c.networks]
        network = NetworkMembership(network_name=env.network, connected_containers=members)
    traffic.sort(key=lambda t: t.mock_name)
    return DiagnosticReport(
        collected_at=_ms(datetime.now(UTC)),
        container_logs=logs,
        container_health=health,
        mock_requests=traffic,
        network_info=network,
    )


def mock_request_info(entry: JournalEntry, limits: Limits, redactor: Redactor = DEFAULT) -> MockRequestInfo:
    """Return a journal entry as a failure report shows it: bounded, credentials redacted.

    A request the mock answered with a fault has no status: it shows as 0 next to `fault`.
    """
    entry = redact_recorded(entry, redactor)
    body, cut = cap_body(entry.body, limits.body_chars)
    return MockRequestInfo(
        method=entry.method,
        path=entry.path,
        url=entry.url,
        headers=_bounded_headers(entry.headers),
        status=entry.status or 0,
        timestamp=entry.timestamp,
        body=body,
        body_truncated=cut or entry.body_truncated,
        matched_route=entry.matched_route,
        route_recorded=entry.route_recorded,
        closest_routes=entry.closest_routes,
        fault=entry.fault,
        error=entry.error,
        sequence_step=entry.sequence_step,
        response=_bounded_answer(entry.response, limits.body_chars),
    )


def _bounded_answer(answer: MockAnswer | None, limit: int) -> MockAnswer | None:
    if answer is None:
        return None
    body, cut = cap_body(answer.body, limit)
    return msgspec.structs.replace(
        answer,
        headers=_bounded_headers(answer.headers),
        body=body,
        body_truncated=cut or answer.body_truncated,
    )


def _bounded_headers(headers: dict[str, str]) -> dict[str, str]:
    return {
        name: value if len(value) <= _HEADER_CHARS else value[:_HEADER_CHARS] + "…"
        for name, value in headers.items()
    }


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
