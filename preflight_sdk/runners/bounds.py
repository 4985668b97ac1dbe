"""Keep a run result readable as one tool reply, however many cases fail.

The first failures keep their compact detail; once the JSON passes a budget (about 20k tokens),
later failures keep only their error, summary, suggested fix and the name of the artifact with
their full record, and the result is marked `truncated`.
"""

from __future__ import annotations

import msgspec

from ..results.run import CaseResult, Failure, RunResult, SuiteResult

__all__ = ["BUDGET_CHARS", "bound_result"]

BUDGET_CHARS = 70_000


def bound_result(result: RunResult, budget: int = BUDGET_CHARS) -> RunResult:
    """Return `result`, shrinking later failures when the whole would exceed `budget` characters."""
    if len(msgspec.json.encode(result)) <= budget:
        return result
    spent = len(msgspec.json.encode(msgspec.structs.replace(result, suites=[]))) + 200
    suites: list[SuiteResult] = []
    for suite in result.suites:
        cases: list[CaseResult] = []
        for case in suite.cases:
            size = len(msgspec.json.encode(case))
            if case.failure is not None and spent + size > budget:
                case = msgspec.structs.replace(case, failure=_minimal(case.failure))
                size = len(msgspec.json.encode(case))
            spent += size
            cases.append(case)
        suites.append(msgspec.structs.replace(suite, cases=cases))
    return msgspec.structs.replace(result, suites=suites, truncated=True)


def _minimal(failure: Failure) -> Failure:
    return Failure(
        error=failure.error[:200],
        summary=failure.summary,
        suggested_fix=failure.suggested_fix,
        artifact=failure.artifact,
    )
