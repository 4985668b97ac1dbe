"""The result of `run` and `run_suite`: seed 000's RunResult with AI-friendly failures.

Passing cases stay minimal. A failing case carries what an agent needs to act without reading
logs by hand: the request as sent and the response, every assertion with expected and actual, the
container log lines and mock requests of that moment, a one-sentence summary and, where a rule
knows one, a suggested fix. Sizes are bounded (cut items are marked); the full record of each
failure is in the run's artifacts under the case's stable id.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ..assertions import AssertionResult
from .base import Result
from .lifecycle import ContainerStatus
from .mocks import ClosestRoute

__all__ = [
    "Artifact",
    "AttemptResult",
    "CaseResult",
    "ContainerHealthInfo",
    "ContainerLogInfo",
    "DiagnosticReport",
    "Failure",
    "MockRequestInfo",
    "MockTraffic",
    "NetworkMembership",
    "RequestInfo",
    "ResponseInfo",
    "RunResult",
    "SuiteResult",
    "Totals",
]


class _Part(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A member of a run result."""


class RequestInfo(_Part, frozen=True, kw_only=True):
    """The HTTP request as sent (secret headers redacted)."""

    method: str
    url: str
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    body_truncated: bool = False


class ResponseInfo(_Part, frozen=True, kw_only=True):
    """The HTTP response as received (body parsed as JSON when it is JSON, capped in size)."""

    status: int
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    body_truncated: bool = False
    duration: int = 0


class ContainerLogInfo(_Part, frozen=True, kw_only=True):
    """A container's output during the case (and a short tail before it)."""

    container_name: str
    lines: list[str]
    line_count: int
    truncated: bool = False


class ContainerHealthInfo(_Part, frozen=True, kw_only=True):
    """A container's state when the case failed."""

    container_name: str
    status: ContainerStatus
    health: str | None = None
    exit_code: int | None = None


class MockRequestInfo(_Part, frozen=True, kw_only=True):
    """One request a mock received during the case, and what the mock did with it.

    Attributes:
        method: HTTP method.
        path: the path (without the query; see `url`).
        status: the status the mock answered; 0 when it sent no response (see `fault`).
        timestamp: when the request arrived (ISO 8601, UTC).
        url: the full URL as the client addressed it, query included.
        headers: request headers, lower-case names, credentials redacted.
        body: the body (its JSON value, else text), capped in size (`bodyTruncated`).
        matched_route: the route that answered; absent when none did.
        closest_routes: when no route matched (the mock answered 404): the closest routes, closest
            first, each with why it did not match.
        fault: `reset` or `timeout` when the route played a fault instead of answering.
        error: what went wrong while the mock answered (a template or proxy failure).
    """

    method: str
    path: str
    status: int
    timestamp: str
    url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    body_truncated: bool = False
    matched_route: str | None = None
    closest_routes: list[ClosestRoute] | None = None
    fault: Literal["reset", "timeout"] | None = None
    error: str | None = None


class MockTraffic(_Part, frozen=True, kw_only=True):
    """What one mock received during the case."""

    mock_name: str
    requests: list[MockRequestInfo]
    truncated: bool = False


class NetworkMembership(_Part, frozen=True, kw_only=True):
    """The project network and who is on it."""

    network_name: str
    connected_containers: list[str]


class DiagnosticReport(_Part, frozen=True, kw_only=True):
    """Context collected when a case fails."""

    collected_at: int
    container_logs: list[ContainerLogInfo] = msgspec.field(default_factory=list)
    container_health: list[ContainerHealthInfo] = msgspec.field(default_factory=list)
    mock_requests: list[MockTraffic] = msgspec.field(default_factory=list)
    network_info: NetworkMembership | None = None


class Failure(_Part, frozen=True, kw_only=True):
    """Why a case failed, in a form an agent can act on."""

    error: str
    summary: str
    assertions: list[AssertionResult] = msgspec.field(default_factory=list)
    request: RequestInfo | None = None
    response: ResponseInfo | None = None
    suggested_fix: str | None = None
    diagnostics: DiagnosticReport | None = None
    output: str | None = None
    artifact: str | None = None


class AttemptResult(_Part, frozen=True, kw_only=True):
    """One attempt of a retried case."""

    attempt: int
    passed: bool
    duration: int
    timestamp: int
    error: str | None = None


class CaseResult(_Part, frozen=True, kw_only=True):
    """One test case. `id` is stable across runs (`<suite>.<case-slug>`)."""

    id: str
    name: str
    suite: str
    status: Literal["passed", "failed", "skipped"]
    duration: int
    timestamp: int
    failure: Failure | None = None
    attempts: list[AttemptResult] | None = None
    skip_reason: str | None = None


class SuiteResult(_Part, frozen=True, kw_only=True):
    """One suite: its counts and cases."""

    id: str
    name: str
    runner: str
    status: Literal["passed", "failed", "skipped"]
    duration: int
    passed: int
    failed: int
    skipped: int
    cases: list[CaseResult]
    error: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)


class Totals(_Part, frozen=True, kw_only=True):
    """Case counts over the run."""

    passed: int
    failed: int
    skipped: int
    total: int


class Artifact(_Part, frozen=True, kw_only=True):
    """A file the run wrote, with its digest."""

    name: str
    path: str
    sha256: str
    size: int


class RunResult(Result, frozen=True, kw_only=True):
    """The outcome of a run: status, totals, suites with their cases, and the artifacts written."""

    run_id: str
    status: Literal["passed", "failed"]
    summary: str
    totals: Totals
    duration: int
    suites: list[SuiteResult]
    started_at: str
    artifacts: list[Artifact] = msgspec.field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """Whether every selected case passed (no failure)."""
        return self.status == "passed"

    def failures(self) -> list[CaseResult]:
        """Return every failed case, in run order."""
        return [case for suite in self.suites for case in suite.cases if case.status == "failed"]
