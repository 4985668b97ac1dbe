"""The detached mock host: a real `python -m preflight_sdk.mocks.serve` process, started and stopped by pid."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from preflight_sdk.config.model import MockConfig
from preflight_sdk.core.errors import MockError
from preflight_sdk.mocks.detached import DetachedSpec, is_detached_host, spawn_detached, stop_detached


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spec(tmp_path: Path, port: int) -> DetachedSpec:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"sessionId": "s1"}))
    return DetachedSpec(
        mocks={"payments": MockConfig(port=port)},
        bind_hosts=["127.0.0.1"],
        state_file=str(state),
        session_id="s1",
    )


# The host outlives its `Popen` on purpose (it is found again by pid): the interpreter's warning
# about a child still running when that object goes is what detaching means here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_detached_host_answers_as_its_mock_once_spawned_and_stops_by_pid(tmp_path: Path) -> None:
    port = _free_port()
    pid = spawn_detached(_spec(tmp_path, port), tmp_path / "mocks")
    try:
        assert is_detached_host(pid)
        health = httpx.get(f"http://127.0.0.1:{port}/_mock/health", timeout=2.0, trust_env=False)
        assert health.status_code == 200
        assert health.json()["name"] == "payments"
    finally:
        assert stop_detached(pid)
    assert not is_detached_host(pid)
    assert not stop_detached(pid)  # nothing runs as that pid any more: nothing is signalled


def test_a_host_that_cannot_serve_is_an_error_with_its_log_and_leaves_nothing_running(tmp_path: Path) -> None:
    with socket.socket() as taken:  # the port is in use: the host cannot bind it and exits
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        with pytest.raises(MockError) as caught:
            spawn_detached(_spec(tmp_path, port), tmp_path / "mocks")
    assert caught.value.code == "MOCKS_NOT_RUNNING"
    assert caught.value.details == {"ports": {"payments": port}}
    assert "the detached mock host did not start" in caught.value.message
