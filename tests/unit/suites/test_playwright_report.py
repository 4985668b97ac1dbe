"""Playwright Test's JSON report, as Playwright wrote it, read into one entry per test."""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.suites.browser.playwright_config import WrapperFiles, find_cli, find_config, write_wrapper
from preflight_sdk.suites.browser.playwright_report import read_report

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "playwright"


def test_nested_describes_retries_skips_and_output_are_read() -> None:
    report = read_report(FIXTURES / "cart-report.json")
    assert report is not None and report.errors == []
    rows = {" › ".join(t.titles): (t.status, len(t.results), t.skip_reason) for t in report.tests}
    assert rows == {
        "cart.spec.ts › the cart › when empty › shows nothing": ("expected", 1, None),
        "cart.spec.ts › the cart › passes on its second try": ("flaky", 2, None),
        "cart.spec.ts › the cart › is not written yet": ("skipped", 1, "skipped"),
        "cart.spec.ts › the cart › always fails": ("unexpected", 2, None),
    }
    failing = next(t for t in report.tests if t.titles[-1] == "always fails")
    last = failing.results[-1]
    assert last.retry == 1 and last.status == "failed"
    assert last.messages()[0].startswith("Error: expect(received).toEqual(expected) // deep equality")
    assert "\x1b[" not in last.messages()[0]
    assert last.location() == "/project/tests/cart.spec.ts:15"
    assert last.output() == "about to fail\n"


def test_a_failed_test_names_its_screenshot_error_context_and_trace() -> None:
    report = read_report(FIXTURES / "shop-report.json")
    assert report is not None
    failed = [t for t in report.tests if t.status == "unexpected"]
    assert [t.titles[-1] for t in failed] == [
        "an order is confirmed",
        "the API lists the orders",
        "the shop offers a gift card",
    ]
    gift = failed[-1].results[-1]
    assert [(a.name, a.content_type) for a in gift.attachments] == [
        ("screenshot", "image/png"),
        ("error-context", "text/markdown"),
        ("trace", "application/zip"),
    ]
    assert (
        gift.attachments[0].path
        == "/scratch/results/shop-the-shop-offers-a-gift-card-chromium/test-failed-1.png"
    )
    assert report.root_dir == "/project/tests" and failed[-1].project == "chromium"


def test_what_is_not_a_report_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "other.json").write_text('{"suites": "no"}')
    for name in ("empty.json", "other.json", "missing.json"):
        assert read_report(tmp_path / name) is None


def test_the_config_the_cli_and_the_wrapper_beside_the_config(tmp_path: Path) -> None:
    project = tmp_path / "web"
    (project / "node_modules" / ".bin").mkdir(parents=True)
    assert find_config(project) is None and find_cli(project) is None
    (project / "playwright.config.mjs").write_text("export default {}")
    (project / "playwright.config.ts").write_text("export default {}")
    assert find_config(project) == project / "playwright.config.ts"  # ts first, as Playwright looks
    assert find_config(project / "playwright.config.mjs") == project / "playwright.config.mjs"
    assert find_config(project / "e2e.yaml") is None
    cli = project / "node_modules" / ".bin" / "playwright"
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    assert find_cli(project / "tests" / "deep") == cli
    files = WrapperFiles(project / "playwright.config.ts", tmp_path / "scratch", "01RUN")
    write_wrapper(project / "playwright.config.ts", files)
    assert files.wrapper == project / ".preflight-01RUN.playwright.config.ts"
    text = files.wrapper.read_text()
    assert "import base from './playwright.config';" in text and "process.env.PREFLIGHT_PLAYWRIGHT" in text
    files.skipped.parent.mkdir()
    files.skipped.write_text('["firefox", "webkit"]')
    assert files.left_out() == ["firefox", "webkit"]
