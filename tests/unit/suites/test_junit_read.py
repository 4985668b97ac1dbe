"""The JUnit reader against the reports real tools write (tests/fixtures/junit, see its README)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from preflight_sdk.suites.commands.junit_cases import display_name, first_message, skip_reason, verdict
from preflight_sdk.suites.commands.junit_read import JUnitCase, JUnitLimits, read_junit, read_junit_files

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "junit"


def _summary(path: Path | list[Path]) -> list[tuple[str, str, str]]:
    """(name, status, telling line) per case, as a shell suite with `junit:` would make them."""
    report = read_junit_files(path if isinstance(path, list) else [path])
    assert report.problems == []
    rows = []
    for case in report.cases:
        status = verdict(case)
        line = first_message(case) if status == "failed" else skip_reason(case) if status == "skipped" else ""
        rows.append((display_name(case), status, line))
    return rows


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        (
            "jest.xml",
            [
                ("totals adds two numbers", "passed", ""),
                (
                    "totals applies the discount",
                    "failed",
                    "Error: expect(received).toBe(expected) // Object.is equality",
                ),
                ("totals rounds to cents", "skipped", "skipped"),
            ],
        ),
        (
            "vitest.xml",
            [
                ("src/math.vitest.test.mjs > totals > adds two numbers", "passed", ""),
                (
                    "src/math.vitest.test.mjs > totals > applies the discount",
                    "failed",
                    "expected 90 to be 80 // Object.is equality",
                ),
                ("src/math.vitest.test.mjs > totals > rounds to cents", "skipped", "skipped"),
            ],
        ),
        (
            "node-test.xml",
            [
                ("adds", "passed", ""),
                ("the total is wrong", "failed", "total2 !== 3"),
                ("later", "skipped", "not ready"),
            ],
        ),
        (
            "gotestsum.xml",
            [
                ("example.com/gosample/shop > TestDiscount", "failed", "discount: got 90, want 80"),
                ("example.com/gosample/shop > TestRounding", "skipped", "not ready"),
                ("example.com/gosample/shop > TestAdd", "passed", ""),
            ],
        ),
        (
            "newman.xml",
            [
                ("Health / health is ok > Status code is 200", "passed", ""),
                ("Health / health is ok > status is ok", "passed", ""),
                (
                    "Health / missing page > Status code is 200",
                    "failed",
                    "expected response to have status code 200 but got 404",
                ),
            ],
        ),
        (
            "playwright.xml",
            [
                ("api.spec.mjs > orders › lists orders", "passed", ""),
                (
                    "api.spec.mjs > orders › totals an order",
                    "failed",
                    "Error: expect(received).toBe(expected) // Object.is equality",
                ),
                ("api.spec.mjs > orders › refunds an order", "skipped", "skipped"),
            ],
        ),
        (
            "hurl.xml",
            [
                ("tests_ok/junit/test.1.hurl", "passed", ""),
                ("tests_ok/junit/test.2.hurl", "failed", "Assert body value: actual value is <Hello World!>"),
                ("tests_ok/junit/test.3.hurl", "passed", ""),
                ("tests_ok/junit/test.4.hurl", "failed", "Assert body value: actual value is <Hello World!>"),
            ],
        ),
        (
            "mocha.xml",
            [
                ("cart adds an item", "passed", ""),
                ("cart computes the total", "failed", "total is wrong 4 !== 5"),
            ],
        ),
    ],
)
def test_each_tools_report_reads_as_its_tests(sample: str, expected: list[tuple[str, str, str]]) -> None:
    assert _summary(SAMPLES / sample) == expected


def test_surefire_files_of_each_class_read_together_with_the_reruns() -> None:
    files = sorted((SAMPLES / "surefire").glob("TEST-*.xml"))
    assert _summary(files) == [
        ("shop.CartTest > computesTheTotal", "failed", "total expected:<5> but was:<4>"),
        ("shop.CartTest > addsAnItem", "passed", ""),
        ("shop.CartTest > appliesACoupon", "skipped", "not ready"),
        ("shop.PriceTest > isPositive", "passed", ""),
    ]
    failing = read_junit_files(files).cases[0]
    assert failing.stdout == "computing the total"
    assert failing.kind == "java.lang.AssertionError"
    assert [r.status for r in failing.reruns] == ["failed"]
    assert "CartTest.java:9" in failing.reruns[0].detail


def test_cypress_writes_a_file_per_spec_and_pending_tests_as_skips() -> None:
    rows = _summary(sorted((SAMPLES / "cypress").glob("results-*.xml")))
    assert sorted(rows) == [
        ("cart adds an item", "passed", ""),
        ("cart applies a coupon", "skipped", "skipped"),
        (
            "login rejects a wrong password",
            "failed",
            "banner text + actual - expected + 'Welcome' - 'Wrong password'",
        ),
        ("login shows the form", "passed", ""),
    ]


def test_failure_text_output_and_suite_times_are_kept() -> None:
    report = read_junit(SAMPLES / "vitest.xml")
    failing = report.cases[1]
    assert failing.stdout == "discount table loaded"
    assert "src/math.vitest.test.mjs:4:96" in failing.detail
    assert failing.kind == "AssertionError"
    # the suite's start, then each case after the durations of the cases before it
    suite_start = datetime(2026, 12, 1, 22, 46, 2, 954000, tzinfo=UTC)
    assert report.started == suite_start
    assert report.cases[0].started == suite_start
    assert report.cases[1].started == suite_start + timedelta(seconds=0.001838547)


def test_a_naive_time_stamp_is_read_as_utc_when_local_time_would_fall_outside_the_run(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(
        '<testsuites><testsuite name="s" timestamp="2030-01-01T10:00:00"><testcase name="a" time="1"/></testsuite></testsuites>'
    )
    window = (datetime(2030, 1, 1, 10, 0, 0, tzinfo=UTC), datetime(2030, 1, 1, 10, 0, 5, tzinfo=UTC))
    assert read_junit(path, window=window).cases[0].started == window[0]


def test_entity_declarations_are_refused_not_expanded(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.xml"
    bomb.write_text(
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<testsuites><testcase name="x"><failure message="&b;"/></testcase></testsuites>'
    )
    external = tmp_path / "external.xml"
    external.write_text(
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        '<testsuites><testcase name="&e;"/></testsuites>'
    )
    for path in (bomb, external):
        report = read_junit(path)
        assert report.cases == []
        assert report.problems == [
            f"{path}: the report declares XML entities, which are not expanded: rejected"
        ]


def test_cases_and_texts_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "many.xml"
    body = "".join(
        f'<testcase name="t{i}"><failure message="m">{"x" * 500}</failure></testcase>' for i in range(50)
    )
    path.write_text(f"<testsuite>{body}</testsuite>")
    report = read_junit(path, limits=JUnitLimits(max_cases=10, max_text=100))
    assert len(report.cases) == 10
    assert report.left_out == 40
    assert report.cases[0].detail.startswith("x" * 100)
    assert report.cases[0].detail.endswith("[400 more characters]")


def test_a_file_past_the_size_bound_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.xml"
    path.write_text("<testsuite>" + "<testcase name='a'/>" * 100_000 + "</testsuite>")
    report = read_junit(path, limits=JUnitLimits(max_bytes=1024 * 1024))
    assert report.cases == []
    assert "more than the 1 MB read" in report.problems[0]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("<testsuites><testcase name='a'>", "not XML (no element found at line 1, column 31)"),
        (
            "<html><body>hello</body></html>",
            "not a JUnit report (no <testsuites>, <testsuite> or <testcase> element)",
        ),
        ("", "not XML (no element found at line 1, column 0)"),
    ],
)
def test_what_is_not_a_junit_report_is_a_problem_that_says_why(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "r.xml"
    path.write_text(content)
    assert read_junit(path).problems == [f"{path}: {problem}"]


def test_a_missing_file_is_a_problem() -> None:
    report = read_junit(Path("/nonexistent/report.xml"))
    assert report.problems == ["/nonexistent/report.xml: cannot read it: No such file or directory"]


def test_an_error_element_and_odd_times_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(
        "<testsuite name='s'><testcase name='a' time='1,234.5'><error message='boom' type='RuntimeError'>trace</error>"
        "</testcase><testcase name='b' time='NaN'/><testcase name='c' time='-3'/></testsuite>"
    )
    a, b, c = read_junit(path).cases
    assert (a.status, a.message, a.kind, a.detail, a.time) == (
        "error",
        "boom",
        "RuntimeError",
        "trace",
        1234.5,
    )
    assert verdict(a) == "failed"
    assert (b.time, c.time) == (0.0, 0.0)


def test_display_names_drop_placeholders_and_repeats() -> None:
    assert display_name(JUnitCase(suite="Root Suite", classname="test", name="adds")) == "adds"
    assert display_name(JUnitCase(classname="pkg", name="TestX")) == "pkg > TestX"
    assert display_name(JUnitCase()) == "(unnamed test)"
