"""Nothing a run started outlives `clean`, even when its owner was killed with SIGKILL.

5 tries each: SIGKILL of `preflight setup` while it waits for a service, of `preflight run` and
`preflight watch` while a shell suite sleeps and a pytest suite sleeps (watch also has a warm
pytest server by then), and of `preflight-mcp` during a `preflight_run`. Then `preflight clean`
from a new process: no process of the project is left (found in /proc by working directory or
command line), and no container. Real console scripts, real Docker for the setup case.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.cli import BIN
from tests.support.docker import force_clean, labelled

TRIES = 5

SUITES = """\
project: {name: killed}
tests:
  parallel: true
  suites:
    - {id: quick, runner: pytest, file: tests/test_quick.py, parallel: true}
    - {id: sleeper, runner: shell, command: [sh, -c, "sleep 300 & sleep 301"], parallel: true}
    - {id: slow, runner: pytest, file: tests/test_slow.py, parallel: true}
"""

SERVICE = """\
project: {name: killedsetup}
services:
  web:
    build: {image: preflight-base/busybox}
    container:
      command: ["sh", "-c", "sleep 300"]
      ports: ["0:8000"]
      healthcheck: {path: /, timeout: 120s}
"""


def _write(root: Path, config: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(config, encoding="utf-8")
    (root / "tests" / "test_quick.py").write_text("def test_quick():\n    assert True\n", encoding="utf-8")
    (root / "tests" / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(302)\n", encoding="utf-8"
    )
    return root


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A fresh project folder; whatever of it a failed test left running is killed afterwards."""
    root = tmp_path / "project"
    yield root
    for line in _processes(root):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)
    force_clean(root)


def _processes(root: Path) -> list[str]:
    """The processes working in the project or naming it on their command line (not this test)."""
    found = []
    mark = str(root)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd.startswith(mark) or mark in cmdline):
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


def _wait_for(what: Callable[[], bool], seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting: {why}")
        time.sleep(0.1)


def _suites_running(root: Path, *, warm: bool = False) -> Callable[[], bool]:
    def check() -> bool:
        seen = " | ".join(_processes(root))
        ready = "sleep 301" in seen and "test_slow.py" in seen
        return ready and (not warm or "preflight-pytest-" in seen or "warm_pytest_server" in seen)

    return check


def _clean_leaves_nothing(root: Path) -> None:
    done = subprocess.run(
        [str(BIN / "preflight"), "clean", "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(done.stdout)["success"], done.stdout + done.stderr
    # The killed processes' children are reparented and ended by clean; give the kernel a moment.
    deadline = time.monotonic() + 5
    while _processes(root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes(root) == [], "left running after clean"
    assert labelled(root) == ([], [])


# The test session turns warm pytest servers off; these owners keep them, as a user's do.
WARM = {**os.environ, "PREFLIGHT_WARM_PYTEST": "1"}


def _spawn(root: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(BIN / "preflight"), *args, "-C", str(root)],
        cwd=root,
        env=WARM,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.parametrize("attempt", range(TRIES))
def test_sigkill_during_setup(project: Path, attempt: int) -> None:
    root = _write(project, SERVICE)
    owner = _spawn(root, "setup")
    _wait_for(lambda: bool(labelled(root)[0]), 60, "the service's container")
    _kill(owner)
    _clean_leaves_nothing(root)


@pytest.mark.parametrize("attempt", range(TRIES))
def test_sigkill_during_run(project: Path, attempt: int) -> None:
    root = _write(project, SUITES)
    owner = _spawn(root, "run", "--keep")
    _wait_for(_suites_running(root), 60, "the shell and pytest suites")
    _kill(owner)
    assert _processes(root), "the suites' processes went with their owner: nothing to test"
    _clean_leaves_nothing(root)


@pytest.mark.parametrize("attempt", range(TRIES))
def test_sigkill_during_watch_with_a_warm_pytest_server(project: Path, attempt: int) -> None:
    root = _write(project, SUITES)
    owner = _spawn(root, "watch", "--keep")
    _wait_for(_suites_running(root, warm=True), 60, "the suites and the warm pytest server")
    _kill(owner)
    _clean_leaves_nothing(root)


@pytest.mark.parametrize("attempt", range(TRIES))
def test_sigkill_of_the_mcp_server_during_a_run(project: Path, attempt: int) -> None:
    root = _write(project, SUITES)
    server = subprocess.Popen(
        [str(BIN / "preflight-mcp"), "--project", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=root,
        env=WARM,
    )
    assert server.stdin is not None and server.stdout is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "preflight_run", "arguments": {"wait": "0s"}},
        },
    ]
    for message in messages:
        server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    try:
        _wait_for(_suites_running(root, warm=False), 60, "the suites of the MCP run")
    finally:
        _kill(server)
        server.stdin.close()
        server.stdout.close()
    _clean_leaves_nothing(root)


def test_cancel_run_of_a_run_whose_owner_was_killed_stops_what_it_left(project: Path) -> None:
    root = _write(project, SUITES)
    owner = _spawn(root, "run", "--keep")
    _wait_for(_suites_running(root), 60, "the shell and pytest suites")
    _kill(owner)
    listed = subprocess.run(
        [str(BIN / "preflight"), "runs", "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (run,) = json.loads(listed.stdout)["data"]["runs"]
    assert run["status"] == "interrupted"
    cancelled = subprocess.run(
        [str(BIN / "preflight"), "runs", "cancel", run["runId"], "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(cancelled.stdout)["success"], cancelled.stdout + cancelled.stderr
    deadline = time.monotonic() + 5
    while _processes(root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes(root) == [], "the interrupted run's suites outlived cancel_run"
