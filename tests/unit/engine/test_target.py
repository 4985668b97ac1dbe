"""Which engine a project runs on: e2e.yaml's `engine:`, the caller's host/context, PREFLIGHT_ENGINE."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from preflight_sdk.config import load_config
from preflight_sdk.config.engine_target import EngineTarget
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.lifecycle.session.state import SessionState


def _context(tmp_path: Path, engine: str, target: EngineTarget | None = None) -> ProjectContext:
    (tmp_path / "e2e.yaml").write_text(f"project: {{name: t}}\n{engine}\n")
    ctx = ProjectContext(tmp_path, None, None, target)
    ctx.loaded = load_config(tmp_path / "e2e.yaml")
    return ctx


def test_a_host_in_e2e_yaml_makes_a_docker_engine_on_that_host(tmp_path: Path) -> None:
    ctx = _context(tmp_path, "engine: {host: 'tcp://10.0.0.5:2375', mockHost: 10.0.0.1}\nregistry: 'r:5000'")
    target = ctx.engine_target()
    assert (target.host, target.mock_host, target.registry, target.name) == (
        "tcp://10.0.0.5:2375", "10.0.0.1", "r:5000", "tcp://10.0.0.5:2375"
    )  # fmt: skip
    assert isinstance(ctx.engine, DockerEngine)


def test_the_callers_host_wins_over_e2e_yaml_and_keeps_its_mock_host(tmp_path: Path) -> None:
    ctx = _context(tmp_path, "engine: {context: ci, mockHost: 10.0.0.1}", EngineTarget(host="ssh://u@b"))
    target = ctx.engine_target()
    assert (target.host, target.context, target.mock_host) == ("ssh://u@b", None, "10.0.0.1")


def test_the_plain_spelling_leaves_docker_host_to_the_docker_command_line(tmp_path: Path) -> None:
    target = _context(tmp_path, "engine: docker").engine_target()
    assert target.is_default and target.name == "docker"


@pytest.mark.parametrize(
    "engine",
    ["engine: {kind: podman, host: 'tcp://h:1'}", "engine: {host: 'tcp://h:1', context: ci}"],
)
def test_contradictions_are_config_errors(tmp_path: Path, engine: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _context(tmp_path, engine).engine_target()
    assert caught.value.code == "CONFIG_INVALID" and caught.value.hint


def test_preflight_engine_sets_the_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFLIGHT_ENGINE", "podman")
    assert _context(tmp_path, "engine: docker").engine_target().kind == "podman"


def test_a_running_environment_stays_on_the_engine_it_was_set_up_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    ctx = _context(tmp_path, "engine: {mockHost: 10.0.0.1}")
    assert ctx.engine_record() == {"engine_host": None, "engine_context": None}
    session = SessionState(
        project="t", session_id="s1", state="running", config_path="", config_digest="",
        engine_host="tcp://10.0.0.5:2375",
    )  # fmt: skip
    ctx.session = session
    target = ctx.engine_target()
    assert (target.host, target.mock_host) == ("tcp://10.0.0.5:2375", "10.0.0.1")
    assert ctx.engine_record() == {"engine_host": "tcp://10.0.0.5:2375", "engine_context": None}
    # The caller's engine still wins; a cleaned session no longer names one.
    ctx._target_override = EngineTarget(context="ci")
    assert ctx.engine_target().context == "ci" and ctx.engine_target().host is None
    ctx._target_override = None
    ctx.session = msgspec.structs.replace(session, state="stopped")
    assert ctx.engine_target().is_default
    # DOCKER_HOST at setup is recorded like a host given to it.
    monkeypatch.setenv("DOCKER_HOST", "ssh://ci@builder")
    assert ctx.engine_record() == {"engine_host": "ssh://ci@builder", "engine_context": None}
