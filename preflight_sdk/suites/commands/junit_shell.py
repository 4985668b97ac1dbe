"""A shell suite with `junit:`: the command runs, and the JUnit report(s) it wrote become its cases.

Any tool that writes JUnit XML is covered as it is: Jest (jest-junit), Vitest, Node's test runner,
Go through gotestsum, Maven Surefire (a file per class: a glob), Newman, Cypress and mocha
(mocha-junit-reporter), Hurl, Playwright, pytest. The files that match the glob(s) are compared
before and after each run of the command, so a report left by an earlier run is never read as
this one's; only the files the command wrote or rewrote are read.

The verdict is the cases': a failing testcase is a failed case, whatever the exit status. When
no case failed, the command must also have exited as `expect` says (0 by default), else the
suite has an error. A command that writes no report, a report that is not JUnit, and a report
with no testcase are suite errors that say so, with the tail of the command's output.
"""

from __future__ import annotations

import glob
import time
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core.assertions import passed
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.results.run import CaseResult, DiagnosticReport, SuiteResult
from preflight_sdk.processes.groups import ProcessGroups

from ..cases import window_diagnostics
from ..context import RunContext
from ..retry import suite_policy
from .junit_cases import JUnitTry, attempts_of, display_name, junit_case, verdict
from .junit_read import JUnitCase, JUnitReport, read_junit_files
from .process_run import (
    CANNOT_START,
    DEFAULT_TIMEOUT,
    Ran,
    execute,
    expect_checks,
    seconds_text,
    short,
    suite_environment,
    with_retries,
)

__all__ = ["junit_patterns", "run_junit_suite"]

_MAX_FILES = 1_000
_Stamp = tuple[int, int, int]


class _Try(msgspec.Struct, frozen=True, kw_only=True):
    """One run of the command and what its reports said."""

    ran: Ran
    report: JUnitReport
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None and not any(verdict(t) == "failed" for t in self.report.cases)

    def junit(self) -> JUnitTry:
        return JUnitTry(tests=self.report.cases, started=self.ran.started, ended=self.ran.ended)


def junit_patterns(suite: SuiteConfig) -> list[str]:
    """The suite's `junit:` globs as a list."""
    given = suite.junit
    return [] if given is None else [given] if isinstance(given, str) else list(given)


async def run_junit_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str], *, argv: list[str], shown: str
) -> SuiteResult:
    """Run a shell suite's command (again on failure, by its retry policy) and read its JUnit reports."""
    root = Path(loaded.root)
    patterns = junit_patterns(suite)
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else DEFAULT_TIMEOUT
    env = suite_environment(run, loaded, suite)
    began = time.perf_counter()

    async def once(seconds: float) -> _Try:
        before = await anyio.to_thread.run_sync(_stamps, root, patterns)
        ran = await execute(argv, cwd=root, env=env, timeout=seconds, groups=ProcessGroups(loaded.state_root))
        after = await anyio.to_thread.run_sync(_stamps, root, patterns)
        written = sorted(path for path, stamp in after.items() if before.get(path) != stamp)
        report = await anyio.to_thread.run_sync(
            lambda: read_junit_files([Path(p) for p in written], window=(ran.started, ran.ended))
        )
        return _Try(ran=ran, report=report, error=_error(ran, report, suite, shown, patterns, timeout))

    tries = await with_retries(suite_policy(suite.retry, run.retry), timeout, once, lambda t: t.ok)
    last = tries[-1]
    failing = any(verdict(t) == "failed" for t in last.report.cases)
    diagnostics = (
        await window_diagnostics(run, start=last.ran.started, end=last.ran.ended) if failing else None
    )
    cases = _cases(run, suite, tries, taken, diagnostics)
    error = last.error
    if error is not None and len(tries) > 1:
        error += f" (after {len(tries)} attempts)"
    warnings = (
        [f"{last.report.left_out} more testcases were left out of the report"] if last.report.left_out else []
    )
    return run.finish_suite(
        suite, "shell", cases=cases, seconds=time.perf_counter() - began, error=error, warnings=warnings
    )


def _cases(
    run: RunContext,
    suite: SuiteConfig,
    tries: list[_Try],
    taken: set[str],
    diagnostics: DiagnosticReport | None,
) -> list[CaseResult]:
    last = tries[-1].junit()
    views = [t.junit() for t in tries]
    cases: list[CaseResult] = []
    for test, start in zip(last.tests, last.starts(), strict=True):
        cases.append(
            junit_case(
                run,
                suite.id,
                test,
                name=display_name(test),
                start=start,
                ended=last.ended,
                taken=taken,
                diagnostics=diagnostics,
                attempts=attempts_of(views, test, _same_test) if len(tries) > 1 else None,
            )
        )
    return cases


def _same_test(one: JUnitCase, other: JUnitCase) -> bool:
    return (one.suite, one.classname, one.name) == (other.suite, other.classname, other.name)


def _stamps(root: Path, patterns: list[str]) -> dict[str, _Stamp]:
    """The files matching the globs, each with what changes when it is written again."""
    found: dict[str, _Stamp] = {}
    for pattern in patterns:
        full = pattern if Path(pattern).is_absolute() else str(root / pattern)
        for name in glob.iglob(full, recursive=True):
            if len(found) >= _MAX_FILES:
                return found
            try:
                info = Path(name).stat()
            except OSError:
                continue
            if Path(name).is_file():
                found[name] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return found


def _error(
    ran: Ran, report: JUnitReport, suite: SuiteConfig, shown: str, patterns: list[str], timeout: float
) -> str | None:
    """The suite-level error of one run, or None when its report speaks for it."""
    done = ran.done
    where = ", ".join(f"`{p}`" for p in patterns)
    if done is None:
        stopped = f"`{short(shown)}` did not finish within {seconds_text(timeout)} and was stopped"
        return stopped if report.cases else f"{stopped} before it wrote a JUnit report matching {where}"
    if done.returncode == CANNOT_START and done.stderr.startswith("cannot start "):
        return done.stderr
    if not report.files:
        return (
            f"`{short(shown)}` exited with {done.returncode} and wrote no JUnit report matching {where}: "
            f"{_tail(done.stdout + done.stderr)}"
        )
    if report.problems:
        return "; ".join(report.problems[:3])
    if not report.cases:
        return f"the JUnit report ({', '.join(Path(f).name for f in report.files[:3])}) holds no testcase"
    if any(verdict(t) == "failed" for t in report.cases):
        return None  # the cases carry the verdict; a failing tool's exit status says nothing more
    assertions = expect_checks(done, suite.expect)
    if passed(assertions):
        return None
    reasons = "; ".join(a.message for a in assertions if not a.passed)
    return f"`{short(shown)}` reported no failing test, but {reasons}: {_tail(done.stdout + done.stderr)}"


def _tail(output: str) -> str:
    lines = output.strip().splitlines()[-15:]
    return " | ".join(lines) or "no output"
