"""What every suite of one run shares: the environment, the HTTP pool, the clock, the event log."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from ..config.model import RetryPolicy
from ..progress import Reporter
from ..results.run import CaseResult, SuiteResult
from .environment import RunEnvironment
from .http import HttpSession

__all__ = ["Event", "RunContext", "case_id"]


class Event(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One line of events.ndjson."""

    type: str
    timestamp: str
    suite: str | None = None
    case: str | None = None
    status: str | None = None
    duration: int | None = None


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
    ) -> None:
        self.run_id = run_id
        self.env = env
        self.reporter = reporter
        self.retry = retry
        self.started = datetime.now(UTC)
        self.http = HttpSession(env.redactor)
        self.events: list[Event] = []
        self.full_failures: dict[str, Any] = {}
        self.total_cases = total_cases
        self.finished_cases = 0

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
        """Record an event at `at` (default: now).

        `at` is for events known only afterwards: a pytest case's start and end, computed from its
        JUnit report once the process has finished.
        """
        moment = (at or datetime.now(UTC)).astimezone(UTC)
        stamp = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.events.append(
            Event(type=kind, timestamp=stamp, suite=suite, case=case, status=status, duration=duration)
        )

    def finish_suite(
        self,
        *,
        id: str,
        name: str,
        runner: str,
        cases: list[CaseResult],
        seconds: float,
        error: str | None = None,
        warnings: list[str] | None = None,
    ) -> SuiteResult:
        """Count a suite's cases, record its end, and return its result.

        A suite fails when a case failed, when it has an error, or when it recorded no case at
        all: a suite never passes empty.
        """
        counts = {
            status: sum(1 for c in cases if c.status == status) for status in ("passed", "failed", "skipped")
        }
        status: Literal["passed", "failed"] = "failed" if counts["failed"] or error or not cases else "passed"
        duration = int(seconds * 1000)
        self.event("suite_end", suite=id, status=status, duration=duration)
        return SuiteResult(
            id=id,
            name=name,
            runner=runner,
            status=status,
            duration=duration,
            passed=counts["passed"],
            failed=counts["failed"],
            skipped=counts["skipped"],
            cases=cases,
            error=error,
            warnings=warnings or [],
        )

    def case_finished(self, result: CaseResult, *, at: datetime | None = None) -> None:
        """Report a finished case as progress and as an event (at `at`, default now)."""
        self.finished_cases += 1
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
            total=self.total_cases,
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
