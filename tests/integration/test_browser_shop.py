"""The web shop fixture in Docker, its browser suite run from each face, and a broken button's evidence.

tests/fixtures/projects/webshop: a page with an order form (`web`, served from the checkout) that
posts to an orders API (`api`) that charges a mocked payments provider. Its browser suite of five
cases passes; then the page's button is broken the way a developer breaks one (it sends
`quantity` where the API reads `qty`), and exactly one case fails, with a screenshot, the DOM
around the confirmation it waited for, the page's console error, its failed request and the API's
log line. The SDK, the CLI (JSON, text, and report.html looked at in Chromium) and the MCP server
(the failure names its files, the screenshot comes back from get_artifact as an image) each show
it; a browser test saved over MCP runs by id and keeps its history.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.browser import CHROMIUM, CHROMIUM_ARGS, REPO, ensure_chromium
from support.cli import BIN, preflight_json
from support.docker import force_clean
from support.node import require_node_tools

from preflight_sdk import Project
from preflight_sdk.core.results.run import CaseResult, RunResult

pytestmark = [pytest.mark.anyio, pytest.mark.browser, pytest.mark.slow]

FIXTURE = REPO / "tests" / "fixtures" / "projects" / "webshop"
SHOTS = REPO / "test-artifacts" / "report"
PLACED = "shop.an-order-is-placed"
SUMMARY = (
    '/index.html: expected the page to show "confirmed"; the page logged "Error: order failed: 500"; '
    "POST /api/orders answered 500; api logged \"KeyError: 'qty'\""
)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The web shop built and set up once (`preflight build`, `preflight setup`), cleaned at the end."""
    ensure_chromium()
    root = tmp_path_factory.mktemp("webshop") / "webshop"
    shutil.copytree(FIXTURE, root)
    try:
        # Its images are its own: a fresh machine has none, and setup alone does not build.
        built = preflight_json(root, "build", timeout=600)
        assert built["success"] and all(s["status"] == "success" for s in built["data"]["services"]), built
        setup = preflight_json(root, "setup", timeout=400)
        assert setup["success"], setup
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=120)
        force_clean(root)


@pytest.fixture(scope="module")
def broken(shop: Path) -> Path:
    """The shop with its order button broken: it sends `quantity`, the API reads `qty`."""
    script = shop / "web" / "static" / "app.js"
    text = script.read_text()
    assert "qty: qty}" in text
    script.write_text(text.replace("qty: qty}", "quantity: qty}"))
    return shop


@pytest.fixture(scope="module")
def node_packages(shop: Path) -> Path:
    """The shop's Playwright project with its Node packages (tests/node's, installed by scripts/ensure-node-tools)."""
    modules = require_node_tools() / "node_modules"
    assert (modules / ".bin" / "playwright").is_file(), "ensure-node-tools did not install @playwright/test"
    project = shop / "playwright"
    (project / "node_modules").symlink_to(modules)
    return project


def _cases(result: RunResult) -> dict[str, CaseResult]:
    return {c.id: c for s in result.suites for c in s.cases}


async def test_sdk_the_browser_suite_of_the_shop_passes(shop: Path) -> None:
    async with Project.open(shop) as project:
        result = await project.run_suite("shop")
    cases = _cases(result)
    assert result.status == "passed", result.summary
    assert [c.status for c in cases.values()] == ["passed"] * 5
    assert [p.rsplit("/", 1)[-1] for p in cases["shop.the-orders-page-opens-from-the-link"].pages] == [
        "index.html",
        "orders.html",
    ]
    assert all(c.pages for c in cases.values())


async def test_the_shops_own_playwright_tests_are_one_case_each_with_the_failures_files(
    shop: Path, node_packages: Path
) -> None:
    async with Project.open(shop) as project:
        result = await project.run_suite("playwright")
    [suite] = result.suites
    assert (suite.runner, suite.error, suite.warnings) == ("playwright", None, [])
    cases = {c.name: c for c in suite.cases}
    assert {name: c.status for name, c in cases.items()} == {
        "tests/shop.spec.ts › the shop page has its title": "passed",
        "tests/shop.spec.ts › an order is confirmed": "passed",  # BASE_URL is the `web` service's
        "tests/shop.spec.ts › the API lists the orders": "passed",  # PREFLIGHT_API_URL is set
        "tests/shop.spec.ts › the shop offers a gift card": "failed",
    }
    gift = cases["tests/shop.spec.ts › the shop offers a gift card"]
    failure = gift.failure
    assert failure is not None and failure.browser is not None
    assert failure.summary == (
        "tests/shop.spec.ts › the shop offers a gift card failed: expect(locator).toBeVisible() failed: "
        "getByText('Gift card'): element(s) not found (tests/shop.spec.ts:25)"
    )
    assert "Timeout: 2000ms" in failure.error
    page = failure.browser
    folder = shop / ".preflight" / "runs" / result.run_id
    assert page.screenshot == f"cases/{gift.id}/screenshot.png"
    assert (folder / page.screenshot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.trace == f"cases/{gift.id}/trace.zip" and (folder / page.trace).read_bytes()[:2] == b"PK"
    assert page.aria_snapshot is not None and '- button "Place order"' in page.aria_snapshot
    assert {page.screenshot, page.trace} <= {a.name for a in result.artifacts}
    assert failure.diagnostics is not None  # the web service's log lines of that test's own time
    web = next(log for log in failure.diagnostics.container_logs if log.container_name == "web")
    assert "GET /index.html -> 200" in web.lines and not any("orders" in line for line in web.lines)
    assert not list(node_packages.glob(".preflight-*"))  # the run's config is gone with the run


async def test_sdk_a_broken_button_fails_one_case_with_the_page_and_the_api_log_line(broken: Path) -> None:
    async with Project.open(broken) as project:
        result = await project.run_suite("shop")
    cases = _cases(result)
    assert [i for i, c in cases.items() if c.status == "failed"] == [PLACED]
    failure = cases[PLACED].failure
    assert failure is not None and failure.browser is not None and failure.diagnostics is not None
    assert failure.summary == SUMMARY
    assert failure.suggested_fix is not None and failure.suggested_fix.startswith(
        "`api` failed while handling POST /api/orders (KeyError: 'qty')"
    )
    page = failure.browser
    assert (page.step, page.selector, page.title) == ('expect text "confirmed"', "#confirmation", "Web shop")
    assert page.dom is not None and '<form id="order" novalidate="">' in page.dom
    assert ("pageerror", "Error: order failed: 500") in [(m.type, m.text) for m in page.console]
    assert [(r.method, r.url.split("/", 3)[-1], r.status) for r in page.failed_requests] == [
        ("POST", "api/orders", 500)
    ]
    api = next(log for log in failure.diagnostics.container_logs if log.container_name == "api")
    assert "stderr: KeyError: 'qty'" in api.lines
    folder = broken / ".preflight" / "runs" / result.run_id
    assert (folder / (page.screenshot or "")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (folder / (page.thumbnail or "")).read_bytes()[:3] == b"\xff\xd8\xff"  # a JPEG
    assert (folder / (page.trace or "")).read_bytes()[:2] == b"PK"
    assert {page.screenshot, page.thumbnail, page.trace} <= {a.name for a in result.artifacts}


def test_cli_tells_the_failure_with_its_files_and_report_html_shows_the_screenshot(broken: Path) -> None:
    done = subprocess.run(
        [str(BIN / "preflight"), "test", "-C", str(broken), "--filter", "shop"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    text = done.stdout
    assert SUMMARY in text
    shot = re.search(r"^  screenshot: (\S+)$", text, re.MULTILINE)
    trace = re.search(r"^  trace: (\S+)$", text, re.MULTILINE)
    assert shot is not None and trace is not None, text
    assert Path(shot.group(1)).is_file() and Path(trace.group(1)).name == "trace.zip"
    page = re.search(r"^view:\s+file://(\S+)$", text, re.MULTILINE)
    assert page is not None, text
    _look_at_the_report(Path(page.group(1)), Path(shot.group(1)))
    envelope = preflight_json(broken, "runs", "show", Path(page.group(1)).parent.name)
    [case] = [c for s in envelope["data"]["suites"] for c in s["cases"] if c["status"] == "failed"]
    assert case["failure"]["browser"]["screenshot"] == f"cases/{PLACED}/screenshot.png"


def _look_at_the_report(report: Path, full: Path) -> None:
    """Open report.html offline in Chromium: the thumbnail shows inline, a click opens the full one."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1300, "height": 1000}, offline=True)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri())
            article = page.locator(f'article[data-case="{PLACED}"]')
            thumb = article.locator(".pfr-shot img")
            assert thumb.evaluate("i => i.complete && i.naturalWidth") == 512
            assert "Error: order failed: 500" in article.locator(".pfr-console").inner_text()
            assert "500" in article.locator(".pfr-requests").inner_text()
            assert "KeyError: 'qty'" in article.locator(".pfr-log").last.inner_text()
            article.screenshot(path=str(SHOTS / "browser-failure.png"))
            with context.expect_page() as opened:
                thumb.click()
            full_page = opened.value
            full_page.wait_for_load_state()
            assert full_page.url == full.as_uri()
            assert full_page.locator("img").evaluate("i => i.naturalWidth") == 1280
            assert errors == []
        finally:
            browser.close()


async def test_mcp_names_the_failure_files_and_get_artifact_returns_the_screenshot_as_an_image(
    broken: Path, tmp_path: Path
) -> None:
    async with _mcp(broken, tmp_path) as call:
        reply, envelope = await call("run_suite", {"suiteId": "shop", "wait": "120s"})
        assert envelope["data"]["status"] == "failed"
        assert [c.type for c in reply.content] == ["text"]  # the run's reply carries no image
        assert len(reply.content[0].text) < 70_000
        [case] = [c for s in envelope["data"]["suites"] for c in s["cases"] if c["status"] == "failed"]
        page = case["failure"]["browser"]
        assert (page["screenshot"], page["trace"]) == (
            f"cases/{PLACED}/screenshot.png",
            f"cases/{PLACED}/trace.zip",
        )
        image, read = await call(
            "get_artifact", {"runId": envelope["data"]["runId"], "name": page["screenshot"]}
        )
        assert read["data"]["contentType"] == "image/png" and read["data"]["encoding"] == "base64"
        assert [c.type for c in image.content] == ["text", "image"]
        block = image.content[1]
        assert block.mime_type == "image/png" and base64.b64decode(block.data)[:8] == b"\x89PNG\r\n\x1a\n"
        part, _ = await call(
            "get_artifact", {"runId": envelope["data"]["runId"], "name": page["screenshot"], "limit": 100}
        )
        assert [c.type for c in part.content] == ["text"]  # a part of a file is no image


async def test_a_browser_test_saved_over_mcp_runs_by_id_and_keeps_its_history(
    broken: Path, tmp_path: Path
) -> None:
    test = {
        "browser": {
            "goto": "/index.html",
            "service": "web",
            "actions": [{"fill": {"selector": "#qty", "value": 1}}, {"click": "#place"}],
            "expectTimeout": "2s",
        },
        "expect": {"text": "confirmed"},
    }
    async with _mcp(broken, tmp_path) as call:
        _, saved = await call(
            "save_test", {"id": "place-order", "name": "an order from the page", "test": test}
        )
        assert saved["data"]["test"]["browser"]["goto"] == "/index.html"
        _, first = await call("run_test", {"testId": "place-order", "wait": "120s"})
        _, second = await call("run_test", {"testId": "place-order", "wait": "120s"})
        for run in (first, second):
            assert run["data"]["status"] == "failed"
        [case] = [c for s in second["data"]["suites"] for c in s["cases"]]
        assert case["failure"]["browser"]["screenshot"].endswith("/screenshot.png")
        assert case["history"]["failingSinceRunId"] == first["data"]["runId"]
        assert case["history"]["recent"].endswith("FF")
        _, runs = await call("list_runs", {"testId": "place-order"})
        assert [r["runId"] for r in runs["data"]["runs"]][:2] == [
            second["data"]["runId"],
            first["data"]["runId"],
        ]
        _, latest = await call("get_latest_run", {"testId": "place-order"})
        assert latest["data"]["runId"] == second["data"]["runId"]
        _, listed = await call("list_tests", {})
        [row] = [t for t in listed["data"]["tests"] if t["id"] == "place-order"]
        assert (row["lastRunStatus"], row["lastRunId"]) == ("failed", second["data"]["runId"])


@contextlib.asynccontextmanager
async def _mcp(root: Path, tmp: Path) -> AsyncIterator[Any]:
    """A real `preflight-mcp --project ROOT` over stdio; `call(tool, args)` checks each reply's shape."""
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(root)], env=dict(os.environ), cwd=tmp
    )
    with anyio.fail_after(400), (tmp / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}

            async def call(name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
                reply = await client.call_tool(f"preflight_{name}", arguments)
                envelope = reply.structured_content
                assert envelope is not None and envelope["success"], (name, envelope)
                jsonschema.Draft202012Validator(tools[f"preflight_{name}"].output_schema or {}).validate(
                    envelope
                )
                assert json.loads(reply.content[0].text) == envelope
                return reply, envelope

            yield call
