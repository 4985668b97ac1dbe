"""A browser failure in report.html and in the notebook: the screenshot inline, the files, escaped text."""

from __future__ import annotations

import base64
from pathlib import Path

from preflight_sdk.core.results.browser import BrowserEvidence, ConsoleMessage, FailedRequest
from preflight_sdk.core.results.run import Artifact, CaseResult, Failure, RunResult, SuiteResult, Totals
from preflight_sdk.faces.notebook.static.report_view import report_html
from preflight_sdk.faces.notebook.static.run_view import failure_html, run_text
from preflight_sdk.runs.report_html import embed_full_screenshots, render_report

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 60  # only its bytes matter here: they are put in the page
CASE = "shop.an-order-is-placed"


def _run(tmp_path: Path, *, thumbnail: bool = True) -> RunResult:
    folder = tmp_path / "runs" / "R1"
    (folder / "cases" / CASE).mkdir(parents=True)
    files = {f"cases/{CASE}/screenshot.png": PNG, f"cases/{CASE}/trace.zip": b"PK\x03\x04"}
    if thumbnail:
        files[f"cases/{CASE}/screenshot-small.jpg"] = JPEG
    artifacts = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        artifacts.append(Artifact(name=name, path=str(folder / name), sha256="0" * 64, size=len(data)))
    (folder / "report.html").write_text("")
    evidence = BrowserEvidence(
        url="http://127.0.0.1:8000/index.html",
        title="Web <shop>",
        step='expect text "confirmed"',
        selector="#confirmation",
        dom='<form id="order"><script>alert(1)</script></form>',
        screenshot=f"cases/{CASE}/screenshot.png",
        thumbnail=f"cases/{CASE}/screenshot-small.jpg" if thumbnail else None,
        trace=f"cases/{CASE}/trace.zip",
        console=[ConsoleMessage(type="pageerror", text="Error: <b>order failed</b>: 500")],
        failed_requests=[FailedRequest(method="POST", url="http://127.0.0.1:8000/api/orders", status=500)],
    )
    failure = Failure(error="text: the page does not show 'confirmed'", summary="it failed", browser=evidence)
    case = CaseResult(
        id=CASE,
        name="an order is placed",
        suite="shop",
        status="failed",
        duration=5,
        timestamp=1,
        failure=failure,
    )
    suite = SuiteResult(
        id="shop",
        name="shop",
        runner="yaml",
        status="failed",
        duration=5,
        passed=0,
        failed=1,
        skipped=0,
        cases=[case],
    )
    return RunResult(
        run_id="R1", status="failed", summary="failed", totals=Totals(passed=0, failed=1, skipped=0, total=1),
        duration=5, suites=[suite], started_at="2026-12-01T10:00:00.000Z", finished_at="2026-12-01T10:00:01.000Z",
        artifacts=[*artifacts, Artifact(name="report.html", path=str(folder / "report.html"), sha256="0" * 64, size=0)],
    )  # fmt: skip


def test_the_page_shows_the_thumbnail_inline_linking_to_the_full_screenshot(tmp_path: Path) -> None:
    page = render_report(_run(tmp_path))
    thumb = "data:image/jpeg;base64," + base64.b64encode(JPEG).decode()
    assert f'<a class="pfr-shot" href="cases/{CASE}/screenshot.png" target="_blank"' in page
    assert f'<img src="{thumb}"' in page
    assert f'<a href="cases/{CASE}/trace.zip" download>trace.zip</a>' in page
    assert "failed at:</b> <code>expect text &quot;confirmed&quot;</code>" in page
    assert "[pageerror] Error: &lt;b&gt;order failed&lt;/b&gt;: 500" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "“Web &lt;shop&gt;”" in page


def test_without_a_thumbnail_a_small_screenshot_is_shown_itself(tmp_path: Path) -> None:
    page = render_report(_run(tmp_path, thumbnail=False))
    assert '<img src="data:image/png;base64,' + base64.b64encode(PNG).decode() + '"' in page


def test_in_a_notebook_the_link_becomes_a_toggle_with_the_full_image(tmp_path: Path) -> None:
    result = _run(tmp_path)
    full = "data:image/png;base64," + base64.b64encode(PNG).decode()
    embedded = embed_full_screenshots(render_report(result), result)
    assert f'<img class="pfr-shot-full" src="{full}"' in embedded
    assert '<details class="pfr-shot"><summary><img src="data:image/jpeg' in embedded
    assert 'class="pfr-shot" href=' not in embedded
    # report.html as the notebook shows it (the file is empty here: the fragment is rendered)
    inline = report_html(result)
    assert inline is not None and f'src="{full}"' in inline
    assert f'src="{full}"' in failure_html(result, result.suites[0].cases[0])


def test_the_terminal_summary_names_the_screenshot_and_the_trace(tmp_path: Path) -> None:
    result = _run(tmp_path)
    text = run_text(result)
    assert f"  screenshot: {tmp_path}/runs/R1/cases/{CASE}/screenshot.png" in text
    assert f"  trace: {tmp_path}/runs/R1/cases/{CASE}/trace.zip" in text
