"""Shell suites with `junit:`: real commands write JUnit reports, and their testcases become cases.

One test-only project holds every suite (marked parallel) and runs once for the module; the tests
read that result. Node's own test runner writes the first report (node is required: in CI its
absence fails the module, elsewhere it skips); the others copy the reports real tools wrote
(tests/fixtures/junit) the way those tools write them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.events import suite_events
from support.stub import e2e_yaml

from preflight_sdk import Project
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.core.results.run import RunResult, SuiteResult

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "junit"

NODE_TESTS = """
import test from 'node:test';
import assert from 'node:assert/strict';
test('adds', () => { assert.equal(1 + 1, 2); });
test('the total is wrong', () => { assert.equal(1 + 1, 3, 'the total'); });
test('later', { skip: 'not ready' }, () => {});
"""

FLAKY = """
import pathlib, sys
marker = pathlib.Path("flaky.marker")
ok = marker.exists()
marker.write_text("ran")
status = "" if ok else "<failure message='first run fails'>boom</failure>"
pathlib.Path("reports").mkdir(exist_ok=True)
pathlib.Path("reports/flaky.xml").write_text(f"<testsuite name='f'><testcase name='sometimes'>{status}</testcase></testsuite>")
sys.exit(0 if ok else 1)
"""

PY = sys.executable

PYTEST_FILE = """
import pytest

def test_total():
    assert sum([1, 2]) == 3

def test_discount():
    assert 100 * 0.9 == 80, "the discount is wrong"

@pytest.mark.skip(reason="not ready")
def test_rounding():
    pass
"""


def _copy(source: str, target: str) -> list[str]:
    return [PY, "-c", f"import shutil, sys; shutil.copytree({source!r}, {target!r}, dirs_exist_ok=True)"]


SUITES: list[dict[str, Any]] = [
    {
        "id": "node",
        "runner": "shell",
        "command": [
            "node",
            "--test",
            "--test-reporter=junit",
            "--test-reporter-destination=out/node.xml",
            "t.test.mjs",
        ],
        "junit": "out/node.xml",
    },
    {
        "id": "surefire",
        "runner": "shell",
        "command": 'mkdir -p target && cp -r "$SAMPLES/surefire" target/ && exit 1',
        "shell": True,
        "env": {"SAMPLES": str(SAMPLES)},
        "junit": "target/surefire/TEST-*.xml",
    },
    {
        "id": "noreport",
        "runner": "shell",
        "command": "echo compiling; echo 'error TS2304' >&2; exit 2",
        "shell": True,
        "junit": "out/none.xml",
    },
    {"id": "silent", "runner": "shell", "command": ["true"], "junit": "out/silent.xml"},
    {"id": "stale", "runner": "shell", "command": ["true"], "junit": "old/*.xml"},
    {
        "id": "garbage",
        "runner": "shell",
        "command": ["sh", "-c", "mkdir -p g && echo '<html>' > g/r.xml"],
        "junit": "g/r.xml",
    },
    {
        "id": "passbutexit",
        "runner": "shell",
        "command": """echo '<testsuite><testcase name="a"/><testcase name="b"/></testsuite>' > p.xml; exit 3""",
        "shell": True,
        "junit": ["p.xml"],
    },
    {
        "id": "flaky",
        "runner": "shell",
        "command": [PY, "flaky.py"],
        "junit": "reports/*.xml",
        "retry": {"maxAttempts": 2, "delay": "10ms"},
    },
    {
        "id": "pytest",
        "runner": "shell",
        "command": [
            PY,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--junitxml=out/py.xml",
            "check_total.py",
        ],
        "junit": "out/py*.xml",
    },
    {
        "id": "emptyreport",
        "runner": "shell",
        "command": ["sh", "-c", "echo '<testsuites/>' > e.xml"],
        "junit": "e.xml",
    },
]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    if shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is missing: the JUnit suite tests run Node's test runner", pytrace=False)
        pytest.skip("node is missing")
    root = tmp_path_factory.mktemp("junit-shell")
    (root / "t.test.mjs").write_text(NODE_TESTS)
    (root / "flaky.py").write_text(FLAKY)
    (root / "check_total.py").write_text(PYTEST_FILE)
    (root / "out").mkdir()
    (root / "old").mkdir()
    (root / "old" / "previous.xml").write_text(
        "<testsuite><testcase name='from an earlier run'/></testsuite>"
    )
    suites = [{**s, "parallel": True} for s in SUITES]
    (root / "e2e.yaml").write_text(e2e_yaml(suites, {"parallel": {"concurrency": 16}}))
    return root, anyio.run(lambda: Project.open(root).run())


def _suite(result: RunResult, suite_id: str) -> SuiteResult:
    return next(s for s in result.suites if s.id == suite_id)


def test_a_report_of_three_tests_gives_three_cases_with_the_failure_message(
    outcome: tuple[Path, RunResult],
) -> None:
    suite = _suite(outcome[1], "node")
    assert [(c.name, c.status) for c in suite.cases] == [
        ("adds", "passed"),
        ("the total is wrong", "failed"),
        ("later", "skipped"),
    ]
    assert (suite.status, suite.passed, suite.failed, suite.skipped, suite.error) == ("failed", 1, 1, 1, None)
    failed = suite.cases[1].failure
    assert failed is not None
    assert failed.summary == "the total is wrong failed: the total2 !== 3"
    assert "operator: 'strictEqual'" in (failed.output or "")  # the failure's text, as Node wrote it
    assert suite.cases[2].skip_reason == "not ready"


def test_any_command_that_writes_junit_is_read_the_same_way(outcome: tuple[Path, RunResult]) -> None:
    # pytest run as a plain shell command, its report read like any other tool's
    suite = _suite(outcome[1], "pytest")
    assert [(c.name, c.status) for c in suite.cases] == [
        ("pytest > check_total > test_total", "passed"),
        ("pytest > check_total > test_discount", "failed"),
        ("pytest > check_total > test_rounding", "skipped"),
    ]
    failure = suite.cases[1].failure
    assert failure is not None and failure.error.startswith("AssertionError: the discount is wrong")
    assert suite.cases[2].skip_reason == "not ready"


def test_each_case_is_on_the_timeline(outcome: tuple[Path, RunResult]) -> None:
    result = outcome[1]
    path = next(a.path for a in result.artifacts if a.name == "events.ndjson")
    events = [e for e in suite_events(path) if e.get("suite") == "node"]
    kinds = [(e["type"], e.get("case")) for e in events if e["type"].startswith("case")]
    ids = [c.id for c in _suite(result, "node").cases]
    assert kinds == [(kind, case) for case in ids for kind in ("case_start", "case_end")]
    suite_start = next(e["timestamp"] for e in events if e["type"] == "suite_start")
    assert all(e["timestamp"] >= suite_start for e in events)


def test_surefire_reports_of_each_class_are_read_through_a_glob(outcome: tuple[Path, RunResult]) -> None:
    suite = _suite(outcome[1], "surefire")
    assert [(c.name, c.status) for c in suite.cases] == [
        ("shop.CartTest > computesTheTotal", "failed"),
        ("shop.CartTest > addsAnItem", "passed"),
        ("shop.CartTest > appliesACoupon", "skipped"),
        ("shop.PriceTest > isPositive", "passed"),
    ]
    failing = suite.cases[0]
    assert failing.failure is not None and failing.failure.error == "total expected:<5> but was:<4>"
    # Surefire ran the failing test again itself: both runs are its attempts
    assert [a.passed for a in failing.attempts or []] == [False, False]
    assert suite.error is None  # the exit status of a failing run says nothing the cases do not


def test_a_command_that_writes_no_report_is_a_suite_error_that_says_so(
    outcome: tuple[Path, RunResult],
) -> None:
    suite = _suite(outcome[1], "noreport")
    assert (suite.status, suite.cases) == ("failed", [])
    assert suite.error == (
        "`echo compiling; echo 'error TS2304' >&2; exit 2` exited with 2 and wrote no JUnit report "
        "matching `out/none.xml`: compiling | error TS2304"
    )
    silent = _suite(outcome[1], "silent")
    assert silent.status == "failed"
    assert (
        silent.error == "`true` exited with 0 and wrote no JUnit report matching `out/silent.xml`: no output"
    )


def test_a_report_left_by_an_earlier_run_is_not_read(outcome: tuple[Path, RunResult]) -> None:
    suite = _suite(outcome[1], "stale")
    assert suite.cases == []
    assert suite.error is not None and "wrote no JUnit report matching `old/*.xml`" in suite.error


def test_a_report_that_is_not_junit_is_a_suite_error(outcome: tuple[Path, RunResult]) -> None:
    root, result = outcome
    assert _suite(result, "garbage").error == (
        f"{root / 'g' / 'r.xml'}: not XML (no element found at line 2, column 0)"
    )
    assert _suite(result, "emptyreport").error == "the JUnit report (e.xml) holds no testcase"


def test_a_failing_exit_without_a_failing_test_is_a_suite_error(outcome: tuple[Path, RunResult]) -> None:
    suite = _suite(outcome[1], "passbutexit")
    assert [c.status for c in suite.cases] == ["passed", "passed"]
    assert suite.status == "failed"
    assert suite.error is not None and suite.error.startswith("`echo '<testsuite>")
    assert suite.error.endswith(
        "reported no failing test, but exitCode: expected to equal 0, got 3: no output"
    )


def test_the_suites_retry_runs_the_command_again_and_each_run_is_an_attempt(
    outcome: tuple[Path, RunResult],
) -> None:
    suite = _suite(outcome[1], "flaky")
    [case] = suite.cases
    assert (case.name, case.status) == ("f > sometimes", "passed")
    assert [a.passed for a in case.attempts or []] == [False, True]
    assert (case.attempts or [])[0].error == "first run fails"


def test_the_junit_report_of_the_run_lists_the_cases(outcome: tuple[Path, RunResult]) -> None:
    path = next(a.path for a in outcome[1].artifacts if a.name == "report.json")
    report = json.loads(Path(path).read_text())
    node = next(s for s in report["suites"] if s["id"] == "node")
    assert [c["status"] for c in node["cases"]] == ["passed", "failed", "skipped"]


def test_junit_is_refused_on_a_suite_that_is_not_shell(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("name: t\ncases: [{name: a, request: {url: 'http://127.0.0.1:9/'}}]\n")
    (tmp_path / "e2e.yaml").write_text(e2e_yaml([{"id": "y", "file": "t.yaml", "junit": "r.xml"}]))
    with pytest.raises(ConfigError) as caught:
        anyio.run(lambda: Project.open(tmp_path).init())
    assert "`junit` is for shell suites; runner `yaml` reads its own report" in str(caught.value)
