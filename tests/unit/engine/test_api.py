"""When the Engine API lane applies, and what it does with a socket that does not answer."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from preflight_sdk import PreflightError
from preflight_sdk.engine.api import EngineAPI, container_body, local_socket
from preflight_sdk.engine.base import ContainerSpec
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.engine.podman import PodmanEngine


@pytest.fixture
def sock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A listening unix socket named by DOCKER_HOST (nothing answers on it)."""
    path = tmp_path / "docker.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    monkeypatch.delenv("PREFLIGHT_DOCKER_API", raising=False)
    yield path
    server.close()


def test_the_lane_applies_to_the_stock_client_on_a_local_socket_only(
    sock: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert local_socket(None, None) == str(sock)
    engine = DockerEngine()
    assert engine._api() is not None and engine._api().path == str(sock)  # type: ignore[union-attr]
    # A client given by path (a stand-in, another build of docker) and Podman get every call.
    assert DockerEngine("/usr/local/bin/docker")._api() is None
    assert PodmanEngine()._api() is None
    # Engines elsewhere keep the CLI.
    assert local_socket("tcp://192.0.2.2:2375", None) is None
    assert local_socket("ssh://root@192.0.2.2", None) is None
    assert local_socket(None, "remote") is None
    # A socket that is not there: the CLI, which says so in its own words.
    assert local_socket(f"unix://{tmp_path}/absent.sock", None) is None
    monkeypatch.setenv("PREFLIGHT_DOCKER_API", "0")
    assert local_socket(None, None) is None and DockerEngine()._api() is None


def test_a_socket_that_does_not_answer_is_a_retryable_docker_error(tmp_path: Path) -> None:
    refused = tmp_path / "refused.sock"
    refused.write_text("")  # a file, not a socket: connecting is refused
    with pytest.raises(PreflightError) as caught:
        EngineAPI(str(refused)).list_containers({"preflight.root": "/x"})
    assert caught.value.code == "DOCKER_ERROR" and caught.value.retryable
    assert "not reachable" in caught.value.message and caught.value.hint
    assert str(refused) in caught.value.message


def test_the_create_body_says_what_docker_run_would() -> None:
    plain = container_body(ContainerSpec(name="a", image="img", network="n"))
    # No command and no entrypoint: the image's own are kept.
    assert "Cmd" not in plain and "Entrypoint" not in plain and "Healthcheck" not in plain
    assert plain["NetworkingConfig"] == {"EndpointsConfig": {"n": {"Aliases": []}}}
    assert plain["HostConfig"]["NetworkMode"] == "n" and "Init" not in plain["HostConfig"]
    # `--entrypoint ''` resets the image's entrypoint.
    reset = container_body(ContainerSpec(name="a", image="img", network="n", entrypoint="", command=["x"]))
    assert reset["Entrypoint"] == [""] and reset["Cmd"] == ["x"]


def test_a_daemon_that_goes_away_mid_stream_is_a_docker_error(tmp_path: Path) -> None:
    # A stand-in daemon: it starts a chunked answer to the events request, then hangs up.
    path = tmp_path / "dies.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()

    def answer_then_hang_up() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.sendall(b'10\r\n{"id": "abc"}\n\n\r\n')  # one event, 16 bytes
        conn.close()

    thread = threading.Thread(target=answer_then_hang_up)
    thread.start()
    events = EngineAPI(str(path)).events({"type": ["container"]}, None)
    assert next(events) == {"id": "abc"}
    with pytest.raises(PreflightError) as caught:
        next(events)
    thread.join()
    server.close()
    assert caught.value.code == "DOCKER_ERROR" and caught.value.retryable
