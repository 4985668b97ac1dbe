"""`runner: playwright` without Docker: a test-only project whose Playwright tests need no service.

The project's config names a Chromium and a Firefox project: the Chromium one runs on the
machine's Chromium (no browser is downloaded), the Firefox one is left out with a warning. A
project without its Node packages, and a test file that does not compile, are suite errors that
say so. Node packages come from tests/node (scripts/ensure-node-tools; in CI a missing node fails).
"""

from __future__ import annotations

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
