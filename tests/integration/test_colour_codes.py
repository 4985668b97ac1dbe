"""Colour codes a container writes never reach a reader: the run's report.json, `logs`, the pytest plugin.

A busybox service prints a red line every 100 ms (as many loggers do at a terminal); a failing
shell suite and a failing pytest test each read the lines of their moment. They carry the text,
without the terminal's escape codes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from preflight_sdk import Project

pytestmark = pytest.mark.anyio

CONFIG = """
project: {name: colours}
services:
  painter:
    build: {image: preflight-base/busybox}
    container:
      ports: ["0:8080"]
      command:
        - sh
        - -c
        - >-
          mkdir -p /w && echo ok > /w/health && httpd -p 8080 -h /w &&
          while true; do printf '\\033[31mERROR\\033[0m red tick\\n'; sleep 0.1; done
      healthcheck: {path: /health}
tests:
  suites:
    - {id: fails, runner: shell, command: [sh, -c, "sleep 0.5; exit 1"]}
"""
TEST = "def test_fails(preflight_env):\n    import time\n    time.sleep(0.5)\n    assert False\n"


async def test_the_reports_log_lines_and_logs_carry_no_colour_codes(project_dir: Callable[..., Path]) -> None:
    root = project_dir(config=CONFIG)
    async with Project.open(root) as project:
        result = await project.run(keep=True)
        logs = await project.logs("painter", lines=5)
    assert result.status == "failed"
    assert logs.lines and all("\x1b" not in line.text for line in logs.lines)
    assert any(line.text == "ERROR red tick" for line in logs.lines), logs.lines
    report = next(a.path for a in result.artifacts if a.name == "report.json")
    text = Path(report).read_text(encoding="utf-8")
    assert "red tick" in text, "the failure carries the service's lines of its moment"
    assert "\\u001b" not in text and "\x1b" not in text


def test_the_pytest_plugins_log_section_carries_no_colour_codes(project_dir: Callable[..., Path]) -> None:
    root = project_dir(config=CONFIG, files={"tests/test_colour.py": TEST})
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--preflight=.", "tests"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    section = done.stdout.split("preflight: container logs (call)", 1)[1]
    assert "red tick" in section and "\x1b" not in section, section[:2000]
    json.dumps(section)  # plain text
