"""Same-cause failures: how a cause is compared, and how a grouped run reads on each face."""

from __future__ import annotations

import msgspec

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.results.grouping import cause_key, group_failures, normalise
from preflight_sdk.core.results.run import (
    Artifact,
    CaseResult,
    ContainerLogInfo,
    DiagnosticReport,
    Failure,
    ResponseInfo,
    RunResult,
    SuiteResult,
    Totals,
)
from preflight_sdk.faces.notebook.static import render_text


def case(
    n: int, *, status: int = 500, log: str = "KeyError: 'price'", actual_body: object = None, suite: str = "s"
) -> CaseResult:
    body = actual_body if actual_body is not None else {"error": "internal error", "trace": f"req-{n}a9"}
    return CaseResult(
        id=f"{suite}.case-{n}",
        name=f"case {n}",
        suite=suite,
        status="failed",
        duration=3,
        timestamp=n,
        failure=Failure(
            error=f"status: expected to equal 400, got {status}",
            summary=f"POST /orders returned {status} at 2026-01-0{1 + n % 9}T10:00:0{n % 10}Z for order ord_{n}",
            assertions=[
                AssertionResult(
                    path="status", operator="equals", expected=400, actual=status, passed=False, message="m"
                ),
                AssertionResult(
                    path="body",
                    operator="equals",
                    expected={"ok": True},
                    actual=body,
                    passed=False,
                    message="m",
                ),
            ],
            response=ResponseInfo(status=status, body=body),
            diagnostics=DiagnosticReport(
                collected_at=n,
                container_logs=[
                    ContainerLogInfo(
                        container_name="orders",
                        lines=[f"POST /orders {n} -> {status}", f"stderr: {log}"],
                        line_count=2,
                    )
                ],
            ),
            artifact=f"cases/{suite}.case-{n}.json",
        ),
    )


def run_of(cases: list[CaseResult]) -> RunResult:
    suites = {}
    for c in cases:
        suites.setdefault(c.suite, []).append(c)
    return RunResult(
        run_id="01JDQ8ZK5X7N3V9G2H4M6P8R0T",
        status="failed",
        summary="failed",
        totals=Totals(passed=0, failed=len(cases), skipped=0, total=len(cases)),
        duration=9,
        suites=[
            SuiteResult(
                id=s,
                name=s,
                runner="yaml",
                status="failed",
                duration=1,
                passed=0,
                failed=len(cs),
                skipped=0,
                cases=cs,
            )
            for s, cs in suites.items()
        ],
        started_at="2026-01-01T00:00:00.000Z",
        artifacts=[
            Artifact(name=c.failure.artifact or "", path="/x", sha256="0", size=1) for c in cases if c.failure
        ],
    )


def test_what_varies_between_cases_of_one_defect_is_normalised_and_the_rest_kept() -> None:
    assert normalise("order ord_123 at 2026-01-01T10:00:00Z id 6f1c2d3e-0000-4000-8000-123456789abc") == (
        "order <id> at <time> id <uuid>"
    )
    assert normalise("took 12345 ms, sha 9f86d081884c7d65") == "took <n> ms, sha <hex>"
    assert normalise("KeyError: 'price' (line 42)") == "KeyError: 'price' (line 42)"


def test_one_cause_is_one_group_whatever_ids_times_and_bodies_say() -> None:
    cases = [case(n) for n in range(60)]
    assert len({cause_key(c) for c in cases}) == 1
    grouped = group_failures(run_of(cases))
    [suite] = grouped.suites
    [head] = suite.cases
    assert head.id == "s.case-0" and head.failure is not None and head.failure.same_cause is not None
    assert head.failure.same_cause.count == 60
    assert head.failure.same_cause.cases == [f"s.case-{n}" for n in range(1, 60)]
    assert head.failure.response is not None  # told in full
    assert grouped.totals.failed == 60 and suite.failed == 60  # counts untouched
    assert [a.name for a in grouped.artifacts] == ["cases/s.case-0.json"]
    assert len(msgspec.json.encode(grouped)) < len(msgspec.json.encode(run_of(cases))) / 5


def test_different_causes_are_never_merged() -> None:
    other_status = case(1, status=502)
    other_log = case(2, log="ValueError: bad qty")
    other_shape = case(3, actual_body={"error": "internal error"})  # another set of keys
    other_enum = case(4, actual_body={"error": "declined", "trace": "x"})
    same = [case(n) for n in range(5, 8)]
    keys = {cause_key(c) for c in [other_status, other_log, other_shape, other_enum, same[0]]}
    assert len(keys) == 5
    grouped = group_failures(run_of([other_status, other_log, *same, other_shape, other_enum]))
    heads = [c for s in grouped.suites for c in s.cases]
    assert len(heads) == 5
    counts = sorted(c.failure.same_cause.count for c in heads if c.failure and c.failure.same_cause)
    assert counts == [3]


def test_a_run_without_two_alike_is_returned_unchanged_and_groups_span_suites() -> None:
    single = run_of([case(1), case(2, status=404)])
    assert group_failures(single) is single
    spanning = group_failures(run_of([case(1, suite="a"), case(2, suite="b")]))
    assert [len(s.cases) for s in spanning.suites] == [1, 0]
    head = spanning.suites[0].cases[0]
    assert head.failure is not None and head.failure.same_cause is not None
    assert head.failure.same_cause.cases == ["b.case-2"]


def test_the_terminal_text_tells_the_group_once_and_names_every_case() -> None:
    text = render_text(run_of([case(n) for n in range(12)]))
    assert text.count("✗ s.case-") == 1
    assert "the same cause failed 12 cases; the 11 others: s.case-1, s.case-2" in text
    assert "s.case-11" in text
