"""A checkout whose `.preflight/` is broken or corrupt, through the real `preflight` console script and
real Docker: clean still removes by label, status warns and recovers, and nothing read-only writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

PREFLIGHT = str(Path(sys.executable).parent / "preflight")
CONFIG = """\
project: {name: broken-state}
services:
  web:
    build: {image: "preflight-base/busybox:latest"}
    container: {command: [sleep, "300"]}
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A project with one running container labelled as its `web` service of session `abc123`."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    labels = {
        "preflight.managed": "true",
        "preflight.project": "broken-state",
        "preflight.session": "abc123",
        "preflight.root": str(root.resolve()),
        "preflight.service": "web",
    }
    argv = ["docker", "run", "-d", "--rm"]
    for name, value in labels.items():
        argv += ["--label", f"{name}={value}"]
    subprocess.run([*argv, "preflight-base/busybox:latest", "sleep", "300"], check=True, capture_output=True)
    try:
        yield root
    finally:
        force_clean(root)


def _break(root: Path, how: str) -> None:
    folder = root / ".preflight"
    if how == "dot-preflight-is-a-file":
        folder.write_text("not a folder", encoding="utf-8")
        return
    folder.mkdir()
    (folder / ("state.json" if how == "state-is-a-folder" else "lock")).mkdir()


@pytest.mark.parametrize("how", ["state-is-a-folder", "lock-is-a-folder", "dot-preflight-is-a-file"])
def test_clean_removes_by_label_whatever_the_state_files_are(project: Path, how: str) -> None:
    _break(project, how)
    done = _cli("clean", "--json", "-C", str(project))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    envelope = json.loads(done.stdout)
    assert envelope["success"] is True
    assert [c["action"] for c in envelope["data"]["containers"]] == ["force_removed"]
    assert labelled(project) == ([], [])
    status = _cli("status", "--json", "-C", str(project))
    assert '"INTERNAL"' not in status.stdout, status.stdout


def test_status_warns_about_a_corrupt_state_file_recovers_from_labels_and_writes_nothing(
    project: Path,
) -> None:
    state = project / ".preflight" / "state.json"
    state.parent.mkdir()
    state.write_text("{corrupt", encoding="utf-8")
    before = state.stat().st_mtime_ns
    done = _cli("status", "--json", "-C", str(project))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    data = json.loads(done.stdout)["data"]
    assert any("state.json" in warning for warning in data["warnings"])
    assert (data["sessionId"], data["state"]) == ("abc123", "running")
    assert data["services"][0]["status"] == "running"
    assert state.read_text(encoding="utf-8") == "{corrupt" and state.stat().st_mtime_ns == before


def test_clean_in_a_directory_without_a_project_file_writes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _cli("clean", "--json", "-C", str(empty))
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(empty.iterdir()) == []


def test_status_of_a_fresh_project_writes_no_state_file(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    done = _cli("status", "--json", "-C", str(root))
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (root / ".preflight" / "state.json").exists()
    shutil.rmtree(root)
