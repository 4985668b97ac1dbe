"""`runner: playwright` for Python: a project's pytest-playwright tests, one case per test.

When the suite's `file` is a test file or directory without a `playwright.config.*`, it is run
with pytest and its pytest-playwright plugin (in the suite's `python:`, which must have both), as
a pytest suite is, plus: the machine's Chromium (a small plugin of the run's sets
`browser_type_launch_args`, whoever defines that fixture), `--screenshot only-on-failure
--tracing retain-on-failure`, and the artifacts in a scratch folder. Each test of the JUnit report
is a case; a failed one carries its screenshot and trace from pytest-playwright's folder for it.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import timedelta
from pathlib import Path

import anyio

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core.results.browser import BrowserEvidence
from preflight_sdk.core.results.run import CaseResult
from preflight_sdk.processes.groups import ProcessGroups

from ..cases import window_diagnostics
from ..commands.junit_cases import case_starts, first_message, junit_case, verdict
from ..commands.junit_read import JUnitCase, read_junit
from ..commands.process_run import Ran, execute, seconds_text, suite_environment, tail
from ..commands.runners import suite_python
from ..context import RunContext, case_id
from .host import CHROMIUM_ARGS
from .playwright_config import chromium_environment

__all__ = ["run_pytest_playwright"]

# The run's plugin: the fixture's value (the plugin's default, or the project's own override)
# gets the machine's Chromium on top.
_PLUGIN = '''"""Written by preflight for one run: pytest-playwright launches the machine's Chromium."""
import json
import os

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    value = yield
    if fixturedef.argname == "browser_type_launch_args" and isinstance(value, dict):
        options = json.loads(os.environ.get("PREFLIGHT_PLAYWRIGHT", "{}"))
        value.pop("channel", None)
        value["executable_path"] = options.get("executablePath")
        value["args"] = [*value.get("args", []), *options.get("args", [])]
    return value
'''
_PLUGIN_NAME = "preflight_chromium"


async def run_pytest_playwright(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, target: Path, chromium: str, taken: set[str],
    *, timeout: float,
) -> tuple[list[CaseResult], str | None]:  # fmt: skip
    """Run pytest-playwright tests at `target` (see the module docstring); return the cases and the suite's error."""
    root = Path(loaded.root)
    python = suite_python(loaded, suite)
    with tempfile.TemporaryDirectory(prefix="preflight-pytest-playwright-") as scratch:
        folder = Path(scratch)
        (folder / f"{_PLUGIN_NAME}.py").write_text(_PLUGIN, encoding="utf-8")
        junit, results = folder / "junit.xml", folder / "results"
        env = {**suite_environment(run, loaded, suite), **chromium_environment(chromium, CHROMIUM_ARGS)}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (scratch, env.get("PYTHONPATH", "")) if p)
        argv = [
            python, "-m", "pytest", str(target), f"--junitxml={junit}", "-q", "-p", "no:cacheprovider",
            "-o", "junit_logging=all", "-p", _PLUGIN_NAME, "--screenshot", "only-on-failure",
            "--tracing", "retain-on-failure", "--output", str(results), *suite.args,
        ]  # fmt: skip
        ran = await execute(argv, cwd=root, env=env, timeout=timeout, groups=ProcessGroups(loaded.state_root))
        report = await anyio.to_thread.run_sync(read_junit, junit)
        tests = [t for t in report.cases if t.message != "collection failure"]
        cases = await _cases(run, suite, root, tests, ran, results, taken)
    return cases, _error(ran, tests, report.cases, python, timeout)


async def _cases(
    run: RunContext, suite: SuiteConfig, root: Path, tests: list[JUnitCase], ran: Ran, results: Path,
    taken: set[str],
) -> list[CaseResult]:  # fmt: skip
    cases = []
    for test, start in zip(tests, case_starts(tests, started=ran.started, ended=ran.ended), strict=True):
        node, slug = _node(root, test)
        name = run.env.redactor.text(node)
        identifier = case_id(suite.id, name, taken)
        evidence = None
        diagnostics = None
        if verdict(test) == "failed":
            end = min(start + timedelta(seconds=test.time), ran.ended)
            diagnostics = await window_diagnostics(run, start=start, end=end)
            evidence = await anyio.to_thread.run_sync(
                _evidence, results / slug, run.folder / "cases" / identifier, run.folder, first_message(test)
            )
        case = junit_case(run, suite.id, test, name=name, start=start, ended=ran.ended, taken=taken,
                          diagnostics=diagnostics, identifier=identifier, browser=evidence)  # fmt: skip
        cases.append(case)
    return cases


def _evidence(artifacts: Path, target: Path, folder: Path, message: str) -> BrowserEvidence | None:
    """The screenshot and trace pytest-playwright kept for a failed test, copied to `target` (blocking)."""
    if not artifacts.is_dir():
        return None
    target.mkdir(parents=True, exist_ok=True)
    kept: dict[str, list[str]] = {"screenshot": [], "trace": [], "other": []}
    for source in sorted(artifacts.iterdir()):
        kind = "screenshot" if source.suffix == ".png" else "trace" if source.suffix == ".zip" else "other"
        destination = target / (
            f"{kind}-{len(kept[kind]) + 1}{source.suffix}" if kept[kind] else f"{kind}{source.suffix}"
        )
        if kind == "other":
            destination = target / source.name
        destination.write_bytes(source.read_bytes())
        kept[kind].append(destination.relative_to(folder).as_posix())
    return BrowserEvidence(
        step=message.splitlines()[0][:300] if message else None,
        screenshot=next(iter(kept["screenshot"]), None),
        trace=next(iter(kept["trace"]), None),
        attachments=[*kept["screenshot"][1:], *kept["trace"][1:], *kept["other"]],
    )


def _node(root: Path, test: JUnitCase) -> tuple[str, str]:
    """pytest's node id of a testcase (`tests/test_shop.py::test_title[chromium]`) and
    pytest-playwright's folder name for it (its slug)."""
    parts = test.classname.split(".") if test.classname else []
    node = f"{test.classname}::{test.name}" if test.classname else test.name
    for cut in range(len(parts), 0, -1):
        module = Path(*parts[:cut]).with_suffix(".py")
        if (root / module).is_file():
            node = "::".join([module.as_posix(), *parts[cut:], test.name])
            break
    return node, re.sub(r"[^a-z0-9]+", "-", node.lower()).strip("-")


def _error(
    ran: Ran, tests: list[JUnitCase], every: list[JUnitCase], python: str, timeout: float
) -> str | None:
    done = ran.done
    if done is None:
        return f"pytest did not finish within {seconds_text(timeout)} and was stopped"
    output = tail(done.stdout, done.stderr, 2_000).strip()
    if "unrecognized arguments: --screenshot" in output or "unrecognized arguments: --tracing" in output:
        return (
            f"pytest-playwright is not installed for {python}: install it there (`{python} -m pip install "
            "pytest-playwright`), or point the suite's `python:` at an interpreter that has it"
        )
    not_collected = [t for t in every if t.message == "collection failure"]
    if not_collected:
        return f"pytest could not collect {not_collected[0].name or 'a test file'}: {first_message(not_collected[0])}"[
            :1_000
        ]
    if not tests:
        return (
            f"pytest recorded no test (exit status {done.returncode}; the suite's `file` has no "
            f"playwright.config.*, so it ran as pytest-playwright tests): {output or 'no output'}"
        )[:1_000]
    return None
