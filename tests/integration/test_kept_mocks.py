"""Mocks outlive the command that started them when the environment is kept.

After `preflight setup`, `preflight run --keep` and an MCP server that exits with
`--keep-on-exit`, the mocks still answer a container's request by name and journal it; `status`
and `mock-requests` in new processes see them; `clean` stops them. Real Docker, real console
scripts, a real MCP client.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.cli import BIN, preflight_json
from tests.support.docker import force_clean, labelled

# Minutes of environments set up and cleaned, case by case: these run with the slow cases, two
# files at a time (each case owns its project, so they share nothing).
pytestmark = pytest.mark.slow

CONFIG = """\
project: {name: keptmocks}
services:
  web:
    build: {image: preflight-base/python}
    container:
      command: ["python3", "-m", "http.server", "8000"]
      ports: ["0:8000"]
      healthcheck: {path: /}
mocks:
  payments:
    port: 0
    routes:
      - method: POST
        path: /charges
        sequence: [{status: 201, body: {n: 1}}, {status: 201, body: {n: 2}}]
tests:
  suites:
    - {id: smoke, runner: shell, command: "true"}
"""

CALL = """
import json, urllib.request
request = urllib.request.Request("http://payments:{port}/charges", data=b'{{"amount": 7}}', method="POST",
                                 headers={{"Content-Type": "application/json"}})
print(urllib.request.urlopen(request, timeout=10).read().decode())
"""


@pytest.fixture
def project(tmp_path: Path) -> Any:
    root = tmp_path / "keptmocks"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    yield root
    force_clean(root)


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _state(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / ".preflight" / "state.json").read_text())
    return data


def _alive(pid: int) -> bool:
    try:
        return b"preflight_sdk.mocks.serve" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _check_served(root: Path) -> tuple[int, int]:
    """From new processes: `status` shows the mocks running, a container's request is answered and
    journaled, `mock-requests` shows it. Returns the mock's port and the pid serving it."""
    state = _state(root)
    (mock,) = state["mocks"]
    port, pid = mock["port"], mock["pid"]

    status = preflight_json(root, "status")
    assert status["success"], status
    assert [(m["name"], m["status"]) for m in status["data"]["mocks"]] == [("payments", "running")]

    container = state["containers"][0]["name"]
    done = subprocess.run(
        ["docker", "exec", container, "python3", "-c", CALL.format(port=port)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n"] in (1, 2)

    journal = preflight_json(root, "mock-requests")
    assert journal["success"], journal
    requests = journal["data"]["mocks"][0]["requests"]
    assert requests and requests[-1]["path"] == "/charges" and requests[-1]["body"] == {"amount": 7}
    return port, pid


def _check_kept_then_clean(root: Path) -> None:
    """The mocks outlived their starter (a detached host serves them); then `clean` stops them."""
    port, pid = _check_served(root)
    assert pid != os.getpid() and _alive(pid), "no detached mock host serves the kept environment"

    cleaned = preflight_json(root, "clean")
    assert cleaned["success"], cleaned
    assert not _listens(port), "the mock still listens after clean"
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the detached mock host outlived clean"
    assert labelled(root) == ([], [])


@pytest.mark.parametrize("command", [["setup"], ["run", "--keep"]], ids=["setup", "run-keep"])
def test_mocks_outlive_the_cli_command_that_kept_the_environment(project: Path, command: list[str]) -> None:
    started = preflight_json(project, *command, timeout=180)
    assert started["success"], started
    _check_kept_then_clean(project)


def test_a_second_run_starts_the_journal_and_the_sequence_afresh(project: Path) -> None:
    first = preflight_json(project, "run", "--keep", timeout=180)
    assert first["success"], first
    container, port = _state(project)["containers"][0]["name"], _state(project)["mocks"][0]["port"]
    call = ["docker", "exec", container, "python3", "-c", CALL.format(port=port)]
    assert json.loads(subprocess.run(call, capture_output=True, text=True, check=True).stdout)["n"] == 1
    second = preflight_json(project, "run", "--keep", "--filter", "smoke", timeout=180)
    assert second["success"], second
    # The run started the sequence and the journal over: only the request made after it is there.
    assert json.loads(subprocess.run(call, capture_output=True, text=True, check=True).stdout)["n"] == 1
    journal = preflight_json(project, "mock-requests")
    assert len(journal["data"]["mocks"][0]["requests"]) == 1
    _check_kept_then_clean(project)


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["preflight_setup", "preflight_run"])
async def test_mocks_outlive_an_mcp_server_that_exits_keeping_its_environment(
    project: Path, tmp_path: Path, tool: str
) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(project), "--keep-on-exit"],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(180), (tmp_path / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            reply = await client.call_tool(tool, {})  # `run` keeps its environment by default
            assert reply.structured_content is not None and reply.structured_content["success"]
    await anyio.to_thread.run_sync(_check_kept_then_clean, project)


def test_the_mocks_of_preflight_up_serve_other_processes_until_it_stops(project: Path) -> None:
    up = subprocess.Popen(
        [str(BIN / "preflight"), "up", "-C", str(project)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state_file = project / ".preflight" / "state.json"
            if state_file.exists() and _state(project)["state"] == "running" and _state(project)["mocks"]:
                break
            time.sleep(0.2)
        port, pid = _check_served(project)
        assert pid == up.pid  # `up` serves them itself while it waits
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=120)
    assert not _listens(port), "the mocks outlived `up`, which cleans when it stops"
    assert labelled(project) == ([], [])


SLOW_SUITE = CONFIG.replace('command: "true"', 'command: [sh, -c, "sleep 120"]')


def _sleeping(root: Path) -> bool:
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "cwd") == str(root):
                if b"sleep\x00120" in (entry / "cmdline").read_bytes():
                    return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize("keep", [True, False], ids=["keep", "no-keep"])
def test_ctrl_c_after_setup_leaves_the_environment_as_the_run_would_have(project: Path, keep: bool) -> None:
    (project / "e2e.yaml").write_text(SLOW_SUITE, encoding="utf-8")
    run = subprocess.Popen(
        [str(BIN / "preflight"), "run", *(["--keep"] if keep else []), "-C", str(project)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not _sleeping(project):
        assert time.monotonic() < deadline and run.poll() is None, "the suite never started"
        time.sleep(0.1)
    port = _state(project)["mocks"][0]["port"]
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=120) != 0
    assert not _sleeping(project), "the cancelled suite's process outlived the run"
    if keep:
        _check_kept_then_clean(project)  # containers up, mocks answering, until clean
    else:
        assert labelled(project) == ([], []) and not _listens(port)
