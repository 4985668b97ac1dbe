"""The pytest plugin's shared session: who waits for whom, and how a setup error reads."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from preflight_sdk.core.errors import EnvironmentError_
from preflight_sdk.faces.pytest.session import SharedSession, render_error


class FakeProject:
    def __init__(self) -> None:
        self.cleaned = False
        self.closed = False

    def clean(self) -> None:
        self.cleaned = True

    def close(self) -> None:
        self.closed = True


def owner_of(root: Path, workers: list[int], *, keep: bool = False) -> tuple[SharedSession, FakeProject]:
    (root / ".preflight").mkdir()
    state = {"run": "r1", "owner": 1, "workers": workers}
    (root / ".preflight" / "pytest-session.json").write_text(json.dumps(state))
    session = SharedSession(root, "r1", keep=keep)
    project = FakeProject()
    session.owner, session.project = True, project  # type: ignore[assignment]
    return session, project


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def test_the_owner_does_not_wait_for_a_worker_that_died(tmp_path: Path) -> None:
    import os

    session, project = owner_of(tmp_path, [os.getpid(), dead_pid()])
    started = time.monotonic()
    session.leave()
    assert time.monotonic() - started < 2
    assert (project.cleaned, project.closed) == (True, True)
    state = json.loads((tmp_path / ".preflight" / "pytest-session.json").read_text())
    assert (state["workers"], state["closed"]) == ([], True)


def test_the_owner_waits_for_a_live_worker_then_cleans_unless_kept(tmp_path: Path) -> None:
    import os

    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        session, project = owner_of(tmp_path, [os.getpid(), worker.pid], keep=True)
        leaving = threading.Thread(target=session.leave)
        leaving.start()
        leaving.join(0.5)
        assert leaving.is_alive() and not project.closed  # the other worker still uses it
    finally:
        worker.kill()
        worker.wait()
    leaving.join(5)
    assert not leaving.is_alive()
    assert (project.cleaned, project.closed) == (False, True)  # kept, and this process let go


def test_a_setup_error_reads_with_code_hint_service_and_log_tail() -> None:
    error = EnvironmentError_(
        "service `web` exited with status 3 while waiting for it to be ready",
        code="CONTAINER_EXITED",
        hint="read details.logTail",
        details={"service": "web", "logTail": [f"line {i}" for i in range(50)]},
    )
    report, headline = render_error(error)
    assert (
        headline == "[CONTAINER_EXITED] service `web` exited with status 3 while waiting for it to be ready"
    )
    lines = report.splitlines()
    assert lines[:4] == [
        f"preflight setup failed: {headline}",
        "hint: read logTail (shown with this error)",
        "service: web",
        "log tail:",
    ]
    assert lines[4:] == [f"  line {i}" for i in range(20, 50)]  # the last 30 lines
