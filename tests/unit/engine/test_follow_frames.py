"""The Docker API's multiplexed log stream cut into lines, each with its own stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.engine import follow
from preflight_sdk.engine.follow import _Frames, local_socket


def frame(stream: int, payload: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload


def test_frames_torn_anywhere_give_whole_lines_with_their_stream() -> None:
    data = (
        frame(1, b"2026-11-24T10:00:00.000000001Z out one\n")
        + frame(2, b"2026-11-24T10:00:00.000000002Z err one\n2026-11-24T10:00:00.0000")
        + frame(2, b"00003Z err two, progress 50%\r100%\r\n")
        + frame(1, b"2026-11-24T10:00:00.000000004Z out two")
    )
    for cut in range(1, len(data)):
        frames = _Frames()
        lines = frames.feed(data[:cut]) + frames.feed(data[cut:]) + frames.flush()
        assert lines == [
            ("stdout", "2026-11-24T10:00:00.000000001Z out one"),
            ("stderr", "2026-11-24T10:00:00.000000002Z err one"),
            ("stderr", "2026-11-24T10:00:00.000000003Z err two, progress 50%\r100%"),
            ("stdout", "2026-11-24T10:00:00.000000004Z out two"),
        ], cut


def test_a_tty_container_has_one_raw_stream() -> None:
    frames = _Frames()
    assert frames.feed(b"2026-11") == []
    assert frames.feed(b"-24T10:00:00Z hello\r\n2026-11-24T10:00:01Z bye") == [
        ("stdout", "2026-11-24T10:00:00Z hello")
    ]
    assert frames.flush() == [("stdout", "2026-11-24T10:00:01Z bye")]


def test_the_local_socket_follows_docker_host_and_contexts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock")
    assert local_socket() == "/run/user/1000/docker.sock"
    monkeypatch.setenv("DOCKER_HOST", "tcp://10.0.0.5:2376")
    assert local_socket() is None, "a remote daemon goes through the CLI"
    monkeypatch.setenv("DOCKER_HOST", "unix:///x.sock")
    monkeypatch.setenv("DOCKER_CONTEXT", "remote")
    assert local_socket() is None, "a named context goes through the CLI"
    monkeypatch.delenv("DOCKER_CONTEXT")
    monkeypatch.delenv("DOCKER_HOST")
    monkeypatch.setattr(follow, "_DEFAULT_SOCKET", str(tmp_path / "docker.sock"))
    assert local_socket() is None, "no daemon socket here"
    (tmp_path / "docker.sock").touch()
    assert local_socket() == str(tmp_path / "docker.sock")
    (tmp_path / "config.json").write_text('{"currentContext": "remote"}')
    assert local_socket() is None, "the CLI's current context is another daemon"
