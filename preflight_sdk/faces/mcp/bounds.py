"""Keep a run result readable as one MCP tool reply, however many cases fail.

A reply budget is the MCP face's concern: the SDK (and so a notebook or `preflight --json`)
returns the whole result, and the run's artifacts always hold everything. Here the first
failures keep their compact detail; once the JSON passes a budget (about 20k tokens), later
failures keep only their error, summary, suggested fix and the name of the artifact with their
full record, and the result is marked `truncated`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from preflight_sdk.core.results.grouping import group_failures
from preflight_sdk.core.results.run import CaseResult, Failure, RunResult, SuiteResult

__all__ = ["BUDGET_CHARS", "bound_reply", "bound_result"]

BUDGET_CHARS = 70_000


def bound_reply(result: Any) -> Any:
    """Return a result as one tool reply may carry it: a `RunResult` with same-cause failures told
    once (`results.grouping`) and bounded, anything else as it is."""
    return bound_result(group_failures(result)) if isinstance(result, RunResult) else result


def bound_result(result: RunResult, budget: int = BUDGET_CHARS) -> RunResult:
    """Return `result`, shrinking later failures when the whole would exceed `budget` characters.

    Room is kept for every failure in its minimal form first, so the earliest failures get what
    is left in full and the total stays within the budget whatever the number of failures.
    """
    if len(msgspec.json.encode(result)) <= budget:
        return result
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


def _minimal(failure: Failure) -> Failure:
    return Failure(
        error=failure.error[:200],
        summary=failure.summary,
        suggested_fix=failure.suggested_fix,
        artifact=failure.artifact,
        same_cause=failure.same_cause,
    )
