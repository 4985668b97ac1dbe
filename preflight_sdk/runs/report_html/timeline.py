"""The run's timeline: every span and mark on one time axis, in milliseconds from the run's start.

Where the times come from:

- the run's phases (setup, suites, teardown), suites and cases: the event log (`PHASE_*`,
  `SUITE_*`, `CASE_*` events; a case's own duration starts its bar, the rest up to its end event is
  the evidence being collected);
- each service's build (or pull), create and health: the `STEP_*` events the run records from the
  progress of its setup (`building X` or `pulling X` … `X: success`, `starting X` … `X healthy`), split into create and
  health by the setup result's `healthCheckDuration`;
- mock requests: `MOCK_REQUEST` events (the mocks' journal of the run) and the requests in each
  failure's diagnostics.

A run recorded before these events existed (or a case without events) falls back to the result:
a case ends at its `timestamp` and lasted `duration`; services without steps get no row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal

import msgspec

from preflight_sdk.core.results.run import RunResult
from preflight_sdk.suites.events import Event

__all__ = ["Lane", "Mark", "Span", "Timeline", "build_timeline"]

_NOT_SERVICES = frozenset({"mocks", "network"})
# How the setup's progress opens each stage of a service (`building api`, `pulling db (postgres:16)`).
_STAGES = {"build": "building ", "pull": "pulling ", "start": "starting "}

SpanKind = Literal[
    "phase", "build", "create", "health", "mocks", "suite", "passed", "failed", "skipped", "tail"
]


class Span(msgspec.Struct, frozen=True, kw_only=True):
    """A bar: `start` and `end` in ms from the run's start."""

    start: int
    end: int
    kind: SpanKind
    label: str
    target: str | None = None  # the id of the case it stands for (a link to its row or failure)


class Mark(msgspec.Struct, frozen=True, kw_only=True):
    """A moment: a mock request (or the failing moment of a case)."""

    at: int
    label: str
    failed: bool = False
    target: str | None = None


class Lane(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the timeline."""

    title: str
    group: Literal["phase", "service", "mock", "suite"]
    spans: list[Span] = msgspec.field(default_factory=list)
    marks: list[Mark] = msgspec.field(default_factory=list)


class Timeline(msgspec.Struct, frozen=True, kw_only=True):
    """Every lane, the axis length and the failing moments (the first failed case's end first)."""

    lanes: list[Lane]
    total: int
    failing: list[Mark] = msgspec.field(default_factory=list)
    missing: list[str] = msgspec.field(default_factory=list)  # what could not be placed, and why


def _ms(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


class _Clock:
    """Turns absolute times (epoch ms) into offsets from the run's first moment."""

    def __init__(self, origin: float) -> None:
        self.origin = origin
        self.latest = 0

    def at(self, moment: float) -> int:
        offset = max(0, round(moment - self.origin))
        self.latest = max(self.latest, offset)
        return offset


def build_timeline(result: RunResult, events: Sequence[Event]) -> Timeline:
    """Lay the run out on one axis (see the module docstring for where each time comes from)."""
    stamps = [(e, _ms(e.ts)) for e in events]
    starts = [t for _, t in stamps if t is not None]
    started = _ms(result.started_at)
    origin = min([*starts, *([started] if started is not None else [])], default=0.0)
    if not starts:
        ends = [c.timestamp - c.duration for s in result.suites for c in s.cases if c.timestamp]
        origin = min([origin, *ends]) if origin else min(ends, default=0.0)
    clock = _Clock(origin)
    lanes: list[Lane] = []
    missing: list[str] = []
    # A run that ended (an error, a cancel) with steps still open drew them to its last moment.
    ended = max(starts, default=None) if result.status not in ("running", "queued") else None
    phases = _phases(stamps, clock, ended)
    if phases.spans:
        lanes.append(phases)
    services = _services(result, stamps, clock, ended)
    if not services and result.setup is not None and result.setup.services:
        missing.append("service build, create and health times (this run recorded no setup steps)")
    lanes += services
    mocks = _mocks(result, stamps, clock)
    if mocks is not None:
        lanes.append(mocks)
    suites, failing = _suites(result, stamps, clock)
    lanes += suites
    total = max(clock.latest, 1)
    return Timeline(lanes=lanes, total=total, failing=failing, missing=missing)


def _phases(stamps: Iterable[tuple[Event, float | None]], clock: _Clock, ended: float | None) -> Lane:
    opened: dict[str, int] = {}
    spans: list[Span] = []
    for event, moment in stamps:
        if moment is None or event.phase is None:
            continue
        if event.type == "PHASE_STARTED":
            opened[event.phase] = clock.at(moment)
        elif event.type == "PHASE_FINISHED" and event.phase in opened:
            start = opened.pop(event.phase)
            spans.append(Span(start=start, end=clock.at(moment), kind="phase", label=event.phase))
    if ended is not None:
        end = clock.at(ended)
        spans += [
            Span(start=start, end=end, kind="phase", label=f"{phase} (stopped)")
            for phase, start in opened.items()
        ]
    return Lane(title="run", group="phase", spans=spans)


def _services(
    result: RunResult, stamps: Sequence[tuple[Event, float | None]], clock: _Clock, ended: float | None
) -> list[Lane]:
    health = {s.name: s.health_check_duration or 0 for s in (result.setup.services if result.setup else [])}
    lanes: dict[str, Lane] = {}
    opened: dict[str, tuple[str, int]] = {}  # service -> (stage, start) of the step in progress
    for event, moment in stamps:
        name = event.name
        if moment is None or name is None or not event.type.startswith("STEP_") or name in _NOT_SERVICES:
            continue
        message = event.message or ""
        if event.type == "STEP_STARTED":
            stage = next((s for s in ("build", "pull", "start") if message.startswith(_STAGES[s])), None)
            if stage is not None:
                opened[name] = (stage, clock.at(moment))
            continue
        if name not in opened:
            continue
        stage, begun = opened.pop(name)
        end = clock.at(moment)
        lane = lanes.setdefault(name, Lane(title=name, group="service"))
        if event.type == "STEP_FAILED":
            lane.spans.append(Span(start=begun, end=end, kind="failed", label=f"{stage} failed"))
        elif stage in ("build", "pull"):
            lane.spans.append(Span(start=begun, end=end, kind="build", label=f"{stage} {end - begun} ms"))
        else:
            healthy = min(health.get(name, 0), end - begun)
            if end - healthy > begun:
                lane.spans.append(Span(start=begun, end=end - healthy, kind="create", label="create"))
            if healthy:
                lane.spans.append(
                    Span(start=end - healthy, end=end, kind="health", label=f"health {healthy} ms")
                )
    if ended is not None:  # the step the run stopped in (a start that crashed, a health check that timed out)
        code = f" ({result.error.code})" if result.error is not None else ""
        for name, (stage, begun) in opened.items():
            lane = lanes.setdefault(name, Lane(title=name, group="service"))
            label = f"{stage} failed{code}" if result.error is not None else f"{stage} unfinished"
            lane.spans.append(
                Span(start=begun, end=max(clock.at(ended), begun + 1), kind="failed", label=label)
            )
    return list(lanes.values())


def _mocks(result: RunResult, stamps: Sequence[tuple[Event, float | None]], clock: _Clock) -> Lane | None:
    marks: dict[tuple[int, str], Mark] = {}
    for event, moment in stamps:
        if moment is not None and event.type == "MOCK_REQUEST":
            at = clock.at(moment)
            label = f"{event.name}: {event.message or ''}"
            marks[(at, label)] = Mark(at=at, label=label, failed=(event.status or "0")[:1] not in "123")
    for suite in result.suites:
        for case in suite.cases:
            diag = case.failure.diagnostics if case.failure else None
            for traffic in diag.mock_requests if diag else []:
                for request in traffic.requests:
                    moment = _ms(request.timestamp)
                    if moment is None:
                        continue
                    at = clock.at(moment)
                    label = f"{traffic.mock_name}: {request.method} {request.path} → {request.status or request.fault}"
                    marks.setdefault(
                        (at, label),
                        Mark(
                            at=at,
                            label=label,
                            failed=request.status >= 400 or not request.status,
                            target=case.id,
                        ),
                    )
    if not marks:
        return None
    return Lane(title="mock requests", group="mock", marks=sorted(marks.values(), key=lambda m: m.at))


def _suites(
    result: RunResult, stamps: Sequence[tuple[Event, float | None]], clock: _Clock
) -> tuple[list[Lane], list[Mark]]:
    suite_start: dict[str, int] = {}
    suite_end: dict[str, int] = {}
    case_start: dict[str, int] = {}
    case_end: dict[str, int] = {}
    for event, moment in stamps:
        if moment is None:
            continue
        if event.type == "SUITE_STARTED" and event.suite:
            suite_start.setdefault(event.suite, clock.at(moment))
        elif event.type == "SUITE_FINISHED" and event.suite:
            suite_end[event.suite] = clock.at(moment)
        elif event.type == "CASE_STARTED" and event.case:
            case_start[event.case] = clock.at(moment)
        elif event.type in ("CASE_FINISHED", "CASE_FAILED") and event.case:
            case_end[event.case] = clock.at(moment)
    lanes: list[Lane] = []
    failing: list[Mark] = []
    for suite in result.suites:
        spans: list[Span] = []
        for case in suite.cases:
            if case.status == "carried":
                continue  # it did not run here: nothing of it is on this run's timeline
            end = case_end.get(case.id)
            if end is None and case.timestamp:
                end = clock.at(case.timestamp)
            if end is None:
                continue
            start = case_start.get(case.id, max(0, end - case.duration))
            own = min(end, start + max(case.duration, 1))
            spans.append(
                Span(start=start, end=max(own, start + 1), kind=case.status, label=case.name, target=case.id)
            )
            if end > own + 1:
                spans.append(
                    Span(start=own, end=end, kind="tail", label="collecting evidence", target=case.id)
                )
            if case.status == "failed":
                failing.append(Mark(at=own, label=case.name, failed=True, target=case.id))
        first = min([s.start for s in spans], default=None)
        begun = suite_start.get(suite.id, first)
        if begun is None:
            continue
        finished = suite_end.get(suite.id, max([s.end for s in spans], default=begun + suite.duration))
        suite_span = Span(
            start=begun, end=max(finished, begun + 1), kind="suite", label=f"{suite.id} ({suite.duration} ms)"
        )
        lanes.append(Lane(title=f"suite {suite.id}", group="suite", spans=[suite_span, *spans]))
    failing.sort(key=lambda m: m.at)
    return lanes, failing
