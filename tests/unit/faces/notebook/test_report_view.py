"""Inside a kernel a test run shows its page (report.html) inline, with the terminal text beside it."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from unit.faces.notebook import samples

from preflight_sdk.core.results.run import Artifact, RunResult
from preflight_sdk.faces.notebook import kernel
from preflight_sdk.faces.notebook.static import mimebundle, render_text, report_view
from preflight_sdk.runs.report_html import PreviousRun, render_report


def _with_page(tmp_path: Path) -> RunResult:
    run = samples.failed_run()
    page = tmp_path / "report.html"
    page.write_text(
        render_report(run, previous=PreviousRun(run_id="01PREVIOUS", statuses={})), encoding="utf-8"
    )
    listed = Artifact(name="report.html", path=str(page), sha256="ef" * 32, size=page.stat().st_size)
    return msgspec.structs.replace(run, artifacts=[*run.artifacts, listed])


def test_in_a_kernel_a_run_shows_its_own_page_with_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernel, "in_kernel", lambda: True)
    run = _with_page(tmp_path)
    bundle = mimebundle(run)
    assert bundle["text/plain"] == render_text(run)
    html = bundle["text/html"]
    assert html.startswith("<style>") and f'id="pfr-run-{run.run_id}"' in html
    assert "Since run <code>01PREVIOUS</code>" in html  # the file's page, with its comparison
    assert ".pfr .pfr-nav{position:static}" in html and "<body>" not in html
    assert samples.EVIL not in html


def test_a_page_too_large_is_shown_compact_from_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernel, "in_kernel", lambda: True)
    monkeypatch.setattr(report_view, "INLINE_LIMIT", 100)
    html = mimebundle(_with_page(tmp_path))["text/html"]
    assert 'class="pfr-failure"' in html and "Since run" not in html


def test_outside_a_kernel_and_for_other_runs_the_static_tables_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _with_page(tmp_path)
    assert 'class="pfr"' not in mimebundle(run)["text/html"]  # not in a kernel
    monkeypatch.setattr(kernel, "in_kernel", lambda: True)
    building = msgspec.structs.replace(run, kind="build")
    assert 'class="pfr"' not in mimebundle(building)["text/html"]
    going = msgspec.structs.replace(run, status="running")
    assert 'class="pfr"' not in mimebundle(going)["text/html"]
