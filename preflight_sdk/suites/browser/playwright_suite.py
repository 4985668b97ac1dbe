"""`runner: playwright`: the project's own Playwright Test suite, one case per test.

`file` is the directory of the project's `playwright.config.*` (or the config itself; default:
the e2e.yaml directory); a test file or directory without one is a pytest-playwright suite
(`playwright_python`). The suite runs the project's `playwright test` (its
`node_modules/.bin/playwright`, what `npx playwright test` runs) in that directory, through a
config of the run's (`playwright_config`): the machine's Chromium, evidence on failure, the JSON
report. The environment is a pytest or shell suite's: `PREFLIGHT_<NAME>_URL` of every service
and mock, `BASE_URL` (the suite's `service`, else the first service), the suite's `env`.

Each test of the report is a case (a test in two projects is two cases), with its start and
duration on the run's timeline; a failed one carries Playwright's error and its location, what it
printed, its screenshot, trace and other attachments (copied into the run's folder), and the
containers' log lines and mock requests of its own time. A retry policy on the suite becomes
Playwright's `--retries`: each case lists its attempts.
"""

from __future__ import annotations

import base64
import re
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import anyio

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.browser import BrowserEvidence
from preflight_sdk.core.results.run import AttemptResult, CaseResult, SuiteResult
from preflight_sdk.processes.groups import ProcessGroups

from ..cases import failure_from_text, window_diagnostics
from ..commands.process_run import DEFAULT_TIMEOUT, Ran, execute, seconds_text, suite_environment, tail
from ..context import RunContext, case_id
from ..retry import suite_policy
from .evidence import DOM_CHARS
from .host import CHROMIUM_ARGS, find_chromium
from .playwright_config import WrapperFiles, find_cli, find_config, wrapper_environment, write_wrapper
from .playwright_python import run_pytest_playwright
from .playwright_report import PlaywrightReport, PlaywrightResult, PlaywrightTest, read_report

__all__ = ["run_playwright_suite"]

_STATUS: dict[str, Literal["passed", "failed", "skipped"]] = {
    "expected": "passed",
    "flaky": "passed",
    "unexpected": "failed",
    "skipped": "skipped",
}
_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "application/zip": ".zip", "video/webm": ".webm"}
_ATTACHMENT_BYTES = 100 * 1024 * 1024


async def run_playwright_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str]
) -> SuiteResult:
    """Run the project's Playwright tests and record one case per test (see the module docstring)."""
    began = time.perf_counter()
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else DEFAULT_TIMEOUT
    target = loaded.resolve(suite.file or ".")
    config = find_config(target)
    python_tests = config is None and (target.suffix == ".py" or target.is_dir())
    problem = None if python_tests else _unrunnable(target, config)
    if problem is not None:
        return _suite_error(run, suite, began, problem)
    try:
        chromium = find_chromium(loaded.environ)
    except PreflightError as exc:
        return _suite_error(run, suite, began, f"[{exc.code}] {exc.message} ({exc.hint})")
    if python_tests:
        cases, error = await run_pytest_playwright(
            run, loaded, suite, target, chromium, taken, timeout=timeout
        )
        return _finish(run, suite, began, cases, error)
    assert config is not None
    cli = find_cli(config.parent)
    if cli is None:
        return _suite_error(
            run, suite, began,
            f"@playwright/test is not installed for {config.parent}: install the project's Node packages "
            "there (`npm ci`, or `npm install -D @playwright/test`); preflight runs the project's own "
            "`playwright test` and never downloads a browser",
        )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="preflight-playwright-") as scratch:
        files = WrapperFiles(config, Path(scratch), run.run_id)
        ran = await _run_tests(run, loaded, suite, cli, config, files, chromium, timeout)
        report = await anyio.to_thread.run_sync(read_report, files.report)
        cases = await _cases(run, suite, config, report, ran, taken) if report is not None else []
        warnings = _left_out(files)
    return _finish(run, suite, began, cases, _error(report, ran, timeout, cli), warnings)


def _unrunnable(target: Path, config: Path | None) -> str | None:
    if config is not None:
        return None
    if target.is_dir():
        return (
            f"no Playwright config in {target} (looked for playwright.config.ts, .js, .mjs…): point `file` "
            "at the directory that has one"
        )
    return (
        f"`{target.name}` is not a Playwright config: point `file` at playwright.config.* or at its directory"
    )


async def _run_tests(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, cli: Path, config: Path, files: WrapperFiles,
    chromium: str, timeout: float,
) -> Ran:  # fmt: skip
    env = {**suite_environment(run, loaded, suite), **wrapper_environment(files, chromium, CHROMIUM_ARGS)}
    policy = suite_policy(suite.retry, run.retry)
    retries = ["--retries", str(policy.max_attempts - 1)] if policy.max_attempts > 1 else []
    argv = [str(cli), "test", "--config", files.wrapper.name, *retries, *suite.args]
    await anyio.to_thread.run_sync(write_wrapper, config, files)
    try:
        return await execute(
            argv, cwd=config.parent, env=env, timeout=timeout, groups=ProcessGroups(loaded.state_root)
        )
    finally:
        files.wrapper.unlink(missing_ok=True)


async def _cases(
    run: RunContext, suite: SuiteConfig, config: Path, report: PlaywrightReport, ran: Ran, taken: set[str]
) -> list[CaseResult]:
    projects = {test.project for test in report.tests}
    cases = []
    for test in report.tests:
        name = _name(test, config, report.root_dir, several=len(projects) > 1)
        cases.append(await _case(run, suite, config, test, run.env.redactor.text(name), ran, taken))
    return cases


async def _case(
    run: RunContext,
    suite: SuiteConfig,
    config: Path,
    test: PlaywrightTest,
    name: str,
    ran: Ran,
    taken: set[str],
) -> CaseResult:
    identifier = case_id(suite.id, name, taken)
    last = test.results[-1] if test.results else PlaywrightResult(status="skipped")
    start = _moment(last.start_time) or ran.started
    end = min(start + timedelta(milliseconds=last.duration), ran.ended)
    run.event("case_start", suite=suite.id, case=identifier, at=start)
    status = _STATUS.get(test.status, "failed")
    failure = None
    if status == "failed":
        messages = last.messages() or [f"the test ended {last.status}"]
        first = _headline(messages[0]) or last.status
        where = f" ({_relative(last.location(), config)})" if last.location() else ""
        evidence = await anyio.to_thread.run_sync(_keep_attachments, run.folder, identifier, last, first)
        failure = failure_from_text(
            run,
            identifier,
            error="\n\n".join(messages),
            summary=f"{name} failed: {first}{where}"[:300],
            output="\n\n".join(part for part in (*messages, last.output()) if part.strip()) or None,
            diagnostics=await window_diagnostics(run, start=start, end=end),
            browser=evidence,
        )
    case = CaseResult(
        id=identifier,
        name=name,
        suite=suite.id,
        status=status,
        duration=int(last.duration),
        timestamp=int(end.timestamp() * 1000),
        failure=failure,
        attempts=_attempts(test) if len(test.results) > 1 else None,
        skip_reason=(test.skip_reason or "skipped") if status == "skipped" else None,
    )
    run.case_finished(case, at=end)
    return case


def _keep_attachments(folder: Path, identifier: str, result: PlaywrightResult, first: str) -> BrowserEvidence:
    """Copy a failed test's attachments into the run's folder; the evidence names them (blocking)."""
    target = folder / "cases" / identifier
    names: dict[str, list[str]] = {}
    for attachment in result.attachments:
        stem = attachment.name.replace("/", "-") or "attachment"
        suffix = _EXTENSIONS.get(attachment.content_type) or (
            Path(attachment.path).suffix if attachment.path else ""
        )
        count = len(names.setdefault(stem, []))
        destination = target / f"{stem}{'-' + str(count + 1) if count else ''}{suffix}"
        if _copy(attachment.path, attachment.body, destination):
            names[stem].append(destination.relative_to(folder).as_posix())
    screenshots, traces = names.pop("screenshot", []), names.pop("trace", [])
    others = [name for kept in names.values() for name in kept]
    context = names.get("error-context", [])
    return BrowserEvidence(
        step=first[:300],
        screenshot=screenshots[0] if screenshots else None,
        trace=traces[0] if traces else None,
        aria_snapshot=_page_snapshot(folder / context[0]) if context else None,
        attachments=[*screenshots[1:], *traces[1:], *others],
    )


def _page_snapshot(path: Path) -> str | None:
    """The page as Playwright's error context saw it (its ARIA snapshot), cut like a DOM excerpt."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"```yaml\n(.*?)```", text, re.DOTALL)
    if match is None:
        return None
    snapshot = match.group(1).strip()
    return (
        snapshot
        if len(snapshot) <= DOM_CHARS
        else snapshot[:DOM_CHARS] + f"… [{len(snapshot) - DOM_CHARS} more characters]"
    )


def _copy(path: str | None, body: str | None, destination: Path) -> bool:
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        if path is not None:
            source = Path(path)
            if not source.is_file() or source.stat().st_size > _ATTACHMENT_BYTES:
                return False
            shutil.copyfile(source, destination)
            return True
        if body is not None:
            destination.write_bytes(base64.b64decode(body))
            return True
    except (OSError, ValueError):
        return False
    return False


def _headline(message: str) -> str:
    """`expect(locator).toBeVisible() failed: getByText('Gift card'): element(s) not found`."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0].removeprefix("Error: ")
    locator = next(
        (line.removeprefix("Locator: ") for line in lines[1:8] if line.startswith("Locator: ")), None
    )
    reason = next((line.removeprefix("Error: ") for line in lines[1:8] if line.startswith("Error: ")), None)
    return ": ".join(part for part in (head, locator, reason) if part)


def _relative(location: str | None, config: Path) -> str | None:
    if location is None:
        return None
    try:
        return Path(location).relative_to(config.parent).as_posix()
    except ValueError:
        return location


def _attempts(test: PlaywrightTest) -> list[AttemptResult]:
    return [
        AttemptResult(
            attempt=number,
            passed=result.status in ("passed", "skipped"),
            duration=int(result.duration),
            timestamp=int((_moment(result.start_time) or datetime.now(UTC)).timestamp() * 1000),
            error=None
            if result.status in ("passed", "skipped")
            else (result.messages() or [result.status])[0][:300],
        )
        for number, result in enumerate(test.results, start=1)
    ]


def _name(test: PlaywrightTest, config: Path, root_dir: str, *, several: bool) -> str:
    """`tests/shop.spec.ts › a describe › a test` (the file as seen from the config's directory)."""
    titles = list(test.titles)
    if root_dir and titles:
        try:
            titles[0] = (Path(root_dir) / titles[0]).relative_to(config.parent).as_posix()
        except ValueError:
            pass
    shown = " › ".join(titles)
    return f"[{test.project}] {shown}" if several and test.project else shown


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _error(report: PlaywrightReport | None, ran: Ran, timeout: float, cli: Path) -> str | None:
    """The suite's error: stopped, no report, errors outside the tests, or no test at all."""
    done = ran.done
    if done is None:
        return f"playwright test did not finish within {seconds_text(timeout)} and was stopped"
    output = tail(done.stdout, done.stderr, 2_000).strip()
    if report is None:
        return f"`{cli.name} test` wrote no report (exit status {done.returncode}): {output or 'no output'}"[
            :2_000
        ]
    if report.errors:
        return "Playwright: " + "; ".join(e.strip().splitlines()[0] for e in report.errors[:3] if e.strip())
    if not report.tests:
        return f"Playwright found no test (exit status {done.returncode})"
    return None


def _left_out(files: WrapperFiles) -> list[str]:
    left = files.left_out()
    if not left:
        return []
    return [
        f"projects {', '.join(left)} were not run: preflight drives the machine's Chromium, and never "
        "downloads another browser"
    ]


def _suite_error(run: RunContext, suite: SuiteConfig, began: float, error: str) -> SuiteResult:
    return _finish(run, suite, began, [], error)


def _finish(
    run: RunContext, suite: SuiteConfig, began: float, cases: list[CaseResult], error: str | None,
    warnings: list[str] | None = None,
) -> SuiteResult:  # fmt: skip
    seconds = time.perf_counter() - began
    return run.finish_suite(suite, "playwright", cases=cases, seconds=seconds, error=error, warnings=warnings)
