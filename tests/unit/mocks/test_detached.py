"""The detached mock host: a real `python -m preflight_sdk.mocks.serve` process, started and stopped by pid."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import msgspec
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
    spec = _spec(tmp_path, port)
    pid = spawn_detached(spec, tmp_path / "mocks")
    try:
        assert is_detached_host(pid) and is_detached_host(pid, spec.state_file)
        health = httpx.get(f"http://127.0.0.1:{port}/_mock/health", timeout=2.0, trust_env=False)
        assert health.status_code == 200
        assert health.json()["name"] == "payments"
        # Another checkout's state file does not make this host its own: it is not signalled.
        assert not is_detached_host(pid, str(tmp_path / "elsewhere" / "state.json"))
        assert not stop_detached(pid, state_file=str(tmp_path / "elsewhere" / "state.json"))
        assert is_detached_host(pid)
    finally:
        assert stop_detached(pid, state_file=spec.state_file)
    assert not is_detached_host(pid)
    assert not stop_detached(pid, state_file=spec.state_file)  # nothing runs as that pid any more


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_spec_reaches_the_host_on_its_input_and_no_file_holds_its_secrets(tmp_path: Path) -> None:
    port = _free_port()
    secret = "sk_live_spec_only_on_stdin_42"
    route = {
        "method": "GET",
        "path": "/k",
        "when": {"headers": {"x-api-key": secret}},
        "response": {"body": "ok"},
    }
    spec = msgspec.structs.replace(
        _spec(tmp_path, port),
        mocks={"payments": msgspec.convert({"port": port, "routes": [route]}, MockConfig)},
        redact_values=[secret],
        admin_token="t0k3n-for-the-test",
    )
    folder = tmp_path / "mocks"
    folder.mkdir()
    (folder / "mocks.json").write_text(json.dumps({"left": secret}))  # an earlier version's spec file
    pid = spawn_detached(spec, folder)
    try:
        answer = httpx.get(
            f"http://127.0.0.1:{port}/k", headers={"x-api-key": secret}, timeout=2.0, trust_env=False
        )
        assert answer.status_code == 200 and answer.text == "ok"
        shown = httpx.get(f"http://127.0.0.1:{port}/_mock/requests", timeout=2.0, trust_env=False)
        assert (
            secret not in shown.text and shown.json()["requests"][0]["headers"]["x-api-key"] == "[redacted]"
        )
        raw = httpx.get(
            f"http://127.0.0.1:{port}/_mock/requests",
            headers={"X-Preflight-Token": "t0k3n-for-the-test"},
            timeout=2.0,
            trust_env=False,
        )
        assert raw.json()["requests"][0]["headers"]["x-api-key"] == secret
        assert secret.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        for path in tmp_path.rglob("*"):
            assert not path.is_file() or secret.encode() not in path.read_bytes(), path
    finally:
        stop_detached(pid, state_file=spec.state_file)


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
