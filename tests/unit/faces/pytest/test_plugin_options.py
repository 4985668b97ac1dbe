"""`--preflight PATH` as a real pytest process reads it: a test path taken for the project is told."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = "project: {name: options}\nmocks:\n  pay: {port: 0, routes: []}\n"


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "e2e.yaml").write_text(PROJECT)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_env.py").write_text("def test_env(preflight_env):\n    pass\n")
    return tmp_path


@pytest.mark.parametrize("given", ["tests", "tests/test_env.py"])
def test_a_test_path_after_preflight_is_refused_with_the_two_ways_to_write_it(
    project: Path, given: str
) -> None:
    done = _pytest(project, "--preflight", given)
    out = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert f"`--preflight {given}` took `{given}` as the project" in out, out
    assert f"--preflight=PATH {given}" in out, out
    assert f"pytest {given} --preflight" in out, out
    assert "Traceback" not in out
    assert not (project / ".preflight").exists(), "nothing was set up"


def test_a_project_directory_after_preflight_still_works_without_the_equals_sign(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "e2e.yaml").write_text(PROJECT)
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    done = _pytest(tmp_path, "--preflight", "proj", "test_plain.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_preflight_with_the_equals_sign_is_taken_as_written(project: Path) -> None:
    done = _pytest(project, "--preflight=tests", "tests")
    out = done.stdout + done.stderr
    # The user said tests/ is the project: its missing e2e.yaml is preflight's own error.
    assert "CONFIG_NOT_FOUND" in out, out
    assert "took `tests` as the project" not in out
