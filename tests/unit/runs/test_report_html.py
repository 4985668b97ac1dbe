"""The run's page (report.html): escaped, redacted, grouped by cause, a timeline from the events, the changes."""

from __future__ import annotations

import re

import msgspec
from unit.faces.notebook import samples
from unit.faces.notebook.samples import EVIL

from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.lifecycle import Readiness, ServiceSetup, SetupResult
from preflight_sdk.core.results.run import (
    CaseResult,
    Failure,
    RequestInfo,
    RunResult,
    SuiteResult,
    Totals,
)
from preflight_sdk.runs.report_html import (
    PreviousRun,
    build_timeline,
    group_by_cause,
    render_fragment,
    render_report,
)
from preflight_sdk.suites.events import Event

T0 = 1_795_000_000_000  # ms since the epoch: the run's first event


def _ts(offset_ms: int) -> str:
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp((T0 + offset_ms) / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _event(offset: int, type: str, **fields: object) -> Event:
    return Event(
        event_id=f"e{offset}", ts=_ts(offset), type=type, run_id="r", trace_id="t", span_id="s", prev_hash="0",
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def _failed(case_id: str, summary: str, status: int = 500) -> CaseResult:
    from preflight_sdk.core.assertions import AssertionResult
    from preflight_sdk.core.results.run import ResponseInfo

    failure = Failure(
        error=f"status: expected to equal 200, got {status}",
        summary=summary,
        assertions=[
            AssertionResult(
                path="status",
                operator="equals",
                expected=200,
                actual=status,
                passed=False,
                message=f"status: expected to equal 200, got {status}",
            )
        ],
        response=ResponseInfo(status=status),
    )
    return CaseResult(
        id=case_id,
        name=case_id.split(".")[1],
        suite="api",
        status="failed",
        duration=5,
        timestamp=T0,
        failure=failure,
    )


def _service(name: str = "api", **fields: object) -> ServiceSetup:
    ready = Readiness(probe="http", target="http://127.0.0.1/health", attempts=1, ready=True)
    return ServiceSetup(
        name=name, container_id="c", container_name="pf-api", status="healthy", ports=[], readiness=ready,
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def _run(cases: list[CaseResult], **fields: object) -> RunResult:
    failed = sum(c.status == "failed" for c in cases)
    suite = SuiteResult(
        id="api", name="API", runner="yaml", status="failed" if failed else "passed", duration=100,
        passed=len(cases) - failed, failed=failed, skipped=0, cases=cases,
    )  # fmt: skip
    return RunResult(
        run_id="01RUN", status="failed" if failed else "passed", summary="a summary",
        totals=Totals(passed=len(cases) - failed, failed=failed, skipped=0, total=len(cases)),
        duration=100, suites=[suite], started_at=_ts(0), **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_markup_in_names_bodies_and_values_is_shown_as_text_never_run() -> None:
    page = render_report(samples.failed_run())
    assert EVIL not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    # The page's only script is its own, after the report (none comes from the data).
    assert page.count("<script>") == 1 and page.index("<script>") > page.index('class="pfr"')
    assert not re.search(r"<(link|img|iframe)\b|https?://(?!127\.0\.0\.1)", page)  # nothing to fetch


def test_every_failure_goes_through_the_redaction_policy() -> None:
    case = _failed("api.login", "login failed")
    raw = msgspec.structs.replace(
        case,
        failure=msgspec.structs.replace(
            case.failure,  # type: ignore[arg-type]
            request=RequestInfo(
                method="POST",
                url="http://u:pw@api/login?token=abc123",
                headers={"X-Api-Token": "hunter2"},
                body={"password": "s3cret", "pin": "1234"},
            ),
        ),
    )
    page = render_report(_run([raw]), redactor=Redactor(["pin"]))
    for secret in ("hunter2", "abc123", "s3cret", "1234", ":pw@"):
        assert secret not in page, secret
    assert "[redacted]" in page


def test_identical_failures_are_told_once_with_their_count() -> None:
    same = [_failed(f"api.same-{n}", "GET /items returned 500, expected 200") for n in range(3)]
    other = _failed("api.other", "GET /users returned 404, expected 200", status=404)
    run = _run([same[0], other, same[1], same[2]])
    assert [[c.id for c in g] for g in group_by_cause(run.failures())] == [
        ["api.same-0", "api.same-1", "api.same-2"],
        ["api.other"],
    ]
    page = render_report(run)
    assert "3 cases fail the same way" in page
    assert page.count('class="pfr-failure"') == 2  # one in full per cause
    for case in same[1:]:
        assert f'id="pfr-case-{case.id}"' in page  # the others are listed, and linked to


def test_the_timeline_places_builds_starts_health_cases_and_mock_requests_from_the_events() -> None:
    setup = SetupResult(
        services=[_service(health_check_duration=200)],
        mocks=[], total_duration=900,
    )  # fmt: skip
    case = _failed("api.broken", "broke")
    events = [
        _event(0, "RUN_CREATED"),
        _event(0, "PHASE_STARTED", phase="setup"),
        _event(10, "STEP_STARTED", name="api", message="building api", phase="run"),
        _event(510, "STEP_FINISHED", name="api", message="api: success (500 ms)", phase="run"),
        _event(600, "STEP_STARTED", name="api", message="starting api", phase="run"),
        _event(900, "STEP_FINISHED", name="api", message="api healthy in 200 ms", phase="run"),
        _event(900, "PHASE_FINISHED", phase="setup"),
        _event(1000, "SUITE_STARTED", suite="api"),
        _event(1000, "CASE_STARTED", suite="api", case="api.broken"),
        _event(1002, "MOCK_REQUEST", name="pay", status="404", message="POST /refunds → 404"),
        _event(1200, "CASE_FAILED", suite="api", case="api.broken", status="failed", duration=5),
        _event(1200, "SUITE_FINISHED", suite="api", status="failed", duration=200),
    ]
    timeline = build_timeline(_run([case], setup=setup), events)
    lanes = {lane.title: lane for lane in timeline.lanes}
    assert [(s.kind, s.start, s.end) for s in lanes["api"].spans] == [
        ("build", 10, 510), ("create", 600, 700), ("health", 700, 900),
    ]  # fmt: skip
    [mark] = lanes["mock requests"].marks
    assert (mark.at, mark.failed, mark.label) == (1002, True, "pay: POST /refunds → 404")
    suite = lanes["suite api"].spans
    assert [(s.kind, s.start, s.end) for s in suite] == [
        ("suite", 1000, 1200), ("failed", 1000, 1005), ("tail", 1005, 1200),
    ]  # fmt: skip
    assert [(m.at, m.target) for m in timeline.failing] == [(1005, "api.broken")]
    assert timeline.total == 1200 and timeline.missing == []
    page = render_report(_run([case], setup=setup), events)
    assert 'style="left:0.833%;width:41.667%"' in page  # the build bar, placed without any script


def test_a_run_without_setup_steps_says_what_the_timeline_could_not_place() -> None:
    setup = SetupResult(
        services=[_service()],
        mocks=[], total_duration=900,
    )  # fmt: skip
    timeline = build_timeline(_run([_failed("api.x", "x")], setup=setup), [])
    assert timeline.missing and "service" in timeline.missing[0]
    assert [lane.title for lane in timeline.lanes] == ["suite api"]  # the case, from its own times


def test_the_changes_name_what_is_newly_failing_and_what_was_fixed() -> None:
    passed = CaseResult(id="api.fixed", name="fixed", suite="api", status="passed", duration=3, timestamp=T0)
    run = _run([_failed("api.new", "new"), _failed("api.still", "still"), passed])
    previous = PreviousRun(
        run_id="01PREV", statuses={"api.new": "passed", "api.still": "failed", "api.fixed": "failed"}
    )
    page = render_report(run, previous=previous)
    assert "Since run <code>01PREV</code>" in page
    assert (
        '<b class="pfr-ch-new">1 newly failing</b> · <b class="pfr-ch-fixed">1 fixed</b> · 1 still failing'
        in page
    )
    row = re.search(r'<tr class="pfr-r-passed".*?</tr>', page)
    assert row is not None and "fixed" in row.group(0)


def test_the_compact_variant_keeps_every_failure_and_cuts_the_passing_rows() -> None:
    cases = [CaseResult(id=f"api.ok-{n}", name=f"ok {n}", suite="api", status="passed", duration=1, timestamp=T0 + n)
             for n in range(400)]  # fmt: skip
    run = _run([_failed("api.bad", "bad"), *cases])
    full, compact = render_fragment(run), render_fragment(run, compact=True)
    assert full.count('<tr class="pfr-r-passed"') == 400
    assert compact.count('<tr class="pfr-r-passed"') == 150 and "250 more passing" in compact
    assert compact.count('class="pfr-failure"') == 1 and len(compact) < len(full)


def test_past_a_hundred_causes_the_further_failures_are_one_line_each() -> None:
    cases = [_failed(f"api.case-{n}", f"returned {400 + n}", status=400 + n) for n in range(130)]
    page = render_report(_run(cases))
    assert page.count('class="pfr-failure"') == 100
    assert "30 more failures, in 30 more causes" in page
    assert 'id="pfr-case-api.case-129"' in page  # still linked from its row in the cases table


def test_a_run_that_could_not_finish_says_why_and_what_to_do() -> None:
    from preflight_sdk.core.errors import ErrorInfo

    error = ErrorInfo(code="HEALTH_CHECK_TIMEOUT", message="orders <b>never</b> became healthy", retryable=False,
                      hint="read the logs of orders")  # fmt: skip
    page = render_report(msgspec.structs.replace(_run([]), status="error", error=error))
    assert "The run could not finish" in page and "HEALTH_CHECK_TIMEOUT" in page
    assert "orders &lt;b&gt;never&lt;/b&gt; became healthy" in page and "read the logs of orders" in page


def test_the_environment_section_says_what_each_service_had_done_before_the_suites_and_why() -> None:
    from preflight_sdk.core.results.lifecycle import EnvironmentUse, NetworkSetup

    services = [
        _service(name="db", action="reset", reset="exec", reason="served run 01EARLIER since setup"),
        _service(name="orders", action="rebuilt", reason="app.py changed"),
        _service(name="<seed>", action="reused", reason="unchanged"),
    ]
    use = EnvironmentUse(set_up_by="01FIRST", runs_served=2, reset="served run 01EARLIER since setup")
    setup = SetupResult(
        services=services, mocks=[], total_duration=5, network=NetworkSetup(name="n", created=False), environment=use
    )
    passed = CaseResult(id="api.ok", name="ok", suite="api", status="passed", duration=1, timestamp=T0)
    page = render_report(_run([passed], setup=setup))
    section = page[page.index('<section id="pfr-environment">') :]
    section = section[: section.index("</section>")]
    assert "environment: kept, set up by run 01FIRST, served 2 runs before this one, reset first" in section
    rows = re.findall(r'<tr class="pfr-setup-(\w+)"><td><b>(.*?)</b></td><td>(.*?)</td><td>(.*?)</td>', section)
    assert rows == [
        ("reset", "db", "reset (exec)", "served run 01EARLIER since setup"),
        ("rebuilt", "orders", "rebuilt", "app.py changed"),
        ("reused", "&lt;seed&gt;", "reused", "unchanged"),
    ]
    assert 'href="#pfr-environment"' in page
    fresh = msgspec.structs.replace(setup, network=NetworkSetup(name="n", created=True))
    fresh_page = render_report(_run([passed], setup=fresh))
    assert "environment: set up for this run" in fresh_page and "served 2 runs" not in fresh_page
    assert "no environment was brought up" in render_report(_run([passed]))


def test_werkzeugs_access_lines_on_stderr_are_not_marked_as_errors_and_its_traceback_is() -> None:
    from preflight_sdk.core.results.run import ContainerLogInfo, DiagnosticReport

    # Werkzeug (Flask's development server) logs every request, and its start, on stderr.
    lines = [
        "stderr:  * Running on http://172.18.0.3:8000",
        'stderr: 172.18.0.1 - - [02/Dec/2026 01:40:14] "GET /health HTTP/1.1" 200 -',
        'stderr: 172.18.0.1 - - [02/Dec/2026 01:40:15] "POST /orders HTTP/1.1" 201 -',
        'stderr: 172.18.0.1 - - [02/Dec/2026 01:40:15] "GET /error-page HTTP/1.1" 404 -',
        "stderr: Traceback (most recent call last):",
        'stderr: psycopg.errors.UndefinedTable: relation "orders" does not exist',
        'stderr: 172.18.0.1 - - [02/Dec/2026 01:40:16] "GET /orders/7 HTTP/1.1" 500 -',
    ]
    diagnostics = DiagnosticReport(
        collected_at=T0, container_logs=[ContainerLogInfo(container_name="pf-api", lines=lines, line_count=len(lines))]
    )
    case = _failed("api.orders", "status 500")
    case = msgspec.structs.replace(case, failure=msgspec.structs.replace(case.failure, diagnostics=diagnostics))
    page = render_report(_run([case]))
    marked = re.findall(r'<span class="pfr-err">(.*?)</span>', page)
    assert [m.split("] ")[-1] if "] " in m else m for m in marked] == [
        "stderr: Traceback (most recent call last):",
        "stderr: psycopg.errors.UndefinedTable: relation &quot;orders&quot; does not exist",
        "&quot;GET /orders/7 HTTP/1.1&quot; 500 -",
    ], marked
