"""A service that does not start, on a real Docker daemon: what the error says and shows.

A crash's summary quotes the line that says why (a traceback's last line, never a blank one); a
failed health check's log tail folds the probe's own access lines and keeps the start-up lines;
a container removed while setup waits for it (another run's reset, a clean) is no verdict on the
service: CONTAINER_NOT_FOUND, retryable, never CONTAINER_EXITED or JOB_FAILED.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.docker import labelled

from preflight_sdk import PreflightError, Project

pytestmark = pytest.mark.anyio

CRASH = """
project: {name: crash}
services:
  api:
    build: {image: preflight-base/python}
    container:
      ports: ["0:8000"]
      command: ["sh", "-c", "echo 'orders: starting'; python3 -c 'import psycopg'; echo >&2; exit 2"]
      healthcheck: {path: /health}
"""

NOT_FOUND = """
project: {name: four-oh-four}
services:
  api:
    build: {image: preflight-base/python}
    container:
      ports: ["0:8000"]
      command:
        - sh
        - -c
        - "echo 'orders: reading settings'; echo 'orders: no route for /health'; exec python3 -m http.server 8000"
      healthcheck: {path: /health}
"""


async def test_a_crash_summary_quotes_the_exception_not_the_blank_last_line(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(config=CRASH)
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).setup(timeout="20s")
    error = caught.value
    assert error.code == "CONTAINER_EXITED"
    assert error.message.endswith(": ModuleNotFoundError: No module named 'psycopg'"), error.message
    assert "orders: starting" in error.details["logTail"]
    assert labelled(root) == ([], [])


async def test_a_failed_health_checks_tail_folds_the_probes_lines_and_keeps_the_start(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(config=NOT_FOUND)
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).setup(timeout="3s")
    error = caught.value
    assert error.code == "HEALTH_CHECK_TIMEOUT"
    tail: list[str] = error.details["logTail"]
    assert tail[:2] == ["orders: reading settings", "orders: no route for /health"], tail
    probes = [line for line in tail if '"GET /health HTTP/1.' in line and "404" in line]
    assert 1 <= len(probes) <= 2, tail
    assert any(line.startswith("… ") and "more lines like these" in line for line in tail), tail
    assert len(tail) <= 30
    assert labelled(root) == ([], [])


SLOW = """
project: {name: removed}
services:
  api:
    build: {image: preflight-base/busybox}
    container:
      ports: ["0:8080"]
      command: ["sh", "-c", "mkdir -p /w && exec httpd -f -p 8080 -h /w"]
      healthcheck: {path: /health}
  migrate:
    kind: job
    build: {image: preflight-base/busybox}
    container:
      command: ["sleep", "60"]
"""


def _remove_when_started(root: Path, service: str) -> None:
    """Remove the service's container (as another run's reset or a clean would) once it runs."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = subprocess.run(
            ["docker", "ps", "-q", "--filter", f"label=preflight.root={root}", "--filter", f"label=preflight.service={service}"],
            capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        if found:
            time.sleep(0.5)
            subprocess.run(["docker", "rm", "-f", *found], capture_output=True)
            return
        time.sleep(0.1)


@pytest.mark.parametrize(("service", "verdict"), [("api", "CONTAINER_EXITED"), ("migrate", "JOB_FAILED")])
async def test_a_container_removed_while_setup_waits_is_no_verdict_on_the_service(
    project_dir: Callable[..., Path], service: str, verdict: str
) -> None:
    root = project_dir(config=SLOW)
    remover = threading.Thread(target=_remove_when_started, args=(root, service), daemon=True)
    remover.start()
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).setup(timeout="30s")
    remover.join(5)
    error = caught.value
    assert error.code != verdict, error
    assert error.code == "CONTAINER_NOT_FOUND" and error.retryable, error
    assert f"`{service}` was removed while setup waited for it" in error.message
    assert labelled(root) == ([], [])


async def test_a_container_that_printed_nothing_is_not_sent_to_its_log_tail(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(
        config="""
        project: {name: silent}
        services:
          api:
            build: {image: preflight-base/busybox}
            container:
              ports: ["0:8000"]
              command: ["sh", "-c", "exit 3"]
              healthcheck: {path: /health}
        """
    )
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).setup(timeout="20s")
    error = caught.value
    assert error.code == "CONTAINER_EXITED" and error.details["logTail"] == []
    hint = error.hint_for("cli")
    assert "printed nothing" in hint and "logTail" not in hint, hint
