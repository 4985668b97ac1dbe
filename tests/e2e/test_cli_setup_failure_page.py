"""A run whose setup fails, at a terminal and on its page: the cause, the log tail, the steps so far.

One project (a Python service on the real Docker daemon) passes a first run, then its start-up
command is changed to crash on an import, or to serve no health path. Each failed run prints
where its page is, and the page shows the failing service's log tail, its start on the timeline
(with the steps done before it), and does not count the cases that never ran as a change.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import BIN
from support.docker import force_clean

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

CONFIG = """\
project: {{name: setup-page}}
services:
  api:
    build: {{image: preflight-base/python}}
    container:
      ports: ["0:8000"]
      command: ["sh", "-c", {command}]
      healthcheck: {{path: /health, startPeriod: 1s, interval: 1s, retries: 2}}
tests:
  suites:
    - {{id: smoke, name: Smoke, runner: shell, command: [sh, -c, "exit 0"]}}
"""
SERVES = '"mkdir -p /w && echo ok > /w/health && exec python3 -m http.server 8000 -d /w"'
CRASHES = "\"echo 'orders: starting'; python3 -c 'import psycopg'; echo >&2; exit 2\""
NO_HEALTH = "\"echo 'orders: no /health here'; exec python3 -m http.server 8000\""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    root.mkdir()
    yield root
    force_clean(root)


def _run(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    (root / "e2e.yaml").write_text(textwrap.dedent(CONFIG.format(command=command)), encoding="utf-8")
    return subprocess.run(
        [str(BIN / "preflight"), "run", "-C", str(root)],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ),
    )


def _page(done: subprocess.CompletedProcess[str]) -> tuple[str, dict[str, str]]:
    """The `view:` line's page, as text per section (markup dropped)."""
    found = re.search(r"^view:\s+file://(\S+/report\.html)$", done.stderr + done.stdout, re.M)
    assert found, done.stderr[-3000:]
    markup = Path(found.group(1)).read_text(encoding="utf-8")
    sections = dict(re.findall(r'<section id="pfr-([a-z]+)">(.*?)</section>', markup, re.S))
    return markup, {
        name: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))) for name, body in sections.items()
    }


def test_a_crash_at_start_prints_the_page_which_shows_the_log_tail_and_the_steps(project: Path) -> None:
    first = _run(project, SERVES)
    assert first.returncode == 0, first.stderr[-3000:]
    done = _run(project, CRASHES)
    assert done.returncode == 3, done.stderr[-3000:]
    assert "No module named 'psycopg'" in done.stderr
    markup, text = _page(done)
    assert "ModuleNotFoundError: No module named 'psycopg'" in text["environment"], text["environment"]
    assert "orders: starting" in text["environment"]
    assert "no environment was brought up" not in text["environment"]
    timeline = re.search(r'<section id="pfr-timeline">(.*?)</section>', markup, re.S)
    assert timeline is not None
    assert 'title="api"' in timeline.group(1), "the failing service has its row"
    assert "pfr-k-failed" in timeline.group(1), "its start is drawn as failed"
    assert "nothing to place on a timeline" not in text["timeline"]
    assert "0 newly failing" not in text["changes"], text["changes"]
    assert "did not run" in text["changes"], text["changes"]


def test_a_failed_health_check_prints_the_page_with_the_log_tail(project: Path) -> None:
    done = _run(project, NO_HEALTH)
    assert done.returncode == 3, done.stderr[-3000:]
    _, text = _page(done)
    assert "orders: no /health here" in text["environment"], text["environment"]
    assert "HEALTH_CHECK_TIMEOUT" in text["environment"]
    assert "nothing to place on a timeline" not in text["timeline"], text["timeline"]
