"""Exit codes of the real `preflight` console script when something other than a test fails.

3 is an environment error (Docker unreachable, a container that is not there), 2 a configuration or
usage error; the configuration is checked before Docker is asked anything. With `--json`, stdout
holds only the envelope; without it, stdout stays empty and the error and its hint go to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PREFLIGHT = str(Path(sys.executable).parent / "preflight")
NO_DOCKER = "unix:///nonexistent/docker.sock"

DOCKERFILE = 'FROM preflight-base/busybox\nCMD ["httpd", "-f", "-p", "8080"]\n'
CONFIG = """\
project: {name: exit-codes}
services:
  api:
    build: {image: pf-exit-codes/api, dockerfile: Dockerfile}
    container:
      ports: ["0:8080"]
"""


def _run(
    *args: str, cwd: Path | None = None, docker_host: str | None = NO_DOCKER
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "DOCKER_CONTEXT"}
    if docker_host is not None:
        env["DOCKER_HOST"] = docker_host
    return subprocess.run(
        [PREFLIGHT, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


def _envelope(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The one JSON document on stdout: a failed envelope."""
    envelope: dict[str, Any] = json.loads(done.stdout)
    assert envelope["success"] is False
    assert "data" not in envelope
    assert isinstance(envelope["timestamp"], int)
    return envelope


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one service built from a Dockerfile."""
    root = tmp_path / "exit-codes"
    root.mkdir()
    (root / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    return root


# -- 3: environment errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["build"], ["setup"], ["status"], ["logs", "api"], ["clean"], ["run"], ["up"]],
    ids=lambda command: "-".join(command),
)
def test_an_unreachable_docker_exits_3_with_a_docker_error_and_a_hint(
    project: Path, command: list[str]
) -> None:
    done = _run("--json", *command, "-C", str(project))
    assert done.returncode == 3, done.stdout + done.stderr
    error = _envelope(done)["error"]
    assert error["code"] == "DOCKER_ERROR"
    assert error["retryable"] is True
    assert "docker" in error["hint"].lower()
    assert NO_DOCKER.removeprefix("unix://") in error["message"]
    assert "Traceback" not in done.stderr


def test_a_human_gets_the_docker_error_and_its_hint_on_stderr_only(project: Path) -> None:
    done = _run("build", "-C", str(project))
    assert done.returncode == 3
    assert done.stdout == ""
    assert "[DOCKER_ERROR]" in done.stderr and "hint: start Docker" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.docker
def test_logs_of_an_unknown_container_without_a_session_is_container_not_found(project: Path) -> None:
    assert not (project / ".preflight").exists()
    done = _run("--json", "logs", "nope", "-C", str(project), docker_host=None)
    assert done.returncode == 3, done.stdout + done.stderr
    error = _envelope(done)["error"]
    assert error["code"] == "CONTAINER_NOT_FOUND"
    assert "not a service of this project" in error["message"]
    assert error["hint"] == "valid names: api"
    assert error["details"]["valid"] == ["api"]
    human = _run("logs", "nope", "-C", str(project), docker_host=None)
    assert human.returncode == 3 and human.stdout == ""
    assert "[CONTAINER_NOT_FOUND]" in human.stderr and "valid names: api" in human.stderr


# -- 2: configuration and usage errors -------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "build", "logs"])
def test_a_yaml_syntax_error_exits_2_before_docker_is_asked(project: Path, command: str) -> None:
    (project / "e2e.yaml").write_text("project: {name: broken}\nservices: [\n", encoding="utf-8")
    args = [command, "api"] if command == "logs" else [command]
    done = _run("--json", *args, "-C", str(project))  # Docker is unreachable: 3 would mean it was asked
    assert done.returncode == 2, done.stdout + done.stderr
    error = _envelope(done)["error"]
    assert error["code"] == "CONFIG_INVALID"
    assert error["hint"]
    (problem,) = error["details"]["problems"]
    assert problem["file"] == str(project / "e2e.yaml")
    assert "YAML syntax error" in problem["message"] and problem["line"] >= 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "--no-such-option"], "No such option '--no-such-option'"),
        (["no-such-command"], "No such command 'no-such-command'"),
        (["logs", "api", "--lines", "many"], "'many' is not a valid integer"),
    ],
    ids=["unknown-option", "unknown-command", "bad-value"],
)
def test_a_usage_error_exits_2_and_touches_nothing(project: Path, args: list[str], message: str) -> None:
    human = _run(*args, cwd=project)
    assert human.returncode == 2
    assert human.stdout == ""
    assert message in human.stderr and "Usage: preflight" in human.stderr
    with_json = _run("--json", *args, cwd=project)
    assert with_json.returncode == 2
    error = _envelope(with_json)["error"]
    assert error["code"] == "INVALID_INPUT"
    assert message in error["message"]
    assert "--help" in error["hint"]
    assert not (project / ".preflight").exists()
