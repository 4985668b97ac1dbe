"""`preflight watch` as a real process on a real file system: what a run changes itself starts no run.

The project's suite touches a source file and writes and deletes a file beside it, as a suite or
a fixture may. Before, each run's own changes started the next (dozens of runs a minute); now the
watch runs once, says that the files changed while the run went on, and runs again only for an
edit made after it, naming the file that started it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support.cli import BIN

pytestmark = pytest.mark.e2e

CONFIG = """\
project: {name: watch-own}
tests:
  suites:
    - {id: touches, runner: shell, command: [sh, -c, "touch app/app.py && echo x > app/scratch.txt && rm app/scratch.txt"]}
"""
QUIET = 8.0  # seconds without a run after the first: the run's own changes came and went by then


def _lines(child: subprocess.Popen[str]) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()
    assert child.stderr is not None and child.stdout is not None
    for stream in (child.stdout, child.stderr):
        threading.Thread(target=lambda s=stream: [lines.put(line) for line in s], daemon=True).start()
    return lines


def _until(lines: queue.Queue[str], seen: list[str], what: str, timeout: float) -> bool:
    """Read lines into `seen` until one contains `what` (True) or `timeout` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        if what in line:
            return True
    return False


def test_a_runs_own_changes_start_no_run_and_an_edit_after_it_names_its_file(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / "app" / "app.py").write_text("VERSION = 1\n")
    (root / "e2e.yaml").write_text(CONFIG)
    env = {**os.environ, "NO_COLOR": "1"}
    with subprocess.Popen(
        [str(BIN / "preflight"), "watch", "-C", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as child:
        try:
            lines = _lines(child)
            seen: list[str] = []
            assert _until(lines, seen, "PASSED", 60), "".join(seen)
            quiet: list[str] = []
            ran_again = _until(lines, quiet, "PASSED", QUIET)
            assert not ran_again, "the run's own changes started another run:\n" + "".join(quiet)
            told = "".join(quiet)
            assert "app/app.py" in told and "changed while the run went on" in told, told

            (root / "app" / "app.py").write_text("VERSION = 2\n")
            after: list[str] = []
            assert _until(lines, after, "PASSED", 60), "".join(after)
            started = [line for line in after if "running again" in line]
            assert started and "app/app.py changed" in started[0], "".join(after)
            assert "scratch.txt" not in started[0]
        finally:
            child.send_signal(signal.SIGINT)
            child.wait(60)
