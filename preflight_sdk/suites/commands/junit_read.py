"""Read the JUnit XML reports test tools write, as they write them: one `JUnitCase` per testcase.

The dialects differ in small ways and this reader takes them all: a `<testsuites>` root or a bare
`<testsuite>` (Maven Surefire, one file per class), testcases with no suite at all (Node's test
runner), suites inside suites, `message` on the failure element (pytest, Vitest, Surefire) or only
its text (jest-junit, Hurl), `<error>` beside `<failure>`, `<skipped>` with or without a reason,
Surefire's reruns (`flakyFailure`, `rerunFailure`), times with a thousands separator, and suite
time stamps with an offset, in UTC without one (jest-junit, mocha) or in local time without one
(older pytest).

A report is written by the project's own command, so it is read as untrusted input: parsed by
expat directly, with entity declarations refused (nothing is expanded or fetched), and bounded:
a file past `max_bytes` is not read, at most `max_cases` cases are kept (the rest are counted),
and each text is cut to a bound. Reading never raises: a file that cannot be read is a `problem`.
"""

from __future__ import annotations

import xml.parsers.expat as expat
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import msgspec

__all__ = [
    "JUnitCase",
    "JUnitLimits",
    "JUnitReport",
    "JUnitRerun",
    "read_junit",
    "read_junit_files",
]

Status = Literal["passed", "failed", "error", "skipped"]
_OUTCOMES: dict[str, Status] = {"failure": "failed", "error": "error", "skipped": "skipped"}
_RERUNS = ("flakyFailure", "flakyError", "rerunFailure", "rerunError")
_PRIORITY: dict[Status, int] = {"failed": 3, "error": 2, "skipped": 1, "passed": 0}


class JUnitLimits(msgspec.Struct, frozen=True, kw_only=True):
    """How much of a report is read: bytes per file, cases in all, characters per text."""

    max_bytes: int = 256 * 1024 * 1024
    max_cases: int = 10_000
    max_text: int = 64_000
    max_files: int = 1_000


class JUnitRerun(msgspec.Struct, frozen=True, kw_only=True):
    """A run of a test before its last one (Surefire's `flakyFailure`, `rerunFailure`…)."""

    status: Literal["failed", "error"]
    message: str = ""
    detail: str = ""
    time: float = 0.0


class JUnitCase(msgspec.Struct, frozen=True, kw_only=True):
    """One `<testcase>` of a JUnit report.

    Attributes:
        suite: the name of the `<testsuite>` it is in ("" when it is in none).
        classname, name: its attributes as written.
        file: its `file` attribute, else its suite's (mocha, Cypress, Jest write one).
        time: its duration in seconds.
        status: `failed` (a `<failure>`), `error` (an `<error>`), `skipped` or `passed`.
        message: the outcome element's `message` (for a failure or a skip).
        kind: the outcome element's `type` (`AssertionError`, `pytest.skip`…).
        detail: the outcome elements' text (a stack trace), one after the other.
        stdout, stderr: its `<system-out>` and `<system-err>`.
        started: when it started, from its own time stamp or its suite's and the durations of the
            cases before it in that suite (None when the report gives no time).
        reruns: earlier runs of it that failed (Surefire's reruns of a flaky test).
    """

    suite: str = ""
    classname: str = ""
    name: str = ""
    file: str = ""
    time: float = 0.0
    status: Status = "passed"
    message: str = ""
    kind: str = ""
    detail: str = ""
    stdout: str = ""
    stderr: str = ""
    started: datetime | None = None
    reruns: list[JUnitRerun] = msgspec.field(default_factory=list)


class JUnitReport(msgspec.Struct, frozen=True, kw_only=True):
    """The cases of one or more JUnit files, in document order.

    Attributes:
        started: the first suite's start, when a report says.
        cases: the cases read (at most `JUnitLimits.max_cases`).
        left_out: cases past that bound, counted but not kept.
        files: the files read.
        problems: a sentence per file that could not be read (not XML, too large, entities…).
    """

    started: datetime | None = None
    cases: list[JUnitCase] = msgspec.field(default_factory=list)
    left_out: int = 0
    files: list[str] = msgspec.field(default_factory=list)
    problems: list[str] = msgspec.field(default_factory=list)


def read_junit(
    path: Path, *, limits: JUnitLimits | None = None, window: tuple[datetime, datetime] | None = None
) -> JUnitReport:
    """Return the test cases of one JUnit XML file (a file that cannot be read is a `problem`).

    `window` is when the command that wrote it ran: a time stamp without an offset is read as
    local time or as UTC, whichever falls in it (the writers disagree).
    """
    return read_junit_files([path], limits=limits, window=window)


def read_junit_files(
    paths: Iterable[Path],
    *,
    limits: JUnitLimits | None = None,
    window: tuple[datetime, datetime] | None = None,
) -> JUnitReport:
    """Return the test cases of several JUnit files, in the order given (see `read_junit`)."""
    bounds = limits or JUnitLimits()
    reader = _Reader(bounds, window)
    files: list[str] = []
    problems: list[str] = []
    for number, path in enumerate(paths):
        if number >= bounds.max_files:
            problems.append(f"only the first {bounds.max_files} reports were read")
            break
        files.append(str(path))
        problem = reader.read(path)
        if problem is not None:
            problems.append(f"{path}: {problem}")
    return JUnitReport(
        started=reader.first_start,
        cases=reader.cases,
        left_out=reader.left_out,
        files=files,
        problems=problems,
    )


class _Refused(Exception):
    """A construct the reader does not accept (an entity declaration)."""


class _Text:
    """Character data gathered up to a bound."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.cut = 0

    def add(self, data: str) -> None:
        room = self.limit - self.size
        if room <= 0:
            self.cut += len(data)
            return
        self.parts.append(data[:room])
        self.size += min(room, len(data))
        self.cut += max(0, len(data) - room)

    def value(self) -> str:
        text = "".join(self.parts).strip()
        return text + (f"\n… [{self.cut} more characters]" if self.cut else "")


class _Suite:
    def __init__(self, name: str, file: str, moment: datetime | None) -> None:
        self.name = name
        self.file = file
        self.cursor = moment  # the start of the next case, when the suite gives a time


class _Case:
    def __init__(self, attrs: dict[str, str], suite: _Suite | None, limit: int) -> None:
        self.attrs = attrs
        self.suite = suite
        self.status: Status = "passed"
        self.message = ""
        self.kind = ""
        self.detail = _Text(limit)
        self.stdout = _Text(limit)
        self.stderr = _Text(limit)
        self.reruns: list[JUnitRerun] = []


class _Reader:
    """expat callbacks that build cases as the file streams by (no tree is kept)."""

    def __init__(self, limits: JUnitLimits, window: tuple[datetime, datetime] | None) -> None:
        self.limits = limits
        self.window = window
        self.cases: list[JUnitCase] = []
        self.left_out = 0
        self.first_start: datetime | None = None

    def read(self, path: Path) -> str | None:
        try:
            size = path.stat().st_size
            if size > self.limits.max_bytes:
                return f"the report is {size // (1024 * 1024)} MB, more than the {self.limits.max_bytes // (1024 * 1024)} MB read"
            with path.open("rb") as stream:
                return self._parse(stream.read())
        except OSError as exc:
            return f"cannot read it: {exc.strerror or exc}"

    def _parse(self, data: bytes) -> str | None:
        self.suites: list[_Suite] = []
        self.case: _Case | None = None
        self.texts: list[_Text | None] = []
        self.rerun: tuple[str, dict[str, str], _Text] | None = None
        self.root_seen = False
        parser = expat.ParserCreate()
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.EntityDeclHandler = self._entity
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._characters
        try:
            parser.Parse(data, True)
        except _Refused as exc:
            return str(exc)
        except expat.ExpatError as exc:
            return f"not XML ({expat.errors.messages[exc.code]} at line {exc.lineno}, column {exc.offset})"
        if not self.root_seen:
            return "not a JUnit report (no <testsuites>, <testsuite> or <testcase> element)"
        return None

    def _entity(self, *_: object) -> None:
        raise _Refused("the report declares XML entities, which are not expanded: rejected")

    def _start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag in ("testsuites", "testsuite", "testcase"):
            self.root_seen = True
        target: _Text | None = None
        if tag == "testsuite":
            parent = self.suites[-1] if self.suites else None
            moment = _moment(attrs.get("timestamp", ""), self.window)
            if moment is None and parent is not None:
                moment = parent.cursor
            self.suites.append(_Suite(attrs.get("name", ""), attrs.get("file", ""), moment))
            if moment is not None and self.first_start is None:
                self.first_start = moment
        elif tag == "testcase":
            self.case = _Case(attrs, self.suites[-1] if self.suites else None, self.limits.max_text)
        elif self.case is not None and self.rerun is None:
            target = self._case_child(tag, attrs)
        self.texts.append(target)

    def _case_child(self, tag: str, attrs: dict[str, str]) -> _Text | None:
        case = self.case
        assert case is not None
        if tag in _OUTCOMES:
            status = _OUTCOMES[tag]
            if _PRIORITY[status] > _PRIORITY[case.status]:
                case.status = status
                case.message = attrs.get("message", "") or ""
                case.kind = attrs.get("type", "") or ""
            return case.detail
        if tag in _RERUNS:
            self.rerun = (tag, attrs, _Text(self.limits.max_text))
            return self.rerun[2]
        if tag == "system-out":
            return case.stdout
        if tag == "system-err":
            return case.stderr
        return None

    def _characters(self, data: str) -> None:
        if self.rerun is not None:
            self.rerun[2].add(data)
        elif self.texts and (target := self.texts[-1]) is not None:
            target.add(data)

    def _end(self, tag: str) -> None:
        self.texts.pop()
        if self.rerun is not None and tag == self.rerun[0] and self.case is not None:
            kind, attrs, text = self.rerun
            self.case.reruns.append(
                JUnitRerun(
                    status="failed" if "Failure" in kind else "error",
                    message=attrs.get("message", "") or "",
                    detail=text.value(),
                    time=_seconds(attrs.get("time", "")),
                )
            )
            self.rerun = None
        elif tag == "testcase" and self.case is not None:
            self._keep(self.case)
            self.case = None
        elif tag == "testsuite" and self.suites:
            self.suites.pop()

    def _keep(self, case: _Case) -> None:
        suite = case.suite
        time = _seconds(case.attrs.get("time", ""))
        started = _moment(case.attrs.get("timestamp", ""), self.window)
        if started is None and suite is not None:
            started = suite.cursor
        if suite is not None and started is not None:
            suite.cursor = started + timedelta(seconds=time)
        if len(self.cases) >= self.limits.max_cases:
            self.left_out += 1
            return
        self.cases.append(
            JUnitCase(
                suite=suite.name if suite else "",
                classname=case.attrs.get("classname", ""),
                name=case.attrs.get("name", ""),
                file=case.attrs.get("file", "") or (suite.file if suite else ""),
                time=time,
                status=case.status,
                message=case.message[: self.limits.max_text],
                kind=case.kind,
                detail=case.detail.value(),
                stdout=case.stdout.value(),
                stderr=case.stderr.value(),
                started=started,
                reruns=case.reruns,
            )
        )


def _seconds(text: str) -> float:
    """A `time` attribute in seconds: `0.25`, `1,234.5` (Surefire past 1000 s); anything else is 0."""
    try:
        value = float(text.replace(",", "").strip() or 0)
    except ValueError:
        return 0.0
    return value if value >= 0 and value == value and value != float("inf") else 0.0


def _moment(text: str, window: tuple[datetime, datetime] | None) -> datetime | None:
    """A time stamp as an aware UTC time; a naive one as local time or UTC, whichever fits `window`."""
    text = text.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        return moment.astimezone(UTC)
    local = moment.astimezone(UTC)  # a naive time read as this machine's local time
    as_utc = moment.replace(tzinfo=UTC)
    if window is not None and local != as_utc:
        slack = timedelta(seconds=2)
        start, end = window[0] - slack, window[1] + slack
        if not start <= local <= end and start <= as_utc <= end:
            return as_utc
    return local
