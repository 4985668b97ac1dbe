"""The pytest and shell runners: a subprocess with the environment's URLs in its environment.

pytest runs the suite's file or directory and writes JUnit XML, which becomes one case per test
(the assertion message and captured output on failure). A shell suite runs its `command` (an argv
list, or a string split like a shell would but run without one unless `shell: true`) or its
script `file`, in the e2e.yaml directory, and is one case checked by `expect` (exit status,
stdout, stderr).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import anyio

from ..assertions import AssertionResult, check, passed
from ..config import LoadedConfig, SuiteConfig
from ..durations import parse_duration
from ..engine.process import Completed, run_command
from ..results.run import CaseResult, SuiteResult
from .cases import failure_from_text
from .context import RunContext, case_id
from .junit import read_junit

__all__ = ["run_pytest_suite", "run_shell_suite"]

_DEFAULT_TIMEOUT = 300.0
_CANNOT_START = 127


def _environment(run: RunContext, loaded: LoadedConfig, suite: SuiteConfig) -> dict[str, str]:
    env = {**loaded.environ, **run.env.process_env()}
    env.update({key: str(value) for key, value in suite.env.items()})
    return env


async def _execute(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float
) -> tuple[Completed | None, float]:
    started = time.perf_counter()
    try:
        done = await run_command(argv, cwd=str(cwd), env=env, timeout=timeout)
    except TimeoutError:
        return None, time.perf_counter() - started
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return Completed(
            returncode=_CANNOT_START, stdout="", stderr=f"cannot start {argv[0]}: {reason}"
        ), time.perf_counter() - started
    return done, time.perf_counter() - started


async def run_pytest_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str]
) -> SuiteResult:
    """Run a pytest suite and turn each test of its JUnit report into a case."""
    run.event("suite_start", suite=suite.id)
    root = Path(loaded.root)
    target = loaded.resolve(suite.file or ".")
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else _DEFAULT_TIMEOUT
    with tempfile.TemporaryDirectory(prefix="preflight-junit-") as scratch:
        report = Path(scratch) / "junit.xml"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            str(target),
            f"--junitxml={report}",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "junit_logging=all",
            *(["-c", str(loaded.resolve(suite.config))] if suite.config else []),
            *suite.args,
        ]
        done, elapsed = await _execute(argv, cwd=root, env=_environment(run, loaded, suite), timeout=timeout)
        tests = await anyio.to_thread.run_sync(read_junit, report)
    cases: list[CaseResult] = []
    collection = [t for t in tests if t.status == "error" and t.message == "collection failure"]
    tests = [t for t in tests if t not in collection]
    for test in tests:
        name = _node_id(root, test.classname, test.name)
        identifier = case_id(suite.id, name.replace(".py::", "-").replace("::", "-"), taken)
        status: Literal["passed", "failed", "skipped"] = (
            "failed"
            if test.status in ("failed", "error")
            else "skipped"
            if test.status == "skipped"
            else "passed"
        )
        failure = None
        if status == "failed":
            first = (
                test.message or (test.detail.splitlines()[-1] if test.detail else "") or "failed"
            ).strip()
            failure = failure_from_text(
                run,
                identifier,
                error=first or "failed",
                summary=f"{name} failed: {first.splitlines()[0] if first else 'see output'}"[:300],
                output="\n".join(part for part in (test.detail, test.stdout, test.stderr) if part) or None,
            )
        case = CaseResult(
            id=identifier,
            name=name,
            suite=suite.id,
            status=status,
            duration=int(test.time * 1000),
            timestamp=int(time.time() * 1000),
            failure=failure,
            skip_reason=(test.message or "skipped") if status == "skipped" else None,
        )
        cases.append(case)
        run.case_finished(case)
    error = None
    if done is None:
        error = f"pytest did not finish within {_seconds(timeout)} and was stopped"
    elif collection:
        error = "; ".join(_collection_error(root, t) for t in collection[:3])
    elif not tests:
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        shown = " | ".join(tail) or "no output"
        error = f"pytest recorded no test (exit status {done.returncode}): {shown}"
    return run.finish_suite(
        id=suite.id, name=suite.name or suite.id, runner="pytest", cases=cases, seconds=elapsed, error=error
    )


async def run_shell_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str]
) -> SuiteResult:
    """Run a shell suite as one case checked by its `expect`."""
    run.event("suite_start", suite=suite.id)
    root = Path(loaded.root)
    argv, shown = _shell_argv(loaded, suite)
    identifier = case_id(suite.id, suite.name or shown, taken)
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else _DEFAULT_TIMEOUT
    done, elapsed = await _execute(argv, cwd=root, env=_environment(run, loaded, suite), timeout=timeout)
    expect = suite.expect
    assertions: list[AssertionResult] = []
    error = None
    if done is None:
        error = f"`{shown}` did not finish within {_seconds(timeout)} and was stopped"
    elif done.returncode == _CANNOT_START and done.stderr.startswith("cannot start "):
        error = done.stderr
    else:
        assertions += check(done.returncode, expect.exit_code if expect else 0, "exitCode")
        if expect is not None:
            for stream, wanted in (("stdout", expect.stdout), ("stderr", expect.stderr)):
                if wanted is not None:
                    text = done.stdout if stream == "stdout" else done.stderr
                    assertions += check(
                        text, {"contains": wanted} if isinstance(wanted, str) else wanted, stream
                    )
    ok = error is None and passed(assertions)
    failure = None
    if not ok:
        output = None if done is None else _tail(done.stdout, done.stderr)
        first = error or next(a.message for a in assertions if not a.passed)
        summary = (
            first if error else f"`{_short(shown)}` exited with {done.returncode if done else '?'}: {first}"
        )
        failure = failure_from_text(
            run,
            identifier,
            error=first,
            summary=_one_line(summary)[:300],
            output=output,
            assertions=assertions,
        )
    case = CaseResult(
        id=identifier,
        name=suite.name or shown,
        suite=suite.id,
        status="passed" if ok else "failed",
        duration=int(elapsed * 1000),
        timestamp=int(time.time() * 1000),
        failure=failure,
    )
    run.case_finished(case)
    return run.finish_suite(
        id=suite.id, name=suite.name or suite.id, runner="shell", cases=[case], seconds=elapsed
    )


def _node_id(root: Path, classname: str, name: str) -> str:
    """Return pytest's node id (`tests/test_api.py::TestX::test_y`) from a JUnit classname."""
    parts = classname.split(".") if classname else []
    for cut in range(len(parts), 0, -1):
        candidate = Path(*parts[:cut]).with_suffix(".py")
        if (root / candidate).is_file():
            return "::".join([candidate.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}" if classname else name


def _collection_error(root: Path, test: Any) -> str:
    """Say which file pytest could not collect, and why (the exception line and its location)."""
    where = _node_id(root, test.name.replace("/", "."), "").rstrip(":") if test.name else "a test file"
    lines = [line[1:].strip() for line in test.detail.splitlines() if line.startswith("E ")]
    reason = next((line for line in reversed(lines) if re.match(r"^[\w.]+(Error|Exception)\b", line)), None)
    location = next((line for line in lines if line.startswith("File ")), None)
    text = reason or (lines[-1] if lines else test.message)
    if location is not None:
        match = re.search(r"line (\d+)", location)
        text += f" (line {match.group(1)})" if match else ""
    return f"pytest could not collect {where}: {text}"


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:g}s"


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


def _tail(stdout: str, stderr: str, limit: int = 20_000) -> str:
    text = stdout + (("\n[stderr]\n" + stderr) if stderr else "")
    return text if len(text) <= limit else "…" + text[-limit:]


def _one_line(text: str) -> str:
    return text.replace("\r", "").replace("\n", "\\n")


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:59] + "…"
