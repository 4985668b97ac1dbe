#!/usr/bin/env python3
"""Benchmark the run's page (report.html): its size, and how fast a browser shows it.

    scripts/bench/report.py [--repeat 7]

Two runs are made up the way real ones look, with their event logs: 10 cases (2 failed) and
1,000 cases in 10 suites (50 failed, in 5 causes; every failure with its request, response,
assertions, log lines, mock calls and history; mock traffic and setup steps in the events). For
each, the page is rendered (`render_report`) and opened from `file://` in headless Chromium
(Debian's, driven by Playwright; offline), and the time from navigation to the first frame after
`load` is taken (median of `--repeat` fresh pages). In the same browser and run, the baseline is
the floor of a page of those cases: one bare `<table>` of their names and statuses (no style, no
script); the ratio says what the report costs above it.

Goals: 1,000 cases under 1.5 MB and shown in under 1 s; 10 cases under 150 kB.
Prints a table; exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import html
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from support.browser import CHROMIUM_ARGS, ensure_chromium  # noqa: E402

SIZE_GOALS = {10: 150_000, 1000: 1_500_000}
TIME_GOAL_S = 1.0
T0 = 1_795_000_000_000


def _ts(ms: int) -> str:
    return (
        datetime.fromtimestamp((T0 + ms) / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def synthetic(cases: int, failed: int, suites: int) -> tuple[object, list[object]]:
    """A finished run of `cases` cases (`failed` of them failed, in 5 causes) and its events."""
    from preflight_sdk.core.assertions import AssertionResult
    from preflight_sdk.core.results.lifecycle import Readiness, ServiceSetup, SetupResult
    from preflight_sdk.core.results.run import (
        CaseHistory,
        CaseResult,
        ContainerHealthInfo,
        ContainerLogInfo,
        DiagnosticReport,
        Failure,
        MockRequestInfo,
        MockTraffic,
        RequestInfo,
        ResponseInfo,
        RunResult,
        SuiteResult,
        Totals,
    )  # fmt: skip
    from preflight_sdk.suites.events import Event

    events: list[Event] = []

    def event(ms: int, type: str, **fields: object) -> None:
        events.append(Event(event_id=f"e{len(events)}", ts=_ts(ms), type=type, run_id="R", trace_id="t",
                            span_id="s", prev_hash="0", **fields))  # type: ignore[arg-type]  # fmt: skip

    event(0, "RUN_CREATED", status="queued")
    event(5, "PHASE_STARTED", phase="setup")
    for n, service in enumerate(("inventory", "orders", "payments-gateway")):
        event(10 + n * 300, "STEP_STARTED", name=service, message=f"starting {service}")
        event(260 + n * 300, "STEP_FINISHED", name=service, message=f"{service} healthy in 120 ms")
    event(1000, "PHASE_FINISHED", phase="setup")
    per_suite = cases // suites
    clock = 1000
    all_suites = []
    failing_every = max(cases // max(failed, 1), 1)
    for s in range(suites):
        suite_id = f"suite-{s}"
        event(clock, "SUITE_STARTED", suite=suite_id)
        results = []
        for c in range(per_suite):
            index = s * per_suite + c
            case_id = f"{suite_id}.case-{c}-does-something-useful"
            event(clock, "CASE_STARTED", suite=suite_id, case=case_id)
            duration = 3 + index % 17
            broken = failed and index % failing_every == failing_every - 1 and index // failing_every < failed
            failure = None
            if broken:
                cause = index % 5
                event(clock + 1, "MOCK_REQUEST", name="payments", status="404", message="POST /refunds → 404")
                failure = Failure(
                    error=f"status: expected to equal 200, got 50{cause}",
                    summary=f"POST /orders/{index}/refund returned 50{cause}, expected 200; orders logged "
                    f"\"KeyError: 'field{cause}'\"",
                    assertions=[
                        AssertionResult(
                            path="status",
                            operator="equals",
                            expected=200,
                            actual=500 + cause,
                            passed=False,
                            message=f"status: expected to equal 200, got 50{cause}",
                        ),
                        AssertionResult(
                            path="body.status",
                            operator="equals",
                            expected="refunded",
                            actual=None,
                            passed=False,
                            message="body.status: expected to equal refunded",
                        ),
                    ],
                    request=RequestInfo(
                        method="POST",
                        url=f"http://127.0.0.1:32771/orders/{index}/refund",
                        headers={"content-type": "application/json", "authorization": "[redacted]"},
                        body={"amount": 20, "reason": "customer asked"},
                    ),
                    response=ResponseInfo(
                        status=500 + cause,
                        headers={"content-type": "application/json"},
                        body={
                            "error": "refund failed",
                            "detail": {"mock": "payments", "closest": "POST /charges"},
                        },
                        duration=duration,
                    ),
                    suggested_fix="mock `payments` had no route for POST /refunds: add the route",
                    diagnostics=DiagnosticReport(
                        collected_at=T0 + clock,
                        container_logs=[
                            ContainerLogInfo(
                                container_name="orders",
                                line_count=4,
                                lines=[
                                    f"POST /orders/{index}/refund -> 50{cause}",
                                    "stderr: Traceback (most recent call last):",
                                    f"stderr: KeyError: 'field{cause}'",
                                    "stderr: refund failed with 404",
                                ],
                            )
                        ],
                        container_health=[ContainerHealthInfo(container_name="orders", status="running")],
                        mock_requests=[
                            MockTraffic(
                                mock_name="payments",
                                requests=[
                                    MockRequestInfo(
                                        method="POST",
                                        path="/refunds",
                                        status=404,
                                        timestamp=_ts(clock + 1),
                                        body={"charge": "ch_1", "amount": 20},
                                    )
                                ],
                            )
                        ],
                    ),
                    artifact=f"cases/{case_id}.json",
                )
            status = "failed" if broken else "passed"
            event(clock + duration, "CASE_FAILED" if broken else "CASE_FINISHED", suite=suite_id, case=case_id,
                  status=status, duration=duration)  # fmt: skip
            results.append(CaseResult(
                id=case_id, name=f"case {c} of suite {s} does something useful", suite=suite_id,
                status=status, duration=duration, timestamp=T0 + clock + duration, failure=failure,  # type: ignore[arg-type]
                history=CaseHistory(failing_since_run_id="01PREVIOUS", last_passed_run_id="01OLDER",
                                    recent="PPPPFFFFFF") if broken else None,
            ))  # fmt: skip
            clock += duration + 1
        event(clock, "SUITE_FINISHED", suite=suite_id, status="failed", duration=100)
        bad = sum(r.status == "failed" for r in results)
        all_suites.append(SuiteResult(id=suite_id, name=f"Suite {s}", runner="yaml",
                                      status="failed" if bad else "passed", duration=100, passed=len(results) - bad,
                                      failed=bad, skipped=0, cases=results))  # fmt: skip
    ready = Readiness(probe="http", target="http://127.0.0.1/health", attempts=3, ready=True)
    services = [
        ServiceSetup(name=n, container_id="c", container_name=f"pf-{n}", status="healthy", ports=[], readiness=ready,
                     health_check_duration=120)
        for n in ("inventory", "orders", "payments-gateway")
    ]  # fmt: skip
    setup = SetupResult(services=services, mocks=[], total_duration=995)
    total_failed = sum(x.failed for x in all_suites)
    result = RunResult(
        run_id="01BENCHRUN0000000000000000", status="failed" if total_failed else "passed",
        summary=f"failed: {suites} suite(s), {cases} case(s)",
        totals=Totals(passed=cases - total_failed, failed=total_failed, skipped=0, total=cases),
        duration=clock - 1000, suites=all_suites, started_at=_ts(1000), setup=setup,
    )  # fmt: skip
    return result, events


def baseline_page(result: object) -> str:
    rows = "".join(
        f"<tr><td>{c.status}</td><td>{html.escape(c.name)}</td><td>{c.suite}</td></tr>"  # type: ignore[attr-defined]
        for s in result.suites  # type: ignore[attr-defined]
        for c in s.cases
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body><table>{rows}</table></body></html>"
    )


SHOWN = """async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now();
}"""


def time_page(browser: object, path: Path, repeat: int) -> float:
    """Median seconds from navigation start to the first frame after `load`, on a fresh page each time."""
    times = []
    for _ in range(repeat):
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        context.set_offline(True)
        page = context.new_page()
        errors: list[str] = []

        def failed(error: object, errors: list[str] = errors) -> None:
            errors.append(str(error))

        page.on("pageerror", failed)
        page.goto(path.as_uri(), wait_until="load")
        shown = page.evaluate(SHOWN)
        assert not errors, errors
        times.append(shown / 1000)
        context.close()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from preflight_sdk.runs.report_html import PreviousRun, render_report

    ok = True
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(ensure_chromium()), args=CHROMIUM_ARGS)
        for cases, failed, suites in ((10, 2, 1), (1000, 50, 10)):
            result, events = synthetic(cases, failed, suites)
            previous = PreviousRun(run_id="01PREVIOUS", statuses={c.id: "passed" for s in result.suites for c in s.cases})  # type: ignore[attr-defined]  # fmt: skip
            began = time.perf_counter()
            page = render_report(result, events, previous=previous)  # type: ignore[arg-type]
            rendered = time.perf_counter() - began
            report = Path(tmp) / f"report-{cases}.html"
            report.write_text(page, encoding="utf-8")
            floor = Path(tmp) / f"floor-{cases}.html"
            floor.write_text(baseline_page(result), encoding="utf-8")
            time_page(browser, report, 1)  # warm-up
            shown = time_page(browser, report, args.repeat)
            base = time_page(browser, floor, args.repeat)
            size = report.stat().st_size
            size_ok = size < SIZE_GOALS[cases]
            time_ok = cases < 1000 or shown < TIME_GOAL_S
            ok = ok and size_ok and time_ok
            rows.append((cases, size, floor.stat().st_size, rendered, shown, base, size_ok and time_ok))
        browser.close()
    print(
        f"{'cases':>6} {'page':>10} {'floor page':>11} {'render (py)':>12} {'shown':>8} {'floor':>8} {'ratio':>6}  goal"
    )
    for cases, size, floor_size, rendered, shown, base, met in rows:
        goal = f"< {SIZE_GOALS[cases] / 1000:g} kB" + (", < 1 s" if cases >= 1000 else "")
        print(
            f"{cases:>6} {size / 1000:>8.1f}kB {floor_size / 1000:>9.1f}kB {rendered * 1000:>10.1f}ms "
            f"{shown * 1000:>6.0f}ms {base * 1000:>6.0f}ms {shown / base:>5.2f}x  {goal}: {'met' if met else 'MISSED'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
