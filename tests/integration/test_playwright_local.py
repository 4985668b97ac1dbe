"""`runner: playwright` without Docker: a test-only project whose Playwright tests need no service.

The project's config names a Chromium and a Firefox project: the Chromium one runs on the
machine's Chromium (no browser is downloaded), the Firefox one is left out with a warning. A
project without its Node packages, and a test file that does not compile, are suite errors that
say so. Node packages come from tests/node (scripts/ensure-node-tools; in CI a missing node fails).
A directory of pytest-playwright tests (no playwright.config.*) runs with pytest, on the same
Chromium; pytest-playwright is installed for the suite's interpreter only (its PYTHONPATH).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.browser import ensure_chromium
from support.node import require_node_tools

from preflight_sdk import Project

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

CONFIG = """import { defineConfig, devices } from '@playwright/test';
export default defineConfig({
  testDir: './tests',
  projects: [
    { name: 'chromium', use: { ...devices['Desktop Chrome'] } },
    { name: 'firefox', use: { ...devices['Desktop Firefox'] } },
  ],
});
"""
SPEC = """import { expect, test } from '@playwright/test';
test('the page says hello', async ({ page, browserName }) => {
  await page.setContent(`<h1>hello from ${process.env.GREETING}</h1>`);
  await expect(page.locator('h1')).toHaveText('hello from preflight');
  expect(browserName).toBe('chromium');
});
"""


def _project(root: Path, spec: str = SPEC, *, modules: bool = True) -> Path:
    (root / "web" / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: pw}\ntests:\n  suites:\n'
        "    - {id: pw, runner: playwright, file: web, env: {GREETING: preflight}}\n"
    )
    (root / "web" / "playwright.config.ts").write_text(CONFIG)
    (root / "web" / "tests" / "hello.spec.ts").write_text(spec)
    if modules:
        (root / "web" / "node_modules").symlink_to(require_node_tools() / "node_modules")
    return root


async def test_chromium_projects_run_on_the_machines_chromium_and_others_are_left_out(tmp_path: Path) -> None:
    ensure_chromium()
    async with Project.open(_project(tmp_path / "p")) as project:
        result = await project.run()
    [suite] = result.suites
    assert [(c.name, c.status) for c in suite.cases] == [
        ("tests/hello.spec.ts › the page says hello", "passed")
    ]
    assert suite.warnings == [
        "projects firefox were not run: preflight drives the machine's Chromium, and never downloads "
        "another browser"
    ]
    assert (
        not list((tmp_path / "p" / "web").glob(".preflight-*"))
        and not (tmp_path / "p" / "web" / "test-results").exists()
    )


async def test_a_project_without_its_node_packages_is_a_suite_error_naming_what_to_install(
    tmp_path: Path,
) -> None:
    async with Project.open(_project(tmp_path / "p", modules=False)) as project:
        result = await project.run()
    [suite] = result.suites
    assert suite.status == "failed" and suite.cases == []
    assert suite.error is not None and suite.error.startswith(
        f"@playwright/test is not installed for {tmp_path / 'p' / 'web'}: install the project's Node packages"
    )


async def test_a_test_file_that_does_not_compile_is_a_suite_error(tmp_path: Path) -> None:
    ensure_chromium()
    broken = "import { test } from '@playwright/test';\ntest('x', async () => { const = 1; });\n"
    async with Project.open(_project(tmp_path / "p", broken)) as project:
        result = await project.run()
    [suite] = result.suites
    assert suite.status == "failed" and suite.cases == []
    assert suite.error is not None and suite.error.startswith("Playwright: ")
    assert "hello.spec.ts" in suite.error


PY_TESTS = """from playwright.sync_api import expect


def test_the_heading_is_there(page):
    page.set_content("<h1>hello</h1>")
    assert page.inner_text("h1") == "hello"
    assert "HeadlessChrome" in page.evaluate("navigator.userAgent")


def test_the_heading_says_goodbye(page):
    page.set_content("<h1>hello</h1>")
    expect(page.locator("h1")).to_have_text("goodbye", timeout=500)
"""


@pytest.fixture(scope="module")
def pytest_playwright(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest-playwright for the suite's interpreter only (through its PYTHONPATH), not for this session."""
    target = tmp_path_factory.mktemp("pytest-playwright")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         "pytest-playwright==0.10.0", "python-slugify==9.2.0", "text-unidecode==1.3"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return target


@pytest.mark.slow
async def test_pytest_playwright_tests_run_on_the_machines_chromium_one_case_each(
    tmp_path: Path, pytest_playwright: Path
) -> None:
    ensure_chromium()
    root = tmp_path / "p"
    (root / "ui").mkdir(parents=True)
    (root / "ui" / "test_page.py").write_text(PY_TESTS)
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: pwpy}\ntests:\n  suites:\n'
        f"    - {{id: ui, runner: playwright, file: ui, env: {{PYTHONPATH: '{pytest_playwright}'}}}}\n"
    )
    async with Project.open(root) as project:
        result = await project.run()
    [suite] = result.suites
    assert suite.error is None, suite.error
    assert [(c.name, c.status) for c in suite.cases] == [
        ("ui/test_page.py::test_the_heading_is_there[chromium]", "passed"),
        ("ui/test_page.py::test_the_heading_says_goodbye[chromium]", "failed"),
    ]
    failure = suite.cases[1].failure
    assert failure is not None and failure.browser is not None
    assert "goodbye" in failure.error
    folder = root / ".preflight" / "runs" / result.run_id
    assert failure.browser.screenshot is not None and failure.browser.trace is not None
    assert (folder / failure.browser.screenshot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (folder / failure.browser.trace).read_bytes()[:2] == b"PK"
    assert {failure.browser.screenshot, failure.browser.trace} <= {a.name for a in result.artifacts}


async def test_without_pytest_playwright_the_suite_error_says_where_to_install_it(tmp_path: Path) -> None:
    ensure_chromium()
    root = tmp_path / "p"
    (root / "ui").mkdir(parents=True)
    (root / "ui" / "test_page.py").write_text(PY_TESTS)
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: pwpy}\ntests:\n  suites:\n    - {id: ui, runner: playwright, file: ui}\n'
    )
    async with Project.open(root) as project:
        result = await project.run()
    [suite] = result.suites
    assert suite.cases == [] and suite.error is not None
    assert suite.error.startswith(
        f"pytest-playwright is not installed for {sys.executable}: install it there"
    )
