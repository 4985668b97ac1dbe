"""`clean` signals only the detached mock host that serves its own environment.

Project B's mocks are kept by a real detached host (`python -m preflight_sdk.mocks.serve`);
project A's `.preflight/state.json` is made to name that host's pid (a stale file, a copied
checkout, or a hostile one). `preflight clean` on A must leave B's host serving.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from support.cli import BIN

from preflight_sdk.config.model import MockConfig
from preflight_sdk.mocks.detached import DetachedSpec, is_detached_host, spawn_detached, stop_detached


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        return (
            httpx.get(f"http://127.0.0.1:{port}/_mock/health", timeout=2.0, trust_env=False).status_code
            == 200
        )
    except httpx.HTTPError:
        return False


# The host outlives its `Popen` on purpose (it is found again by pid).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_clean_leaves_another_projects_detached_host_alone_even_when_its_state_names_that_pid(
    tmp_path: Path,
) -> None:
    other = tmp_path / "b"
    (other / ".preflight").mkdir(parents=True)
    other_state = other / ".preflight" / "state.json"
    other_state.write_text(json.dumps({"sessionId": "bbbbbb"}))
    port = _free_port()
    spec = DetachedSpec(
        mocks={"payments": MockConfig(port=port)},
        bind_hosts=["127.0.0.1"],
        state_file=str(other_state),
        session_id="bbbbbb",
    )
    pid = spawn_detached(spec, other / ".preflight" / "mocks")
    try:
        mine = tmp_path / "a"
        mine.mkdir()
        (mine / "e2e.yaml").write_text(
            "project: {name: a}\nmocks:\n  payments: {port: 0}\n", encoding="utf-8"
        )
        subprocess.run(
            [str(BIN / "preflight"), "init", "-C", str(mine), "--json"], capture_output=True, timeout=60
        )
        state_file = mine / ".preflight" / "state.json"
        state = json.loads(state_file.read_text())
        state.update(state="running", mocks=[{"name": "payments", "port": port, "pid": pid}])
        state_file.write_text(json.dumps(state))
        done = subprocess.run(
            [str(BIN / "preflight"), "clean", "-C", str(mine), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(os.environ),
        )
        reply = json.loads(done.stdout)
        assert reply["success"], reply
        assert is_detached_host(pid), "clean signalled the mock host of another project"
        assert _answers(port)
    finally:
        stop_detached(pid, state_file=str(other_state))
    assert not is_detached_host(pid)
