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

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.errors import ErrorInfo

from .affected import AffectedSummary, CarriedVerdict
from .base import Part, Result
from .browser import BrowserEvidence
from .contracts import ContractCoverage
from .lifecycle import BuildResult, ContainerStatus, SetupResult
from .mocks import ClosestRoute, MockAnswer
from .recording import MockRecording

__all__ = [
    "FINISHED",
    "Artifact",
    "AttemptResult",
    "CaseHistory",
    "CaseResult",
    "ContainerHealthInfo",
    "ContainerLogInfo",
    "DiagnosticReport",
    "Failure",
    "GitState",
    "MockRequestInfo",
    "MockTraffic",
    "NetworkMembership",
    "RequestInfo",
    "ResponseInfo",
    "ResumeOutcome",
    "RunKind",
    "RunProgress",
    "RunResult",
    "RunStatus",
    "SameCause",
    "ShardResult",
    "SuiteResult",
    "Totals",
]


RunStatus = Literal["queued", "running", "passed", "failed", "cancelled", "interrupted", "error"]
RunKind = Literal["test", "build", "setup"]
FINISHED: frozenset[str] = frozenset({"passed", "failed", "cancelled", "interrupted", "error"})


class RequestInfo(Part, frozen=True, kw_only=True):
    """The HTTP request as sent (secret headers redacted)."""

    method: str
    url: str
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    body_truncated: bool = False


class ResponseInfo(Part, frozen=True, kw_only=True):
    """The HTTP response as received (body parsed as JSON when it is JSON, capped in size)."""

    status: int
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    body_truncated: bool = False
    duration: int = 0


class ContainerLogInfo(Part, frozen=True, kw_only=True):
    """A container's output during the case (and a short tail before it)."""

    container_name: str
    lines: list[str]
    line_count: int
    truncated: bool = False


class ContainerHealthInfo(Part, frozen=True, kw_only=True):
    """A container's state when the case failed."""

    container_name: str
    status: ContainerStatus
    health: str | None = None
    exit_code: int | None = None


class MockRequestInfo(Part, frozen=True, kw_only=True):
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
        route_recorded: when that route was recorded (`run --record`, ISO 8601); absent for a
            route written by hand in e2e.yaml.
        closest_routes: when no route matched (the mock answered 404): the closest routes, closest
            first, each with why it did not match.
        fault: `reset` or `timeout` when the route played a fault instead of answering.
        error: what went wrong while the mock answered (a template or proxy failure).
        sequence_step: for a route with a `sequence`, the 0-based step that answered.
        response: what the mock answered: status, headers and body (capped like `body`).
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
    route_recorded: str | None = None
    closest_routes: list[ClosestRoute] | None = None
    fault: Literal["reset", "timeout"] | None = None
    error: str | None = None
    sequence_step: int | None = None
    response: MockAnswer | None = None


class MockTraffic(Part, frozen=True, kw_only=True):
    """What one mock received during the case."""

    mock_name: str
    requests: list[MockRequestInfo]
    truncated: bool = False


class NetworkMembership(Part, frozen=True, kw_only=True):
    """The project network and who is on it."""

    network_name: str
    connected_containers: list[str]


class DiagnosticReport(Part, frozen=True, kw_only=True):
    """Context collected when a case fails."""

    collected_at: int
    container_logs: list[ContainerLogInfo] = msgspec.field(default_factory=list)
    container_health: list[ContainerHealthInfo] = msgspec.field(default_factory=list)
    mock_requests: list[MockTraffic] = msgspec.field(default_factory=list)
    network_info: NetworkMembership | None = None


class SameCause(Part, frozen=True, kw_only=True):
    """Other failed cases with this failure's cause, told once here (see `results.grouping`).

    Attributes:
        count: how many cases failed with this cause, this one included.
        cases: the ids of the others, in run order (each one's full record is in the run's
            artifacts, `cases/<caseId>.json`).
        cause: what was compared: the normalised error, failed assertions, status and log line.
        names: the names of the others, in the order of `cases`.
    """

    count: int
    cases: list[str]
    cause: str
    names: list[str] = msgspec.field(default_factory=list)


class Failure(Part, frozen=True, kw_only=True):
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
    same_cause: SameCause | None = None
    browser: BrowserEvidence | None = None  # a browser case's page: screenshot, trace, DOM, console


class AttemptResult(Part, frozen=True, kw_only=True):
    """One attempt of a retried case."""

    attempt: int
    passed: bool
    duration: int
    timestamp: int
    error: str | None = None


class CaseHistory(Part, frozen=True, kw_only=True):
    """A failed case's past, from the run store.

    Attributes:
        last_passed_run_id: the newest run in which it passed (null: never).
        failing_since_run_id: the first run of its current streak of failures (this run when it
            passed the time before).
        recent: its outcomes over the last runs that ran it, oldest first, this run last:
            P passed, F failed, S skipped.
        flaky: it both passed and failed under the same config hash and git commit, or passed
            only on a retry.
    """

    last_passed_run_id: str | None = None
    failing_since_run_id: str | None = None
    recent: str = ""
    flaky: bool = False


class CaseResult(Part, frozen=True, kw_only=True):
    """One test case. `id` is stable across runs (`<suite>.<case-slug>`).

    `carried`: the case did not run in this run (nothing it touched changed since it last ran, or
    a resumed run did not need it); `carried` says which run's verdict it carries.
    """

    id: str
    name: str
    suite: str
    status: Literal["passed", "failed", "skipped", "carried"]
    duration: int
    timestamp: int
    failure: Failure | None = None
    attempts: list[AttemptResult] | None = None
    skip_reason: str | None = None
    history: CaseHistory | None = None
    engine: str | None = None  # where it ran, in a sharded run (`local`, `unix:///…`, `context:ci`)
    pages: list[str] = msgspec.field(default_factory=list)  # the URLs a browser case opened, in order
    carried: CarriedVerdict | None = None

    @property
    def verdict(self) -> Literal["passed", "failed", "skipped"]:
        """The case's verdict: its own, or the one it carries from an earlier run."""
        if self.status == "carried":
            return self.carried.status if self.carried is not None else "passed"
        return self.status


class SuiteResult(Part, frozen=True, kw_only=True):
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
    engine: str | None = None  # where it ran, in a sharded run
    carried: int = 0  # cases that did not run here and carry an earlier verdict


class ShardResult(Part, frozen=True, kw_only=True):
    """One engine of a sharded run: the suites it was given and how its environment went.

    `status` is `passed` or `failed` by its suites, or `error` when its environment could not be
    brought up (then `error` says why, and each of its suites failed with that reason).
    """

    engine: str
    suites: list[str]
    status: Literal["passed", "failed", "error", "cancelled"]
    expected_ms: int  # the recorded durations the split went by
    setup_ms: int = 0
    duration: int = 0
    error: ErrorInfo | None = None
    cleaned: bool = True
    warnings: list[str] = msgspec.field(default_factory=list)


class Totals(Part, frozen=True, kw_only=True):
    """Case counts over the run: `total` counts the cases that ran (passed, failed, skipped);
    `carried` the others, whose verdict comes from an earlier run."""

    passed: int
    failed: int
    skipped: int
    total: int
    carried: int = 0


class Artifact(Part, frozen=True, kw_only=True):
    """A file the run wrote, with its digest (sha256 over the raw bytes)."""

    name: str
    path: str
    sha256: str
    size: int
    content_type: str = "application/octet-stream"


class RunProgress(Part, frozen=True, kw_only=True):
    """How far a run that is still going has got."""

    phase: str | None = None
    done: int = 0
    total: int = 0


class ResumeOutcome(Part, frozen=True, kw_only=True):
    """What a resumed run did with the cases its original run did not pass."""

    resumed_from: str
    now_passing: list[str] = msgspec.field(default_factory=list)
    still_failing: list[str] = msgspec.field(default_factory=list)


class GitState(Part, frozen=True, kw_only=True):
    """The project's git commit when the run started, and whether the work tree had changes."""

    commit: str
    dirty: bool


class RunResult(Result, frozen=True, kw_only=True):
    """A run: its status, totals, suites with their cases, and the artifacts written.

    `kind` is `test` for `run`, `run_suite` and `resume_run`; `build` and `setup` runs carry that
    operation's result in `build` or `setup`. While a run goes on (`queued`, `running`), `progress`
    says how far it is and `suites` hold what has finished. `recordings` says which mocks recorded
    (`run(record=...)`) or replayed recorded routes, and what was written. `contracts` gives, per
    OpenAPI contract of a service or mock, the operations and statuses the run exercised and the
    violations found. `affected` says which cases an edit could affect (they ran first) and, with
    `affected=True`, which verdicts were carried.
    """

    run_id: str
    status: RunStatus
    summary: str
    totals: Totals
    duration: int
    suites: list[SuiteResult]
    started_at: str
    kind: RunKind = "test"
    finished_at: str | None = None
    progress: RunProgress | None = None
    selected_suites: list[str] = msgspec.field(default_factory=list)
    resumed_from: str | None = None
    resume: ResumeOutcome | None = None
    config_hash: str | None = None
    git: GitState | None = None
    idempotency_key: str | None = None
    trace_id: str | None = None
    error: ErrorInfo | None = None
    build: BuildResult | None = None
    setup: SetupResult | None = None
    artifacts: list[Artifact] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)
    truncated: bool = False
    shards: list[ShardResult] | None = None
    recordings: list[MockRecording] = msgspec.field(default_factory=list)
    affected: AffectedSummary | None = None
    contracts: list[ContractCoverage] | None = None

    @property
    def ok(self) -> bool:
        """Whether the run finished and every selected case passed."""
        return self.status == "passed"

    @property
    def finished(self) -> bool:
        """Whether the run has ended (in any way)."""
        return self.status in FINISHED

    def failures(self) -> list[CaseResult]:
        """Return every failed case, in run order."""
        return [case for suite in self.suites for case in suite.cases if case.status == "failed"]
