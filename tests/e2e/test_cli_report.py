"""The run's page at a terminal: `preflight test` prints where it is, `runs show ID --open` opens it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.cli import BIN

pytestmark = pytest.mark.e2e


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """No services (no Docker): a shell suite that fails."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "e2e.yaml").write_text(
        textwrap.dedent(
            f"""\
            project: {{name: pages}}
            tests:
              suites:
                - {{id: smoke, runner: shell, command: [{json.dumps(sys.executable)}, -c, "exit 2"]}}
            """
        ),
        encoding="utf-8",
    )
    return root


def _preflight(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_the_run_prints_its_page_and_runs_show_open_opens_it(project: Path, tmp_path: Path) -> None:
    done = _preflight(project, "test")
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stdout.rstrip().splitlines()[-1]
    assert last.startswith("view:   file://") and last.endswith("/report.html"), last
    page = Path(last.split("file://", 1)[1])
    assert page.is_file() and page.parent.parent.name == "runs"
    run_id = page.parent.name

    # A browser that writes down what it was asked to open ($BROWSER, as Python's webbrowser reads it).
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n", encoding="utf-8")
    browser.chmod(0o755)
    env = {"BROWSER": str(browser), "DISPLAY": ""}

    # A run whose page is missing (recorded before pages existed) gets it written, then opened.
    page.unlink()
    shown = _preflight(project, "runs", "show", run_id, "--open", env=env)
    assert shown.returncode == 1, shown.stderr[-2000:]  # the run's verdict, as `runs show` exits
    assert opened.read_text(encoding="utf-8") == page.as_uri()
    assert f"opened {page.as_uri()}" in shown.stderr
    assert page.is_file() and f'id="pfr-run-{run_id}"' in page.read_text(encoding="utf-8")


def test_open_with_json_still_prints_only_the_envelope(project: Path, tmp_path: Path) -> None:
    _preflight(project, "test")
    listing = json.loads(_preflight(project, "runs", "--json").stdout)
    run_id = listing["data"]["runs"][0]["runId"]
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n", encoding="utf-8")
    browser.chmod(0o755)
    shown = _preflight(project, "runs", "show", run_id, "--open", "--json", env={"BROWSER": str(browser)})
    envelope = json.loads(shown.stdout)
    assert envelope["success"] is True and envelope["data"]["runId"] == run_id
    assert opened.read_text(encoding="utf-8").endswith(f"/{run_id}/report.html")
