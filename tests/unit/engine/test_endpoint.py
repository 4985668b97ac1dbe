"""Where an engine's published ports are reached, and how its containers reach the mocks back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight_sdk.engine.errors import daemon_unreachable, name_the_engine, translate
from preflight_sdk.engine.target import endpoint_address, on_local_socket


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (None, ("127.0.0.1", True)),
        ("unix:///var/run/docker.sock", ("127.0.0.1", True)),
        ("unix:///tmp/x/docker.sock", ("127.0.0.1", True)),
        ("tcp://192.0.2.2:2375", ("192.0.2.2", False)),
        ("tcp://127.0.0.1:2375", ("127.0.0.1", False)),
        ("ssh://ci@builder", ("builder", False)),
        ("ssh://ci@builder.example.com:2222", ("builder.example.com", False)),
        ("tcp://[2001:db8::5]:2376", ("2001:db8::5", False)),
        ("10.1.2.3:2375", ("10.1.2.3", False)),
    ],
)
def test_published_ports_are_reached_at_the_engines_host(url: str | None, expected: tuple[str, bool]) -> None:
    assert endpoint_address(url) == expected


def test_the_local_socket_is_known_without_asking_the_daemon(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    assert on_local_socket(None, None)
    assert on_local_socket("unix:///tmp/other.sock", None)
    assert not on_local_socket("tcp://192.0.2.2:2375", None)
    assert not on_local_socket(None, "ci")
    monkeypatch.setenv("DOCKER_HOST", "ssh://ci@builder")
    assert not on_local_socket(None, None)
    monkeypatch.delenv("DOCKER_HOST")
    monkeypatch.setenv("DOCKER_CONTEXT", "ci")
    assert not on_local_socket(None, None)
    monkeypatch.delenv("DOCKER_CONTEXT")
    (tmp_path / "config.json").write_text(json.dumps({"currentContext": "ci"}))
    assert not on_local_socket(None, None)
    (tmp_path / "config.json").write_text(json.dumps({"currentContext": "default"}))
    assert on_local_socket(None, None)


def test_an_engine_that_does_not_answer_is_named_unless_it_is_a_local_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    down = daemon_unreachable("error during connect: dial tcp 192.0.2.9:2375: connect: no route to host")
    named = name_the_engine(down, "tcp://192.0.2.9:2375", None)
    assert named is not down and named.code == "DOCKER_ERROR" and named.retryable
    assert "tcp://192.0.2.9:2375" in named.message
    assert "docker --host tcp://192.0.2.9:2375 info" in (named.hint or "")
    assert named.details and named.details["engine"] == "tcp://192.0.2.9:2375"
    by_context = name_the_engine(down, None, "ci")
    assert "docker --context ci info" in (by_context.hint or "") and by_context.details
    assert by_context.details["engine"] == "context:ci"
    # This machine's socket keeps the hint about starting Docker; other errors pass unchanged.
    assert name_the_engine(down, "unix:///tmp/x.sock", None) is down
    assert name_the_engine(down, None, None) is down
    other = translate("Error response from daemon: conflict", action="start container api")
    assert name_the_engine(other, "tcp://192.0.2.9:2375", None) is other
    monkeypatch.setenv("DOCKER_HOST", "ssh://ci@builder")
    assert "ssh://ci@builder" in name_the_engine(down, None, None).message


@pytest.mark.parametrize(
    ("said", "host", "command"),
    [
        ("Permission denied (publickey).", "ssh://ci@builder:2222", "ssh -p 2222 ci@builder docker version"),
        ("Host key verification failed.", "ssh://builder", "ssh builder docker version"),
    ],
)
def test_an_ssh_engine_that_refuses_the_login_is_not_retryable_and_says_how_to_check(
    said: str, host: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    stderr = (
        'error during connect: Head "http://docker.example.com/_ping": command [ssh -- builder docker '
        f"system dial-stdio] has exited with exit status 255, ...: stderr={said}"
    )
    named = name_the_engine(daemon_unreachable(stderr), host, None)
    assert named.code == "DOCKER_ERROR" and not named.retryable
    assert host in named.message and said in named.message
    assert said.rstrip(".") in (named.hint or "") and f"`{command}`" in (named.hint or "")
    assert named.details and named.details["engine"] == host
    # A refused connection is not a refused login: still retryable.
    refused_port = daemon_unreachable(
        stderr.replace(said, "ssh: connect to host builder port 22: Connection refused")
    )
    assert name_the_engine(refused_port, host, None).retryable
