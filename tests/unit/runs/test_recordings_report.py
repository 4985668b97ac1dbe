"""What a run's report, page and summary say about recorded mocks, and a failure's recorded route."""

from __future__ import annotations

from preflight_sdk.core.errors import ErrorInfo
from preflight_sdk.core.results.recording import MockRecording
from preflight_sdk.core.results.run import (
    CaseResult,
    DiagnosticReport,
    Failure,
    MockRequestInfo,
    MockTraffic,
    RunResult,
    SuiteResult,
    Totals,
)
from preflight_sdk.faces.notebook.static.run_view import render_run
from preflight_sdk.runs.report_html import render_report

RECORDED = MockRecording(
    mock="payments",
    mode="recorded",
    file="e2e.recorded/payments.yaml",
    routes=4,
    upstream="https://api.payments.test",
    exchanges=9,
    added=["GET /v1/refunds/:id"],
    replaced=['POST /v1/charges when sku="book"'],
    unchanged=2,
    written=True,
)
REPLAYED = MockRecording(
    mock="ledger",
    mode="replayed",
    file="e2e.recorded/ledger.yaml",
    routes=1,
    recorded_at="2026-11-30T10:00:00Z",
)
FAILED = MockRecording(
    mock="mail",
    mode="recorded",
    file="e2e.recorded/mail.yaml",
    upstream="http://127.0.0.1:9",
    error=ErrorInfo(
        code="MOCK_UPSTREAM_UNREACHABLE",
        message="mock `mail` cannot reach its upstream",
        retryable=False,
        hint="h",
    ),
)


def _run() -> RunResult:
    seen = MockRequestInfo(
        method="GET",
        path="/v1/charges/ch_1",
        status=200,
        timestamp="2026-12-01T10:00:00.000Z",
        matched_route="GET /v1/charges/:id",
        route_recorded="2026-11-30T10:00:00Z",
    )
    failure = Failure(
        error="status: expected 201, got 200",
        summary="status: expected 201, got 200",
        diagnostics=DiagnosticReport(
            collected_at=0, mock_requests=[MockTraffic(mock_name="payments", requests=[seen])]
        ),
    )
    case = CaseResult(
        id="api.pay", name="pay", suite="api", status="failed", duration=3, timestamp=0, failure=failure
    )
    suite = SuiteResult(
        id="api",
        name="API",
        runner="yaml",
        status="failed",
        passed=0,
        failed=1,
        skipped=0,
        duration=3,
        cases=[case],
    )
    return RunResult(
        run_id="01RUN",
        status="failed",
        summary="1 failed",
        totals=Totals(total=1, passed=0, failed=1, skipped=0),
        duration=3,
        suites=[suite],
        started_at="2026-12-01T10:00:00Z",
        recordings=[RECORDED, REPLAYED, FAILED],
    )


def test_the_summary_says_which_mocks_recorded_or_replayed_and_what_was_written() -> None:
    text, html = render_run(_run())
    assert (
        "mock payments: recorded 9 calls from https://api.payments.test; 4 routes written to "
        "e2e.recorded/payments.yaml (1 added, 1 replaced, 2 unchanged)"
    ) in text
    assert "    + GET /v1/refunds/:id" in text
    assert "mock ledger: replayed 1 recorded route (recorded 2026-11-30 10:00)" in text
    assert "! [MOCK_UPSTREAM_UNREACHABLE]" in text
    assert "pf-recording-recorded" in html and "pf-recording-replayed" in html
    assert "GET /v1/charges/:id (recorded 2026-11-30 10:00)" in html  # the failure's mock requests


def test_the_page_says_it_too_and_the_failures_route_says_it_was_recorded_and_when() -> None:
    page = render_report(_run())
    assert 'class="pfr-recordings"' in page
    assert "replayed 1 recorded route(s)" in page and "recorded 9 call(s)" in page
    assert "MOCK_UPSTREAM_UNREACHABLE" in page
    assert 'pfr-recorded">recorded 2026-11-30 10:00' in page
