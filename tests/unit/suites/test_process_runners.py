"""The pytest and shell runners: real child processes against the stub.

One project holds every pytest and shell suite, marked parallel, and is run once for the module
(each pytest child costs most of a second to start); the tests read that one result.
"""

from __future__ import annotations

import json
import textwrap
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import junitparser
import pytest
from support.events import suite_events
from support.stub import Stub, e2e_yaml

from preflight_sdk import Project
from preflight_sdk.core.results.run import RunResult, SuiteResult

PYTEST_FILE = """
import json
import os
import urllib.request

import pytest

BASE = os.environ["BASE_URL"]


def get(path):
    with urllib.request.urlopen(BASE + path, timeout=5) as reply:
        return reply.status, json.load(reply)


def test_the_document_is_served():
    status, body = get("/doc")
    assert status == 200 and body["name"] == "Widget"


def test_the_name_is_wrong():
    status, body = get("/doc")
    print("fetched the document, name =", body["name"])
    assert body["name"] == "Gadget"


@pytest.mark.skip(reason="not ready yet")
def test_later():
    pass


def test_environment_reaches_the_test():
    assert os.environ["SUITE_FLAG"] == "on"
    assert os.environ["PREFLIGHT_PROJECT_ROOT"] == os.getcwd()
"""

SCRIPT = """
#!/bin/sh
echo "script sees $BASE_URL and $SUITE_FLAG"
echo "to stderr" >&2
exit 3
"""

SUITES: list[dict[str, Any]] = [
    {"id": "py", "runner": "pytest", "file": "tests/test_api.py", "env": {"SUITE_FLAG": "on"}},
    {"id": "pybroken", "runner": "pytest", "file": "tests/test_broken.py"},
    {"id": "pyempty", "runner": "pytest", "file": "tests/test_empty.py"},
    {
        "id": "argv",
        "runner": "shell",
        "command": ["python3", "-c", "import sys; print(sys.argv[1:])", "a;b", "$HOME"],
        "expect": {"stdout": "['a;b', '$HOME']"},
    },
    {
        "id": "split",
        "runner": "shell",
        "command": "echo one; echo two",
        "expect": {"stdout": "one; echo two"},
    },
    {
        "id": "viashell",
        "name": "through sh",
        "runner": "shell",
        "command": "echo one; echo two >&2",
        "shell": True,
        "expect": {"stdout": {"matches": "^one\\n$"}, "stderr": "two"},
    },
    {"id": "script", "runner": "shell", "file": "tests/check.sh", "env": {"SUITE_FLAG": "yes"}},
    {
        "id": "scriptok",
        "runner": "exec",
        "file": "tests/check.sh",
        "env": {"SUITE_FLAG": "yes"},
        "expect": {"exitCode": 3, "stdout": "script sees http", "stderr": {"contains": "to stderr"}},
    },
    {"id": "wrongout", "runner": "shell", "command": ["echo", "hello"], "expect": {"stdout": "goodbye"}},
    {"id": "slow", "runner": "shell", "command": ["sleep", "5"], "timeout": "500ms"},
    {"id": "missing", "runner": "shell", "command": ["no-such-program-here"]},
]


@pytest.fixture(scope="module")
def outcome(stub: Stub, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult, float]:
    root = tmp_path_factory.mktemp("process-runners")
    (root / "tests").mkdir()
    (root / "tests" / "test_api.py").write_text(PYTEST_FILE)
    (root / "tests" / "test_broken.py").write_text("def test_oops(:\n    pass\n")
    (root / "tests" / "test_empty.py").write_text("import os\n")
    (root / "tests" / "check.sh").write_text(textwrap.dedent(SCRIPT).lstrip())
    suites = [{**s, "parallel": True} for s in SUITES]
    (root / "e2e.yaml").write_text(e2e_yaml(suites, {"parallel": {"concurrency": 16}}))
    (root / ".env").write_text(f"BASE_URL={stub.url}\n")

    async def go() -> RunResult:
        return await Project.open(root).run()

    began = time.perf_counter()
    result = anyio.run(go)
    return root, result, time.perf_counter() - began


def suite(outcome: tuple[Path, RunResult, float], suite_id: str) -> SuiteResult:
    return next(s for s in outcome[1].suites if s.id == suite_id)


def test_pytest_cases_pass_fail_and_skip_with_messages(outcome: tuple[Path, RunResult, float]) -> None:
    py = suite(outcome, "py")
    assert py.runner == "pytest" and py.status == "failed" and py.error is None
    statuses = {c.name: c.status for c in py.cases}
    assert statuses == {
        "tests/test_api.py::test_the_document_is_served": "passed",
        "tests/test_api.py::test_the_name_is_wrong": "failed",
        "tests/test_api.py::test_later": "skipped",
        "tests/test_api.py::test_environment_reaches_the_test": "passed",
    }
    assert (py.passed, py.failed, py.skipped) == (2, 1, 1)
    failed = next(c for c in py.cases if c.status == "failed")
    assert failed.failure is not None
    assert "AssertionError" in failed.failure.error and "Gadget" in failed.failure.error
    assert failed.failure.summary.startswith("tests/test_api.py::test_the_name_is_wrong failed: ")
    assert failed.failure.output is not None
    assert "fetched the document, name = Widget" in failed.failure.output  # captured stdout
    assert 'assert body["name"] == "Gadget"' in failed.failure.output or "Gadget" in failed.failure.output
    skipped = next(c for c in py.cases if c.status == "skipped")
    assert skipped.skip_reason == "not ready yet"
    assert failed.id == "py.tests-test-api-test-the-name-is-wrong"


def test_pytest_collection_error_is_a_suite_error(outcome: tuple[Path, RunResult, float]) -> None:
    broken = suite(outcome, "pybroken")
    assert broken.status == "failed"
    assert broken.cases == []
    assert broken.error is not None
    assert broken.error.startswith("pytest could not collect tests/test_broken.py")
    assert "SyntaxError" in broken.error and "line 1" in broken.error


def test_pytest_without_tests_fails(outcome: tuple[Path, RunResult, float]) -> None:
    empty = suite(outcome, "pyempty")
    assert empty.status == "failed" and empty.cases == []
    assert empty.error is not None and empty.error.startswith("pytest recorded no test (exit status 5)")


def test_shell_argv_list_is_passed_verbatim(outcome: tuple[Path, RunResult, float]) -> None:
    argv = suite(outcome, "argv")
    assert argv.status == "passed", argv.cases[0].failure
    assert argv.cases[0].name == "python3 -c 'import sys; print(sys.argv[1:])' 'a;b' '$HOME'"


def test_shell_string_is_split_without_a_shell(outcome: tuple[Path, RunResult, float]) -> None:
    split = suite(outcome, "split")
    assert split.status == "passed", split.cases[0].failure


def test_shell_true_runs_through_sh(outcome: tuple[Path, RunResult, float]) -> None:
    via = suite(outcome, "viashell")
    assert via.status == "passed", via.cases[0].failure
    assert [c.name for c in via.cases] == ["through sh"]


def test_shell_script_exit_code_and_output(outcome: tuple[Path, RunResult, float]) -> None:
    script = suite(outcome, "script")
    assert script.status == "failed"
    [only] = script.cases
    assert only.failure is not None
    assert only.failure.error == "exitCode: expected to equal 0, got 3"
    assert only.failure.summary == "`tests/check.sh` exited with 3: exitCode: expected to equal 0, got 3"
    assert only.failure.output is not None
    assert "script sees http://127.0.0.1" in only.failure.output and "and yes" in only.failure.output
    assert "[stderr]\nto stderr" in only.failure.output
    assert suite(outcome, "scriptok").status == "passed", suite(outcome, "scriptok").cases[0].failure


def test_shell_stdout_expectation_failure_is_precise(outcome: tuple[Path, RunResult, float]) -> None:
    [only] = suite(outcome, "wrongout").cases
    assert only.failure is not None
    failing = [a for a in only.failure.assertions if not a.passed]
    assert [(a.path, a.operator, a.expected, a.actual) for a in failing] == [
        ("stdout", "contains", "goodbye", "hello\n")
    ]
    assert (
        only.failure.summary
        == '`echo hello` exited with 0: stdout: expected to contain "goodbye", got "hello\\n"'
    )


def test_shell_timeout_stops_the_process(outcome: tuple[Path, RunResult, float]) -> None:
    slow = suite(outcome, "slow")
    assert slow.status == "failed"
    [only] = slow.cases
    assert only.failure is not None
    assert only.failure.error == "`sleep 5` did not finish within 500ms and was stopped"
    assert only.failure.summary == only.failure.error
    assert only.duration < 2_000
    assert slow.duration < 3_000  # the suite did not wait for `sleep 5` (nor for its pipes to close)


def test_a_program_that_does_not_exist(outcome: tuple[Path, RunResult, float]) -> None:
    [only] = suite(outcome, "missing").cases
    assert only.failure is not None
    assert only.failure.error == "cannot start no-such-program-here: No such file or directory"
    assert only.failure.summary == only.failure.error


def test_process_suites_write_their_failures_as_artifacts(outcome: tuple[Path, RunResult, float]) -> None:
    result = outcome[1]
    names = {a.name for a in result.artifacts}
    for item in result.failures():
        assert item.failure is not None and item.failure.artifact in names
    record = next(
        a for a in result.artifacts if a.name == "cases/py.tests-test-api-test-the-name-is-wrong.json"
    )
    full = json.loads(Path(record.path).read_text())
    assert "fetched the document" in full["output"]


def _events(outcome: tuple[Path, RunResult, float]) -> list[dict[str, Any]]:
    path = next(a.path for a in outcome[1].artifacts if a.name == "events.ndjson")
    return suite_events(path)


def _moment(event: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00"))


def test_every_case_of_a_process_suite_has_a_start_and_an_end_event(
    outcome: tuple[Path, RunResult, float],
) -> None:
    events = _events(outcome)
    for item in outcome[1].suites:
        mine = [e for e in events if e.get("suite") == item.id]
        assert mine[0]["type"] == "suite_start" and mine[-1]["type"] == "suite_end"
        for case in item.cases:
            kinds = [e["type"] for e in mine if e.get("case") == case.id]
            assert kinds == ["case_start", "case_end"], (case.id, kinds)


def test_pytest_case_events_are_at_the_times_of_the_junit_report(
    outcome: tuple[Path, RunResult, float],
) -> None:
    mine = [e for e in _events(outcome) if e.get("suite") == "py"]
    moments = [_moment(e) for e in mine]
    assert moments == sorted(moments)  # suite start <= each case's start <= its end <= suite end
    starts = [e for e in mine if e["type"] == "case_start"]
    assert [e["case"] for e in starts] == [c.id for c in suite(outcome, "py").cases]
    assert _moment(starts[-1]) > _moment(mine[0])  # not all stamped at the suite's start


def test_a_collection_error_is_an_error_testcase_in_junit_xml(outcome: tuple[Path, RunResult, float]) -> None:
    path = next(a.path for a in outcome[1].artifacts if a.name == "junit.xml")
    xml = junitparser.JUnitXml.fromfile(path)
    broken = next(s for s in xml if s.name == "pybroken")
    [testcase] = list(broken)
    [error] = testcase.result
    assert isinstance(error, junitparser.Error)
    assert error.message == suite(outcome, "pybroken").error
    assert error.message is not None and error.message.startswith(
        "pytest could not collect tests/test_broken.py"
    )
    assert (broken.tests, broken.errors) == (1, 1)
