"""The pytest and shell runners: a subprocess with the environment's URLs in its environment.

pytest runs the suite's file or directory and writes JUnit XML, which becomes one case per test
(the assertion message and captured output on failure). A shell suite runs its `command` (an argv
list, or a string split like a shell would but run without one unless `shell: true`) or its
script `file`, in the e2e.yaml directory, and is one case checked by `expect` (exit status,
stdout, stderr).

A failing command runs again by the suite's `retry` (else `tests.retry`), every attempt within
the suite's `timeout`; the cases come from the last attempt, each with its attempts when there
were several. A failure carries the diagnostics of the last attempt's time window (service logs,
container states, mock requests), like a YAML failure.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.config.model import ShellExpect
from preflight_sdk.core.assertions import AssertionResult, passed
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.results.run import AttemptResult, CaseResult, DiagnosticReport, SuiteResult
from preflight_sdk.processes.groups import ProcessGroups

from ..cases import failure_from_text, window_diagnostics
from ..context import RunContext, case_id
from ..retry import suite_policy
from .junit_cases import JUnitTry, attempts_of, junit_case
from .junit_read import JUnitCase, JUnitReport, read_junit
from .junit_shell import run_junit_suite
from .process_run import CANNOT_START as _CANNOT_START
from .process_run import DEFAULT_TIMEOUT as _DEFAULT_TIMEOUT
from .process_run import Ran as _Ran
from .process_run import epoch_ms as _ms
from .process_run import execute as _execute
from .process_run import expect_checks
from .process_run import one_line as _one_line
from .process_run import seconds_text as _seconds
from .process_run import short as _short
from .process_run import suite_environment as _environment
from .process_run import tail as _tail
from .process_run import with_retries as _with_retries
from .warm_pytest import warm_enabled

__all__ = ["run_pytest_suite", "run_shell_suite"]

# -- pytest ---------------------------------------------------------------------------------------


class _PytestTry(msgspec.Struct, frozen=True, kw_only=True):
    """One pytest run and its JUnit report (`warm`: run by a warm server's child)."""

    ran: _Ran
    report: JUnitReport
    python: str = ""
    warm: bool = False

    @property
    def collection(self) -> list[JUnitCase]:
        """The files pytest could not collect (a suite error, not cases)."""
        return [t for t in self.report.cases if _not_collected(t)]

    @property
    def tests(self) -> list[JUnitCase]:
        return [t for t in self.report.cases if not _not_collected(t)]

    @property
    def ok(self) -> bool:
        tests = self.tests
        return (
            self.ran.done is not None
            and not self.collection
            and bool(tests)
            and not any(t.status in ("failed", "error") for t in tests)
        )

    def junit(self) -> JUnitTry:
        """This run as the JUnit cases' view of it: its tests and the time it ran."""
        return JUnitTry(tests=self.tests, started=self.ran.started, ended=self.ran.ended)


async def run_pytest_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str]
) -> SuiteResult:
    """Run a pytest suite (again on failure, by its retry policy) and turn each test into a case.

    The caller records `suite_start`; each case's start and end are recorded at the times its
    JUnit report gives.
    """
    root = Path(loaded.root)
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else _DEFAULT_TIMEOUT
    env = _environment(run, loaded, suite)
    began = time.perf_counter()

    per_run = {*run.env.process_env(), "TRACEPARENT"}

    async def once(seconds: float) -> _PytestTry:
        return await _pytest_once(run, loaded, suite, root, env, seconds, per_run)

    tries = await _with_retries(suite_policy(suite.retry, run.retry), timeout, once, lambda t: t.ok)
    last = tries[-1]
    if any(t.warm for t in tries):
        run.reporter.log(
            f"suite {suite.id}: pytest ran warm (a kept interpreter, no start-up)", scope=suite.id
        )
    if run.warm_pytest is not None and warm_enabled():
        # For the next run: a server warming up in the background (this run is over for pytest).
        run.warm_pytest.groups = ProcessGroups(loaded.state_root)
        run.warm_pytest.prepare(last.python, root, env, per_run)
    has_failure = any(t.status in ("failed", "error") for t in last.tests)
    diagnostics = (
        await window_diagnostics(run, start=last.ran.started, end=last.ran.ended) if has_failure else None
    )
    cases = [
        _pytest_case(run, suite, root, tries, test, start, taken, diagnostics)
        for test, start in zip(last.tests, last.junit().starts(), strict=True)
    ]
    run.touches.declare(suite, [case.id for case in cases], run.env)
    error = _pytest_error(root, last, timeout)
    if error is not None and len(tries) > 1:
        error += f" (after {len(tries)} attempts)"
    return run.finish_suite(suite, "pytest", cases=cases, seconds=time.perf_counter() - began, error=error)


async def _pytest_once(
    run: RunContext,
    loaded: LoadedConfig,
    suite: SuiteConfig,
    root: Path,
    env: dict[str, str],
    seconds: float,
    per_run: set[str],
) -> _PytestTry:
    target = loaded.resolve(suite.file or ".")
    python = suite_python(loaded, suite)
    with tempfile.TemporaryDirectory(prefix="preflight-junit-") as scratch:
        junit = Path(scratch) / "junit.xml"
        args = [
            str(target),
            f"--junitxml={junit}",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "junit_logging=all",
            *(["-c", str(loaded.resolve(suite.config))] if suite.config else []),
            *suite.args,
        ]
        ran = None
        if run.warm_pytest is not None and warm_enabled():
            ran = await _execute_warm(run, python, args, root, env, seconds, Path(scratch), per_run)
        warm = ran is not None
        if ran is None:
            groups = ProcessGroups(loaded.state_root)
            ran = await _execute(
                [python, "-m", "pytest", *args], cwd=root, env=env, timeout=seconds, groups=groups
            )
        report = await anyio.to_thread.run_sync(read_junit, junit)
    return _PytestTry(ran=ran, report=report, python=python, warm=warm)


async def _execute_warm(
    run: RunContext,
    python: str,
    args: list[str],
    root: Path,
    env: dict[str, str],
    seconds: float,
    scratch: Path,
    per_run: set[str],
) -> _Ran | None:
    """`python -m pytest ARGS` in a warm server's child; None when no server could take it."""
    assert run.warm_pytest is not None
    started = datetime.now(UTC)
    try:
        done = await run.warm_pytest.run(
            python, args, cwd=root, env=env, per_run=per_run, timeout=seconds, scratch=scratch
        )
    except TimeoutError:
        return _Ran(done=None, started=started, ended=datetime.now(UTC))
    if done is None:
        return None
    return _Ran(done=done, started=started, ended=datetime.now(UTC))


def suite_python(loaded: LoadedConfig, suite: SuiteConfig) -> str:
    """The interpreter of a pytest suite: its `python:` (a path, a command or a venv), else ours.

    Raises:
        InputError: `INVALID_INPUT` when `python:` names nothing that can run.
    """
    if suite.python is None:
        return sys.executable
    given = suite.python
    path = loaded.resolve(given)
    if path.is_dir():
        for candidate in (path / "bin" / "python", path / "Scripts" / "python.exe"):
            if candidate.is_file():
                return str(candidate)
    elif path.is_file():
        return str(path)
    elif "/" not in given and (found := shutil.which(given)) is not None:
        return found
    raise InputError(
        f"suite `{suite.id}`: python `{given}` is neither an interpreter nor a virtualenv (looked for {path})",
        hint="set `python:` to an interpreter path, a command on PATH (python3.12) or a virtualenv "
        "directory with bin/python, relative to e2e.yaml",
        details={"suite": suite.id, "python": given},
    )


def _pytest_case(
    run: RunContext,
    suite: SuiteConfig,
    root: Path,
    tries: list[_PytestTry],
    test: JUnitCase,
    start: datetime,
    taken: set[str],
    diagnostics: DiagnosticReport | None,
) -> CaseResult:
    """Record one test of the last attempt as a case named by its node id."""
    name = run.env.redactor.text(_node_id(root, test.classname, test.name))
    identifier = case_id(suite.id, name.replace(".py::", "-").replace("::", "-"), taken)
    attempts = attempts_of([t.junit() for t in tries], test, _same_test) if len(tries) > 1 else None
    return junit_case(
        run,
        suite.id,
        test,
        name=name,
        start=start,
        ended=tries[-1].ran.ended,
        taken=taken,
        diagnostics=diagnostics,
        attempts=attempts,
        identifier=identifier,
    )


def _same_test(one: JUnitCase, other: JUnitCase) -> bool:
    return (one.classname, one.name) == (other.classname, other.name)


def _not_collected(test: JUnitCase) -> bool:
    return test.status == "error" and test.message == "collection failure"


def _pytest_error(root: Path, last: _PytestTry, timeout: float) -> str | None:
    """The suite-level error of the last pytest run: stopped, not collected, or no test at all."""
    done = last.ran.done
    if done is None:
        return f"pytest did not finish within {_seconds(timeout)} and was stopped"
    if last.collection:
        return "; ".join(_collection_error(root, t, last.python) for t in last.collection[:3])
    if not last.tests:
        output = done.stdout + done.stderr
        if re.search(r"No module named '?pytest'?$", output.strip(), re.MULTILINE):
            return f"pytest is not installed for {last.python}: {_install_hint(last.python, 'pytest')}"
        tail = output.strip().splitlines()[-15:]
        shown = " | ".join(tail) or "no output"
        return f"pytest recorded no test (exit status {done.returncode}): {shown}"
    return None


def _install_hint(python: str, module: str) -> str:
    """Where a missing module goes: the suite's interpreter, or another one named by `python:`."""
    return (
        f"install it there (`{python} -m pip install {module}`), or point the suite's `python:` at "
        "an interpreter or virtualenv that has it"
    )


# -- shell ----------------------------------------------------------------------------------------


class _ShellTry(msgspec.Struct, frozen=True, kw_only=True):
    """One run of a shell suite's command, checked by its `expect`."""

    ran: _Ran
    error: str | None
    assertions: list[AssertionResult]

    @property
    def ok(self) -> bool:
        return self.error is None and passed(self.assertions)

    @property
    def reason(self) -> str:
        return self.error or next((a.message for a in self.assertions if not a.passed), "failed")


async def run_shell_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str]
) -> SuiteResult:
    """Run a shell suite as one case checked by its `expect` (again on failure, by its retry policy).

    With `junit:`, the testcases of the report the command writes are its cases instead.
    """
    root = Path(loaded.root)
    argv, command = _shell_argv(loaded, suite)
    shown = run.env.redactor.text(command)  # the command names the case: `password=…` stays hidden
    if suite.junit is not None:  # its cases are the testcases of the report it writes
        return await run_junit_suite(run, loaded, suite, taken, argv=argv, shown=shown)
    identifier = case_id(suite.id, suite.name or shown, taken)
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else _DEFAULT_TIMEOUT
    env = _environment(run, loaded, suite)
    run.event("case_start", suite=suite.id, case=identifier)
    began = time.perf_counter()

    async def once(seconds: float) -> _ShellTry:
        ran = await _execute(
            argv, cwd=root, env=env, timeout=seconds, groups=ProcessGroups(loaded.state_root)
        )
        return _check_shell(ran, suite.expect, shown, timeout)

    tries = await _with_retries(suite_policy(suite.retry, run.retry), timeout, once, lambda t: t.ok)
    last = tries[-1]
    failure = None
    if not last.ok:
        done = last.ran.done
        summary = (
            last.reason
            if last.error
            else f"`{_short(shown)}` exited with {done.returncode if done else '?'}: {last.reason}"
        )
        failure = failure_from_text(
            run,
            identifier,
            error=last.reason,
            summary=_one_line(summary)[:300],
            output=None if done is None else _tail(done.stdout, done.stderr),
            assertions=last.assertions,
            diagnostics=await window_diagnostics(run, start=last.ran.started, end=last.ran.ended),
        )
    seconds = time.perf_counter() - began
    case = CaseResult(
        id=identifier,
        name=suite.name or shown,
        suite=suite.id,
        status="passed" if last.ok else "failed",
        duration=int(seconds * 1000),
        timestamp=_ms(datetime.now(UTC)),
        failure=failure,
        attempts=[_shell_attempt(n, t) for n, t in enumerate(tries, start=1)] if len(tries) > 1 else None,
    )
    run.case_finished(case)
    run.touches.declare(suite, [case.id], run.env)
    return run.finish_suite(suite, "shell", cases=[case], seconds=seconds)


def _check_shell(ran: _Ran, expect: ShellExpect | None, shown: str, timeout: float) -> _ShellTry:
    """Check one run against the suite's `expect` (exit status 0 when none is given)."""
    done = ran.done
    if done is None:
        error = f"`{shown}` did not finish within {_seconds(timeout)} and was stopped"
        return _ShellTry(ran=ran, error=error, assertions=[])
    if done.returncode == _CANNOT_START and done.stderr.startswith("cannot start "):
        return _ShellTry(ran=ran, error=done.stderr, assertions=[])
    assertions = expect_checks(done, expect)
    return _ShellTry(ran=ran, error=None, assertions=assertions)


def _shell_attempt(number: int, attempt: _ShellTry) -> AttemptResult:
    return AttemptResult(
        attempt=number,
        passed=attempt.ok,
        duration=int(attempt.ran.seconds * 1000),
        timestamp=_ms(attempt.ran.started),
        error=None if attempt.ok else _one_line(attempt.reason)[:300],
    )


def _node_id(root: Path, classname: str, name: str) -> str:
    """Return pytest's node id (`tests/test_api.py::TestX::test_y`) from a JUnit classname."""
    parts = classname.split(".") if classname else []
    for cut in range(len(parts), 0, -1):
        candidate = Path(*parts[:cut]).with_suffix(".py")
        if (root / candidate).is_file():
            return "::".join([candidate.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}" if classname else name


def _collection_error(root: Path, test: JUnitCase, python: str = "") -> str:
    """Say which file pytest could not collect, and why (the exception line and its location)."""
    where = _node_id(root, test.name.replace("/", "."), "").rstrip(":") if test.name else "a test file"
    lines = [line[1:].strip() for line in test.detail.splitlines() if line.startswith("E ")]
    reason = next((line for line in reversed(lines) if re.match(r"^[\w.]+(Error|Exception)\b", line)), None)
    location = next((line for line in lines if line.startswith("File ")), None)
    text = reason or (lines[-1] if lines else test.message)
    if location is not None:
        match = re.search(r"line (\d+)", location)
        text += f" (line {match.group(1)})" if match else ""
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", text)
    if missing is not None and python:
        module = missing.group(1).split(".")[0]
        text += f"; `{module}` is not installed for {python}: {_install_hint(python, module)}"
    return f"pytest could not collect {where}: {text}"


def _shell_argv(loaded: LoadedConfig, suite: SuiteConfig) -> tuple[list[str], str]:
    if suite.command is not None:
        if isinstance(suite.command, list):
            argv = [str(part) for part in suite.command]
            return argv, shlex.join(argv)
        if suite.shell:
            return ["sh", "-c", suite.command], suite.command
        return shlex.split(suite.command), suite.command
    script = loaded.resolve(suite.file or "")
    if os.access(script, os.X_OK):
        return [str(script)], str(suite.file)
    return ["sh", str(script)], str(suite.file)
