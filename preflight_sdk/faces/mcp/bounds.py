"""Keep a run result readable as one MCP tool reply, however many cases fail.

A reply budget is the MCP face's concern: the SDK (and so a notebook or `preflight --json`)
returns the whole result, and the run's artifacts always hold everything. Here the first
failures keep their compact detail; once the JSON passes a budget (about 20k tokens), later
failures keep only their error, summary, suggested fix and the name of the artifact with their
full record, and the result is marked `truncated`. A same-cause group of thousands of cases names
as many of them as fit (its `count` says how many there are).
"""

from __future__ import annotations

from typing import Any

import msgspec

from preflight_sdk.core.results.grouping import group_failures
from preflight_sdk.core.results.run import CaseResult, Failure, RunResult, SameCause, SuiteResult

__all__ = ["BUDGET_CHARS", "bound_reply", "bound_result"]

BUDGET_CHARS = 70_000


def bound_reply(result: Any) -> Any:
    """Return a result as one tool reply may carry it: a `RunResult` with same-cause failures told
    once (`results.grouping`), the probes of services that became ready left out, and bounded;
    anything else as it is."""
    if not isinstance(result, RunResult):
        return result
    return bound_result(group_failures(_without_probes(result)))


def _without_probes(result: RunResult) -> RunResult:
    """A run's `setup` without the probe history of the services that became ready: the probes
    before a service answered say nothing a test run needs (report.json keeps them)."""
    setup = result.setup
    if setup is None or not any(s.readiness.ready and s.readiness.last_outcomes for s in setup.services):
        return result
    services = [
        msgspec.structs.replace(s, readiness=msgspec.structs.replace(s.readiness, last_outcomes=[]))
        if s.readiness.ready
        else s
        for s in setup.services
    ]
    return msgspec.structs.replace(result, setup=msgspec.structs.replace(setup, services=services))


def bound_result(result: RunResult, budget: int = BUDGET_CHARS) -> RunResult:
    """Return `result`, shrinking later failures when the whole would exceed `budget` characters.

    Room is kept for every failure in its minimal form first, so the earliest failures get what
    is left in full and the total stays within the budget whatever the number of failures.
    """
    if len(msgspec.json.encode(result)) <= budget:
        return result
    result = _fewer_members(result, budget)
    shrunk = [
        [
            msgspec.structs.replace(case, failure=_minimal(case.failure))
            if case.failure is not None
            else case
            for case in suite.cases
        ]
        for suite in result.suites
    ]
    smallest = msgspec.structs.replace(
        result,
        suites=[msgspec.structs.replace(s, cases=c) for s, c in zip(result.suites, shrunk, strict=True)],
        truncated=True,
    )
    spent = len(msgspec.json.encode(smallest))
    room = True
    suites: list[SuiteResult] = []
    for suite, small_cases in zip(result.suites, shrunk, strict=True):
        cases: list[CaseResult] = []
        for case, small in zip(suite.cases, small_cases, strict=True):
            if case.failure is not None and room:
                extra = len(msgspec.json.encode(case)) - len(msgspec.json.encode(small))
                if spent + extra <= budget:
                    spent += extra
                    cases.append(case)
                    continue
                room = False  # the first failures stay whole; every later one is minimal
            cases.append(small)
        suites.append(msgspec.structs.replace(suite, cases=cases))
    return msgspec.structs.replace(result, suites=suites, truncated=True)


# A group whose members do not fit names at least this many of them.
MIN_MEMBERS = 20


def _fewer_members(result: RunResult, budget: int) -> RunResult:
    """`result` with the members named by each same-cause group cut (to a half of the budget
    between them) when the lists alone would not fit: `count` still says how many failed, and
    report.json names them all."""
    groups = [c.failure.same_cause for c in result.failures() if c.failure and c.failure.same_cause]
    if not groups:
        return result
    cap = max(len(group.cases) for group in groups)
    while cap > MIN_MEMBERS and len(msgspec.json.encode(_groups_cut(groups, cap))) > budget // 2:
        cap = max(MIN_MEMBERS, cap // 2)
    if cap >= max(len(group.cases) for group in groups):
        return result
    suites = []
    for suite in result.suites:
        cases = []
        for case in suite.cases:
            same = case.failure.same_cause if case.failure is not None else None
            if case.failure is not None and same is not None and len(same.cases) > cap:
                cut = msgspec.structs.replace(same, cases=same.cases[:cap], names=same.names[:cap])
                case = msgspec.structs.replace(
                    case, failure=msgspec.structs.replace(case.failure, same_cause=cut)
                )
            cases.append(case)
        suites.append(msgspec.structs.replace(suite, cases=cases))
    return msgspec.structs.replace(result, suites=suites, truncated=True)


def _groups_cut(groups: list[SameCause], cap: int) -> list[SameCause]:
    """The groups with at most `cap` members named each."""
    return [msgspec.structs.replace(g, cases=g.cases[:cap], names=g.names[:cap]) for g in groups]


def _minimal(failure: Failure) -> Failure:
    return Failure(
        error=failure.error[:200],
        summary=failure.summary,
        suggested_fix=failure.suggested_fix,
        artifact=failure.artifact,
        same_cause=failure.same_cause,
    )
