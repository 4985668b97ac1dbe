"""Turn the testcases of a JUnit report into case results, on the run's timeline.

Shared by every runner whose command writes JUnit (pytest, a shell suite with `junit:`): a case
per testcase, its failure message and text, its captured output, its skip reason, its start and
end on the timeline (from the report's time stamps and durations, kept within the time the
command ran), and, when the suite ran more than once, its result in each run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Literal

import msgspec

from preflight_sdk.core.results.browser import BrowserEvidence
from preflight_sdk.core.results.run import AttemptResult, CaseResult, DiagnosticReport

from ..cases import failure_from_text
from ..context import RunContext, case_id
from .junit_read import JUnitCase

__all__ = [
    "JUnitTry",
    "attempts_of",
    "case_starts",
    "display_name",
    "first_message",
    "junit_case",
    "skip_reason",
    "verdict",
]


class JUnitTry(msgspec.Struct, frozen=True, kw_only=True):
    """One run of a command and the testcases its report gave, with the time it ran."""

    tests: list[JUnitCase]
    started: datetime
    ended: datetime

    def starts(self) -> list[datetime]:
        return case_starts(self.tests, started=self.started, ended=self.ended)


def case_starts(tests: Sequence[JUnitCase], *, started: datetime, ended: datetime) -> list[datetime]:
    """Each test's start: its own from the report, else just after the test before it.

    JUnit has no per-test time stamp in most dialects, only a suite's start and each test's
    duration; a report without times starts at the command's start. Every start is kept within
    the time the command ran.
    """
    moment = started
    starts: list[datetime] = []
    for test in tests:
        if test.started is not None:
            moment = test.started
        starts.append(min(max(moment, started), ended))
        moment += timedelta(seconds=test.time)
    return starts


def verdict(test: JUnitCase) -> Literal["passed", "failed", "skipped"]:
    """A testcase's case status: an error is a failure."""
    if test.status in ("failed", "error"):
        return "failed"
    return "skipped" if test.status == "skipped" else "passed"


_GO_LINE = re.compile(r"^\s+\S+\.go:\d+: (.*)$", re.MULTILINE)
_GENERIC_MESSAGES = {"", "failed", "failure", "error"}
_LOCATION = re.compile(r"^\S+:\d+:\d+ ")  # Playwright's message: `file:line:column title`
_ERROR_LINE = re.compile(r"^\s*(\w*Error\b.*)$", re.MULTILINE)
_HURL_MARK = re.compile(r"^\s*\|\s*\^+\s*(.+)$", re.MULTILINE)  # Hurl's `| ^^^^ actual value is <…>`


def first_message(test: JUnitCase) -> str:
    """The most telling line of a failure: its message, else the line of its text that says why.

    Writers put the reason in different places: pytest, Vitest and Surefire in `message`;
    jest-junit only in the text; gotestsum writes `message="Failed"` and the test's output (the
    last `file.go:N: …` line is the failing check); Playwright's message is the test's location
    (the text's `Error: …` line says why); Hurl's text names the assert, then marks the value.
    """
    message = " ".join(test.message.split())  # XML turns a newline in an attribute into a space
    detail = test.detail
    if _LOCATION.match(message) and (error := _ERROR_LINE.search(detail)):
        return error.group(1).strip()
    if message.lower() not in _GENERIC_MESSAGES:
        return message
    if "--- FAIL" in detail and (lines := _GO_LINE.findall(detail)):
        return str(lines[-1]).strip()
    first = next((line.strip() for line in detail.splitlines() if line.strip()), "")
    if (mark := _HURL_MARK.search(detail)) is not None and first:
        return f"{first}: {mark.group(1).strip()}"
    return first or message or "failed"


def skip_reason(test: JUnitCase) -> str:
    """Why a test was skipped (gotestsum puts the test's output in `message`: its last line says)."""
    text = test.message or test.detail
    if "--- SKIP" in text and (lines := _GO_LINE.findall(text)):
        return str(lines[-1]).strip()
    return text.strip().splitlines()[0] if text.strip() else "skipped"


_GENERIC_NAMES = {"test", "root suite", "jest tests", "vitest tests", "mocha tests"}


def display_name(test: JUnitCase) -> str:
    """A readable, specific name from a testcase's suite, classname and name, without repeats.

    Each writer fills these three differently (Jest repeats the title in all; Newman names the
    request in the suite and the check in the case; Go and Surefire put the package or class in
    `classname`): a part contained in a later one, equal to one kept, or a placeholder such as
    Node's `test` is left out.
    """
    parts = [test.suite, test.classname, test.name]
    keys = [re.sub(r"[\W_]+", "", part.lower()) for part in parts]
    kept: list[str] = []
    kept_keys: list[str] = []
    for index, (part, key) in enumerate(zip(parts, keys, strict=True)):
        if not key or part.strip().lower() in _GENERIC_NAMES or key in kept_keys:
            continue
        if any(key in later and key != later for later in keys[index + 1 :]):
            continue
        kept.append(part.strip())
        kept_keys.append(key)
    return " > ".join(kept) or test.name or "(unnamed test)"


def junit_case(
    run: RunContext,
    suite: str,
    test: JUnitCase,
    *,
    name: str,
    start: datetime,
    ended: datetime,
    taken: set[str],
    diagnostics: DiagnosticReport | None,
    attempts: list[AttemptResult] | None = None,
    identifier: str | None = None,
    browser: BrowserEvidence | None = None,
) -> CaseResult:
    """Record one testcase as a case of `suite` (its start and end events included).

    `ended` is when the command finished: a case never ends after it. `browser` is a failed
    browser test's page evidence (its screenshot and trace).
    """
    name = run.env.redactor.text(name)
    identifier = identifier or case_id(suite, name, taken)
    end = min(start + timedelta(seconds=test.time), ended)
    run.event("case_start", suite=suite, case=identifier, at=start)
    status = verdict(test)
    failure = None
    if status == "failed":
        first = first_message(test)
        failure = failure_from_text(
            run,
            identifier,
            error=first or "failed",
            summary=f"{name} failed: {first.splitlines()[0] if first else 'see output'}"[:300],
            output="\n".join(part for part in (test.detail, test.stdout, test.stderr) if part) or None,
            diagnostics=diagnostics,
            browser=browser,
        )
    case = CaseResult(
        id=identifier,
        name=name,
        suite=suite,
        status=status,
        duration=int(test.time * 1000),
        timestamp=int(end.timestamp() * 1000),
        failure=failure,
        attempts=attempts or _reruns(test, start),
        skip_reason=skip_reason(test) if status == "skipped" else None,
    )
    run.case_finished(case, at=end)
    return case


def attempts_of(
    tries: Sequence[JUnitTry], test: JUnitCase, same: Callable[[JUnitCase, JUnitCase], bool]
) -> list[AttemptResult]:
    """The attempts of one test: its result in each run of the command that reported it."""
    attempts: list[AttemptResult] = []
    for number, attempt in enumerate(tries, start=1):
        for earlier, start in zip(attempt.tests, attempt.starts(), strict=True):
            if not same(earlier, test):
                continue
            failed = verdict(earlier) == "failed"
            attempts.append(
                AttemptResult(
                    attempt=number,
                    passed=not failed,
                    duration=int(earlier.time * 1000),
                    timestamp=int(start.timestamp() * 1000),
                    error=(first_message(earlier).splitlines() or ["failed"])[0][:300] if failed else None,
                )
            )
            break
    return attempts


def _reruns(test: JUnitCase, start: datetime) -> list[AttemptResult] | None:
    """The runs a tool made of a test itself (Surefire's `rerunFailingTestsCount`), then the last."""
    if not test.reruns:
        return None
    moment = start
    attempts: list[AttemptResult] = []
    for number, rerun in enumerate(test.reruns, start=1):
        line = (rerun.message or rerun.detail or "failed").strip().splitlines()[0][:300]
        attempts.append(
            AttemptResult(
                attempt=number,
                passed=False,
                duration=int(rerun.time * 1000),
                timestamp=int(moment.timestamp() * 1000),
                error=line,
            )
        )
        moment += timedelta(seconds=rerun.time)
    final = verdict(test)
    attempts.append(
        AttemptResult(
            attempt=len(attempts) + 1,
            passed=final != "failed",
            duration=int(test.time * 1000),
            timestamp=int(moment.timestamp() * 1000),
            error=first_message(test).splitlines()[0][:300] if final == "failed" else None,
        )
    )
    return attempts
