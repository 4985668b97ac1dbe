"""Suite and run retry policies of pytest and shell suites: the command runs again, each attempt kept.

One project holds every suite, marked parallel, run once for the module (pytest children are slow
to start). Counter files written by the commands say how often each one really ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from support.events import suite_events
from support.stub import e2e_yaml

from preflight_sdk import Project
from preflight_sdk.core.results.run import CaseResult, RunResult, SuiteResult

# Exit 1 until the command has run `$PASS_AT` times (never, when unset); counts in `$COUNTER`.
COUNTING = (
    'n=$(cat "$COUNTER" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$COUNTER"; '
    'echo "run $n"; [ "$n" -ge "${PASS_AT:-99}" ]'
)

FLAKY_TESTS = """
from pathlib import Path

COUNTER = Path(__file__).with_name("pytest-count")


def test_stable():
    assert True


def test_flaky():
    runs = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1
    COUNTER.write_text(str(runs))
    assert runs >= 2, f"run {runs} fails"
"""

SUITES: list[dict[str, Any]] = [
    {
        "id": "flaky",
        "runner": "shell",
        "command": COUNTING,
        "shell": True,
        "env": {"COUNTER": "flaky-count", "PASS_AT": 2},
        "retry": {"maxAttempts": 3, "delay": "10ms"},
    },
    {
        "id": "broken",
        "runner": "shell",
        "command": COUNTING,
        "shell": True,
        "env": {"COUNTER": "broken-count"},
    },
    {
        "id": "once",
        "runner": "shell",
        "command": COUNTING,
        "shell": True,
        "env": {"COUNTER": "once-count", "PASS_AT": 1},
    },
    {
        "id": "deadline",
        "runner": "shell",
        "command": COUNTING,
        "shell": True,
        "env": {"COUNTER": "deadline-count"},
        "timeout": "1s",
        "retry": {"maxAttempts": 10, "delay": "400ms"},
    },
    {
        "id": "pyflaky",
        "runner": "pytest",
        "file": "tests/test_flaky.py",
        "retry": {"maxAttempts": 2, "delay": "10ms"},
    },
]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    root = tmp_path_factory.mktemp("process-retry")
    (root / "tests").mkdir()
    (root / "tests" / "test_flaky.py").write_text(FLAKY_TESTS)
    suites = [{**s, "parallel": True} for s in SUITES]
    # tests.retry applies to the suites without their own policy (`broken`, `once`)
    tests = {"parallel": {"concurrency": 8}, "retry": {"maxAttempts": 2, "delay": "10ms"}}
    (root / "e2e.yaml").write_text(e2e_yaml(suites, tests))

    async def go() -> RunResult:
        return await Project.open(root).run()

    return root, anyio.run(go)


def suite(outcome: tuple[Path, RunResult], suite_id: str) -> SuiteResult:
    return next(s for s in outcome[1].suites if s.id == suite_id)


def runs(outcome: tuple[Path, RunResult], counter: str) -> int:
    return int((outcome[0] / counter).read_text())


def only(outcome: tuple[Path, RunResult], suite_id: str) -> CaseResult:
    [case] = suite(outcome, suite_id).cases
    return case


def test_a_suite_policy_runs_a_shell_command_again_until_it_passes(outcome: tuple[Path, RunResult]) -> None:
    assert runs(outcome, "flaky-count") == 2
    case = only(outcome, "flaky")
    assert case.status == "passed" and case.failure is None
    assert case.attempts is not None
    assert [(a.attempt, a.passed) for a in case.attempts] == [(1, False), (2, True)]
    assert case.attempts[0].error == "exitCode: expected to equal 0, got 1"
    assert case.attempts[0].timestamp <= case.attempts[1].timestamp
    assert suite(outcome, "flaky").status == "passed"


def test_the_run_policy_applies_to_shell_suites_without_their_own(outcome: tuple[Path, RunResult]) -> None:
    assert runs(outcome, "broken-count") == 2
    case = only(outcome, "broken")
    assert case.status == "failed"
    assert case.attempts is not None and [a.passed for a in case.attempts] == [False, False]
    assert case.failure is not None and case.failure.output == "run 2\n"  # the last attempt's output


def test_a_passing_command_runs_once(outcome: tuple[Path, RunResult]) -> None:
    assert runs(outcome, "once-count") == 1
    assert only(outcome, "once").attempts is None


def test_attempts_stay_within_the_suite_timeout(outcome: tuple[Path, RunResult]) -> None:
    # attempts start at about 0s, 0.4s, 0.8s: a fourth would start after the 1s deadline (on a
    # busy machine a slow first attempt leaves room for fewer); ten would take 4 s
    count = runs(outcome, "deadline-count")
    assert 1 <= count <= 3
    case = only(outcome, "deadline")
    assert case.attempts is not None and len(case.attempts) == count
    assert case.duration < 2_500


def test_a_pytest_suite_runs_again_and_each_test_keeps_its_attempts(
    outcome: tuple[Path, RunResult],
) -> None:
    assert runs(outcome, "tests/pytest-count") == 2
    flaky = suite(outcome, "pyflaky")
    assert flaky.status == "passed" and flaky.error is None
    cases = {c.name: c for c in flaky.cases}
    assert set(cases) == {"tests/test_flaky.py::test_stable", "tests/test_flaky.py::test_flaky"}
    attempts = cases["tests/test_flaky.py::test_flaky"].attempts
    assert attempts is not None
    assert [(a.attempt, a.passed) for a in attempts] == [(1, False), (2, True)]
    assert attempts[0].error is not None and "run 1 fails" in attempts[0].error
    stable = cases["tests/test_flaky.py::test_stable"].attempts
    assert stable is not None and [a.passed for a in stable] == [True, True]


def test_events_of_retried_suites_have_one_start_and_end_per_case(outcome: tuple[Path, RunResult]) -> None:
    path = next(a.path for a in outcome[1].artifacts if a.name == "events.ndjson")
    events = suite_events(path)
    for kind in ("case_start", "case_end"):
        ids = [e["case"] for e in events if e["type"] == kind]
        assert sorted(ids) == sorted(c.id for s in outcome[1].suites for c in s.cases)
