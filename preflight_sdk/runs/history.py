"""History inside every failure, and the cause of a failure as diff_runs compares it.

A failed case gets `history: {lastPassedRunId, failingSinceRunId, recent, flaky}` from the runs
the store already holds. A case is flaky when, under one config hash and git commit (a clean
tree), it both passed and failed, or when it passed only on a retry: the code did not change,
the outcome did.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from preflight_sdk.core.results.run import CaseHistory, CaseResult, RunResult, SuiteResult
from preflight_sdk.store import CaseRow, RunStore

__all__ = ["RECENT", "case_rows", "cause_of", "with_history"]

RECENT = 10
_LETTER = {"passed": "P", "failed": "F", "skipped": "S"}
_NUMBERS = re.compile(r"\d+")


def cause_of(case: CaseResult) -> str | None:
    """A short signature of why a case failed: its first failed assertion, response status and error.

    Numbers inside free text are masked, so a changed port or duration is not a new cause.
    """
    failure = case.failure
    if case.status != "failed" or failure is None:
        return None
    parts: list[str] = []
    failed = next((a for a in failure.assertions if not a.passed), None)
    if failed is not None:
        parts.append(
            f"assert {failed.path} {failed.operator} {msgspec.json.encode(failed.expected, enc_hook=str).decode()[:80]}"
        )
    if failure.response is not None:
        parts.append(f"status {failure.response.status}")
    if failed is None:
        parts.append(_NUMBERS.sub("N", failure.error.splitlines()[0] if failure.error else "")[:120])
    logs = failure.diagnostics.container_logs if failure.diagnostics else []
    line = next((ln for log in logs for ln in reversed(log.lines) if _looks_bad(ln)), None)
    if line is not None:
        parts.append("log " + _NUMBERS.sub("N", line)[-120:])
    return " | ".join(parts)


def _looks_bad(line: str) -> bool:
    lowered = line.lower()
    return any(word in lowered for word in ("error", "exception", "traceback", "fatal", "panic"))


def case_rows(result: RunResult, touches: Callable[[str], list[str]] | None = None) -> list[CaseRow]:
    """The store rows of the cases a run ran (a carried verdict is no outcome of this run), with
    what each touched (`touches`; None: not known)."""
    return [
        CaseRow(
            case_id=case.id,
            suite=case.suite,
            name=case.name,
            status=case.status,
            duration_ms=case.duration,
            attempts=len(case.attempts) if case.attempts else 1,
            passed_on_retry=case.status == "passed" and len(case.attempts or []) > 1,
            cause=cause_of(case),
            touches=touches(case.id) if touches is not None else None,
        )
        for suite in result.suites
        for case in suite.cases
        if case.status != "carried"
    ]


def with_history(
    store: RunStore, result: RunResult, config_hash: str | None, commit: str | None
) -> RunResult:
    """`result` with `history` on each failed case, from the runs before it (blocking)."""
    failed = [c.id for c in result.failures()]
    if not failed:
        return result
    past = store.case_history(failed, limit=RECENT - 1)
    last_passed = store.last_passed(failed)
    histories: dict[str, CaseHistory] = {}
    for case_id in failed:
        rows: list[dict[str, Any]] = [r for r in past.get(case_id, []) if r["run_id"] != result.run_id]
        outcomes = [r["status"] for r in reversed(rows)] + ["failed"]
        since = result.run_id
        for row in rows:  # newest first: walk back through the current streak of failures
            if row["status"] != "failed":
                break
            since = row["run_id"]
        same = [
            r["status"]
            for r in rows
            if r["config_hash"] == config_hash and r["git_commit"] == commit and not r["git_dirty"]
        ]
        flaky = "passed" in same or any(r["passed_on_retry"] for r in rows)
        histories[case_id] = CaseHistory(
            last_passed_run_id=last_passed.get(case_id),
            failing_since_run_id=since,
            recent="".join(_LETTER.get(s, "?") for s in outcomes),
            flaky=flaky,
        )
    return msgspec.structs.replace(result, suites=[_annotate(s, histories) for s in result.suites])


def _annotate(suite: SuiteResult, histories: dict[str, CaseHistory]) -> SuiteResult:
    if not any(c.id in histories for c in suite.cases):
        return suite
    cases = [
        msgspec.structs.replace(c, history=histories[c.id]) if c.id in histories else c for c in suite.cases
    ]
    return msgspec.structs.replace(suite, cases=cases)
