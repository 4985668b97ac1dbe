"""A run's report.html in a real headless Chromium: the shop, and the broken shop run twice.

The runs are real (`preflight run` with Docker); each page is opened from `file://` in a browser
context that is offline and whose every request that is not the page itself is recorded and
refused. The checks: the timeline with the services and the suites, the failing case with its
assertion, its log line and its mock call are visible; no console error; no request left the
page. Screenshots go to test-artifacts/report/ (kept by CI), and a look at them is part of the job.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import CHROMIUM_ARGS, REPO, ensure_chromium
from support.cli import BIN
from support.docker import force_clean

pytestmark = [pytest.mark.docker, pytest.mark.browser]

SHOTS = REPO / "test-artifacts" / "report"
EXAMPLES = REPO / "docs" / "examples"


def _run(root: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(BIN / "preflight"), "run", "-C", str(root), "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.stdout, done.stderr[-3000:]
    envelope: dict[str, Any] = json.loads(done.stdout)
    assert envelope["success"], envelope
    return envelope["data"]


def _page_of(data: dict[str, Any]) -> Path:
    [page] = [a for a in data["artifacts"] if a["name"] == "report.html"]
    assert page["contentType"] == "text/html" and len(page["sha256"]) == 64
    path = Path(page["path"])
    assert path.stat().st_size == page["size"]
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    """One run of the shop, two of the broken shop (the second has a previous run to compare with)."""
    ensure_chromium()
    base = tmp_path_factory.mktemp("report")
    for name in ("shop", "shop-broken"):
        shutil.copytree(EXAMPLES / name, base / name, ignore=shutil.ignore_patterns(".preflight"))
    try:
        yield {
            "shop": _run(base / "shop"),
            "broken-first": _run(base / "shop-broken"),
            "broken": _run(base / "shop-broken"),
        }
    finally:
        for name in ("shop", "shop-broken"):
            force_clean(base / name)


class Opened:
    """A page opened offline, with what it logged and what it tried to fetch."""

    def __init__(self, page: Any, errors: list[str], requests: list[str]) -> None:
        self.page = page
        self.errors = errors
        self.requests = requests


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(ensure_chromium()), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _open(browser: Any, path: Path) -> Opened:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_offline(True)
    requests: list[str] = []

    def refuse(route: Any) -> None:
        if route.request.url != path.as_uri():
            requests.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", refuse)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return Opened(page, errors, requests)


def _shot(opened: Opened, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    target = SHOTS / f"{name}.png"
    opened.page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 20_000
    return target


def test_the_failing_run_shows_its_failures_with_evidence_on_a_timeline(
    runs: dict[str, dict[str, Any]], browser: Any
) -> None:
    data = runs["broken"]
    opened = _open(browser, _page_of(data))
    page = opened.page
    head = page.locator(".pfr-head")
    assert head.is_visible() and "FAILED" in head.inner_text() and "2 of 3 cases failed" in head.inner_text()
    # The changes since the first run of the same suites: nothing new, both still failing.
    assert "0 newly failing · 0 fixed · 2 still failing" in head.inner_text()

    price = page.locator(".pfr-failure", has_text="an order without a price is rejected with 400")
    assert price.is_visible()
    assertion = price.locator(".pfr-assertions tr.pfr-assert-failed", has_text="status")
    assert assertion.is_visible() and "400" in assertion.inner_text() and "500" in assertion.inner_text()
    log = price.locator(".pfr-log .pfr-err", has_text="KeyError: 'price'")
    assert log.is_visible()
    assert "Authorization: [redacted]" in price.locator(".pfr-request").inner_text()

    refund = page.locator(".pfr-failure", has_text="a refund is confirmed by the provider")
    call = refund.locator(".pfr-mockcalls tr.pfr-mockcall", has_text="/refunds")
    assert call.is_visible() and "404" in call.inner_text() and "no route matched" in call.inner_text()
    assert "failing since" in refund.locator(".pfr-history").inner_text()

    timeline = page.locator(".pfr-tl")
    assert timeline.is_visible()
    titles = timeline.locator(".pfr-lane-title").all_inner_texts()
    assert {"inventory", "seed", "orders", "mock requests", "suite orders"} <= set(titles), titles
    assert timeline.locator(".pfr-k-health").count() >= 2 and timeline.locator(".pfr-k-create").count() >= 3
    assert timeline.locator(".pfr-k-failed").count() == 2 and timeline.locator(".pfr-k-passed").count() == 1
    assert timeline.locator(".pfr-mark").count() >= 2  # POST /charges, POST /refunds
    now = timeline.locator(".pfr-now")
    assert now.is_visible() and "first failure" in now.inner_text()
    for bar in timeline.locator(".pfr-k-failed").all():
        box = bar.bounding_box()
        assert box is not None and box["width"] >= 1 and box["height"] > 5
    _shot(opened, "failing")

    # Interaction: failed only, search, the axis zoomed to the tests, keys to the next failure.
    rows = page.locator(".pfr-cases tbody tr")
    page.keyboard.press("f")
    assert [r.is_visible() for r in rows.all()].count(True) == 2
    page.keyboard.press("a")
    page.locator(".pfr-search").fill("still exists")
    assert [r.inner_text().split("\t")[1] for r in rows.all() if r.is_visible()] == ["the order still exists"]
    page.locator(".pfr-search").fill("")
    # Zoomed to the tests, the suite's bar (seconds long, never at a bar's minimum width) widens.
    suite = timeline.locator(".pfr-k-suite").first
    before = suite.bounding_box()
    page.locator(".pfr-tl-tools button[data-zoom=tests]").click()
    after = suite.bounding_box()
    assert before is not None and after is not None and after["width"] > before["width"] * 2
    page.keyboard.press("j")
    assert page.locator(".pfr-failure.pfr-current").count() == 1
    _shot(opened, "failing-tests-zoomed")

    assert opened.errors == [] and opened.requests == []


def test_the_passing_shop_reads_as_passed_with_every_suite_on_the_timeline(
    runs: dict[str, dict[str, Any]], browser: Any
) -> None:
    data = runs["shop"]
    opened = _open(browser, _page_of(data))
    page = opened.page
    assert "PASSED" in page.locator(".pfr-verdict").inner_text()
    assert page.locator(".pfr-failure").count() == 0
    lanes = page.locator(".pfr-tl .pfr-lane-title").all_inner_texts()
    for suite in data["suites"]:
        assert f"suite {suite['id']}" in lanes
    assert page.locator(".pfr-cases tbody tr").count() == data["totals"]["total"]
    assert page.locator(".pfr-tl .pfr-mark").count() >= 1  # the payments mock was called
    _shot(opened, "passing")
    assert opened.errors == [] and opened.requests == []


def test_the_page_says_everything_without_javascript(runs: dict[str, dict[str, Any]], browser: Any) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    context.set_offline(True)
    page = context.new_page()
    page.goto(_page_of(runs["broken"]).as_uri())
    text = page.locator("body").inner_text()
    for fact in ("2 of 3 cases failed", "KeyError: 'price'", "POST /refunds", "expected", "first failure"):
        assert fact in text, fact
    assert page.locator(".pfr-filters").is_hidden()  # controls that need the script stay hidden
    assert page.locator(".pfr-tl .pfr-k-failed").count() == 2
