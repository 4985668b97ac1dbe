"""What every suite of one run shares: the environment, the HTTP pool, the clock, the event log.

It also carries what a durable run needs from the runners: the cases to run when a run resumes
another (`selection`), every case finished so far (`finished`, kept when a run is cancelled), and
the trace context its HTTP requests and processes pass on.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from preflight_sdk.config.model import RetryPolicy, SuiteConfig
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.run import CaseResult, SuiteResult
from preflight_sdk.core.tracing import format_traceparent, new_span_id, new_trace_id

from .browser import BrowserHost
from .contract_checks import RunContracts
from .environment import RunEnvironment
from .events import EventLog
from .ordering import CaseOrder
from .touches import Touches
from .yaml.http import HttpSession

if TYPE_CHECKING:
    from .commands.warm_pytest import WarmPytest

__all__ = ["CURRENT_CASE", "Resumed", "RunContext", "SavedByCase", "case_id"]

# The case a task is running (parallel suites each run in their own task, with their own value).
CURRENT_CASE: ContextVar[str | None] = ContextVar("preflight_current_case", default=None)

# The runners' event names, as the event log spells them.
_TYPES = {"suite_start": "SUITE_STARTED", "suite_end": "SUITE_FINISHED", "case_start": "CASE_STARTED"}


class SavedByCase(msgspec.Struct, frozen=True):
    """A value a YAML case saved (`save:`); `redacted` when the redaction policy would hide it."""

    suite: str
    case: str
    name: str
    value: Any
    redacted: bool = False


class Resumed(dict[str, set[str]]):
    """A resumed run's selection (suite id → the case ids to run again), and what the original run's
    cases that are not run again saved (`carried`: suite id → case id → [(name, value)]).

    A selection like any other for the code that only picks cases; the YAML runner also gives
    each skipped case's values back at the point where that case would have run.
    """

    def __init__(
        self, selection: dict[str, set[str]], carried: dict[str, dict[str, list[tuple[str, Any]]]]
    ) -> None:
        super().__init__(selection)
        self.carried = carried


class RunContext:
    """Shared state of a run (one per `run` call)."""

    def __init__(
        self,
        *,
        run_id: str,
        env: RunEnvironment,
        reporter: Reporter,
        retry: RetryPolicy | None,
        total_cases: int,
        log: EventLog | None = None,
        selection: dict[str, set[str]] | None = None,
        warm_pytest: WarmPytest | None = None,
        estimated: Collection[str] = (),
        order: CaseOrder | None = None,
    ) -> None:
        self.run_id = run_id
        self.warm_pytest = warm_pytest  # where a next run is expected: pytest kept warm for it
        self.log = log or EventLog(run_id, new_trace_id(), new_span_id(), None)
        self.selection = selection
        # values saved by passing YAML cases, kept with the run for a later resume_run
        self.saved_values: list[SavedByCase] = []
        self.finished: list[CaseResult] = []
        self.env = env
        self.reporter = reporter
        self.retry = retry
        self.started = datetime.now(UTC)
        self.http = HttpSession(env.redactor)
        self.browser = BrowserHost(env.loaded.environ)  # started by the first browser step, if any
        self.folder = env.root / ".preflight" / "runs" / run_id  # the run's files (see artifacts.py)
        self.full_failures: dict[str, Any] = {}
        self.total_cases = total_cases
        self.finished_cases = 0
        # Suites whose cases are not known before they run (pytest, shell): each counts as one
        # case in `total_cases` until it ends, and while one is left the total is not shown, so
        # the progress never reads (5/5) and then (6/6).
        self.estimated = set(estimated)
        self.touches = Touches()  # what each case touched, for the next run's affected cases
        self._case_starts: dict[str, float] = {}  # epoch ms each case started at (its touches' window)
        self.order = order  # affected cases first, carried ones left out (see `ordering`)
        self.stopped_at: str | None = None  # with fail_fast: the first failed case
        # The contracts of the services and mocks: every answer and mock request checked, coverage kept.
        self.contracts = RunContracts(env.loaded, {name: e.url for name, e in env.services.items()})

    def event(
        self,
        kind: str,
        *,
        suite: str | None = None,
        case: str | None = None,
        status: str | None = None,
        duration: int | None = None,
        at: datetime | None = None,
    ) -> None:
        """Record a suite or case event at `at` (default: now) in the run's event log.

        `at` is for events known only afterwards: a pytest case's start and end, computed from its
        JUnit report once the process has finished.
        """
        if kind == "case_end":
            kind_name = "CASE_FAILED" if status == "failed" else "CASE_FINISHED"
        else:
            kind_name = _TYPES.get(kind, kind)
            moment = (at or datetime.now(UTC)).timestamp() * 1000
            if kind == "case_start" and case is not None:
                self._case_starts[case] = moment  # a failure's evidence is gathered after its end
            elif suite is not None and kind == "suite_start":
                self.touches.suite_started(suite, moment)
            elif suite is not None and kind == "suite_end":
                self.touches.suite_ended(suite, moment)
        self.log.record(kind_name, suite=suite, case=case, status=status, duration=duration, at=at)

    def selected(self, suite: str, case: str) -> bool:
        """Whether the case runs in this run (a resumed run runs only the cases that did not pass)."""
        if self.selection is None:
            return True
        chosen = self.selection.get(suite)
        return chosen is None or case in chosen

    def stop_reason(self) -> str | None:
        """Why a case not started yet is skipped: the run stopped at its first failure (fail_fast)."""
        if self.stopped_at is None:
            return None
        return f"not run: the run stopped at its first failure ({self.stopped_at}; failFast)"

    def carried(self, suite: str, case: str) -> list[tuple[str, Any]]:
        """The values case `case` saved in the run this one resumes (it is not run again here)."""
        resumed = self.selection
        return resumed.carried.get(suite, {}).get(case, []) if isinstance(resumed, Resumed) else []

    def note_saved(self, suite: str, case: str, values: dict[str, Any]) -> None:
        """Keep what a passing case saved, marking what the redaction policy would hide."""
        redactor = self.env.redactor
        for name, value in values.items():
            redacted = redactor.secret(name) or redactor.body(value) != value
            self.saved_values.append(SavedByCase(suite, case, name, None if redacted else value, redacted))

    def traceparent(self, suite: str | None = None) -> str:
        """The `traceparent` for what runs now: the current case's span, else the suite's, else the run's."""
        case = CURRENT_CASE.get()
        if case is not None:
            span = self.log.case_span(case)
        elif suite is not None:
            span = self.log.suite_span(suite)
        else:
            span = self.log.run_span
        return format_traceparent(self.log.trace_id, span)

    def finish_suite(
        self,
        suite: SuiteConfig,
        runner: str,
        *,
        cases: list[CaseResult],
        seconds: float,
        error: str | None = None,
        warnings: list[str] | None = None,
        name: str | None = None,
    ) -> SuiteResult:
        """Count a suite's cases, record its end, and return its result, shown as `name`, else the
        suite's own name, else its id.

        A suite fails when a case failed, when it has an error, or when it recorded no case at
        all: a suite never passes empty.
        """
        if suite.id in self.estimated:
            self.estimated.discard(suite.id)
            self.total_cases += len(cases) - 1
        counts = {
            status: sum(1 for c in cases if c.status == status)
            for status in ("passed", "failed", "skipped", "carried")
        }
        status: Literal["passed", "failed"] = "failed" if counts["failed"] or error or not cases else "passed"
        duration = int(seconds * 1000)
        self.event("suite_end", suite=suite.id, status=status, duration=duration)
        return SuiteResult(
            id=suite.id,
            name=name or suite.name or suite.id,
            runner=runner,
            status=status,
            duration=duration,
            passed=counts["passed"],
            failed=counts["failed"],
            skipped=counts["skipped"],
            cases=cases,
            error=error,
            warnings=warnings or [],
            carried=counts["carried"],
        )

    def case_finished(self, result: CaseResult, *, at: datetime | None = None) -> None:
        """Report a finished case as progress and as an event (at `at`, default now)."""
        self.finished_cases += 1
        self.finished.append(result)
        if result.status == "failed" and self.order is not None and self.order.fail_fast:
            self.stopped_at = self.stopped_at or result.id
        start = self._case_starts.pop(result.id, result.timestamp - result.duration)
        self.touches.window(
            result.id, result.suite, start, result.timestamp, span=self.log.case_span(result.id)
        )
        # Suites of other runners are counted as one case until they report theirs.
        self.total_cases = max(self.total_cases, self.finished_cases)
        self.event(
            "case_end",
            suite=result.suite,
            case=result.id,
            status=result.status,
            duration=result.duration,
            at=at,
        )
        mark = {"passed": "ok", "failed": "failed", "skipped": "skipped"}[result.status]
        self.reporter.emit(
            "case",
            f"{result.status}: {result.suite} / {result.name}",
            scope=result.suite,
            status=mark,  # type: ignore[arg-type]
            done=self.finished_cases,
            total=None if self.estimated else self.total_cases,
        )


def case_id(suite: str, name: str, taken: set[str]) -> str:
    """Return a stable id for a case (`<suite>.<slug>`), unique within the run."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "case"
    candidate = f"{suite}.{slug[:60]}"
    number = 2
    while candidate in taken:
        candidate = f"{suite}.{slug[:60]}-{number}"
        number += 1
    taken.add(candidate)
    return candidate
