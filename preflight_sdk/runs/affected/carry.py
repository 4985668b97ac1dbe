"""Carried verdicts: a case a run does not run, standing with the verdict of the run that ran it.

One notion for every run that runs part of the cases: an `affected=True` run carries what no
edit could change, a resumed run carries what passed in the run it resumes, and `diff_runs`
compares a resumed run with what it carried, so a case it did not run again is unchanged, never
`removed`. A verdict is carried from the run that ran the case, never from a run that carried it,
and a failure is never carried.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from preflight_sdk.core.results.affected import CarriedVerdict
from preflight_sdk.core.results.run import CaseResult, RunResult
from preflight_sdk.suites.ordering import CaseOrder

__all__ = ["carried_from", "outcomes", "resumed_order"]


def carried_from(case: CaseResult, run: RunResult, *, at: datetime) -> CaseResult | None:
    """`case` of `run` as a later run (starting `at`) carries it; None for a failure."""
    if case.status == "carried" and case.carried is not None:
        source = case.carried
        verdict = CarriedVerdict(
            run_id=source.run_id,
            status=source.status,
            started_at=source.started_at,
            age=_age(source.started_at, at),
        )
    elif case.status in ("passed", "skipped"):
        status: str = case.status
        verdict = CarriedVerdict(
            run_id=run.run_id,
            status="passed" if status == "passed" else "skipped",
            started_at=run.started_at,
            age=_age(run.started_at, at),
        )
    else:
        return None
    return CaseResult(
        id=case.id,
        name=case.name,
        suite=case.suite,
        status="carried",
        duration=0,
        timestamp=int(at.timestamp() * 1000),
        carried=verdict,
        engine=case.engine,
    )


def outcomes(head: RunResult, resumed: RunResult | None) -> dict[str, CaseResult]:
    """Every case of `head` by id; for a resumed head, also each case of the run it resumed that it
    did not run again (and did not list: a run recorded before carried cases were), as carried."""
    found = {case.id: case for suite in head.suites for case in suite.cases}
    if resumed is None:
        return found
    at = datetime.fromisoformat(head.started_at.replace("Z", "+00:00"))
    for suite in resumed.suites:
        for case in suite.cases:
            if case.id not in found:
                carried = carried_from(case, resumed, at=at)
                if carried is not None:
                    found[case.id] = carried
    return found


def _age(started_at: str, at: datetime) -> int:
    then = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    return max(0, int((at - then).total_seconds() * 1000))


def resumed_order(original: RunResult, selection: Mapping[str, set[str]] | None) -> CaseOrder:
    """What a run resuming `original` carries: each case of the suites it selects cases of that it
    does not run again (a suite with none to run again is carried whole; a suite it runs whole,
    absent from `selection`, carries nothing)."""
    at = datetime.now(UTC)
    carried: dict[str, dict[str, CaseResult]] = {}
    chosen_by_suite = selection or {}
    for suite in original.suites:
        chosen = chosen_by_suite.get(suite.id)
        if chosen is None:
            continue
        kept = {}
        for case in suite.cases:
            again = carried_from(case, original, at=at) if case.id not in chosen else None
            if again is not None:
                kept[case.id] = again
        carried[suite.id] = kept
    whole = frozenset(sid for sid, chosen in chosen_by_suite.items() if not chosen)
    return CaseOrder(carried=carried, whole=whole)
