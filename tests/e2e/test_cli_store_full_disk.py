"""A project whose disk is full (or read-only), met by the real `preflight` command on a real file system.

The project lives on a 4 MiB tmpfs this test mounts (and unmounts). With the file system filled
to its last byte, or remounted read-only, every command answers STORE_UNAVAILABLE (retryable,
naming the cause and the free space), no command prints a traceback, and the store is left where
it is: once there is room again, its saved test and its runs are all there.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import BIN

pytestmark = pytest.mark.e2e

CONFIG = """\
project: {name: full-disk}
tests:
  suites:
    - {id: ok, runner: shell, command: ["true"]}
"""


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs of its own, unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        message = f"cannot mount a tmpfs here (root is needed): {done.stderr.decode().strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _cli(root: Path, *args: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply, done.stderr


def _fill(folder: Path) -> None:
    """Write until the file system has no byte left (big blocks, then single bytes)."""
    for name, block in (("filler", 65536), ("filler-tail", 1)):
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * block)
        except OSError:
            pass
        finally:
            os.close(fd)


def _unavailable(reply: dict[str, Any], cause: str) -> None:
    assert reply["success"] is False, reply
    error = reply["error"]
    assert error["code"] == "STORE_UNAVAILABLE", error
    assert error["retryable"] is True
    assert cause in error["message"], error["message"]


def test_a_full_disk_is_store_unavailable_and_the_store_stays_in_place(disk: Path) -> None:
    root = disk / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    first, _ = _cli(root, "run")
    assert first["success"] and first["data"]["status"] == "passed", first
    saved, _ = _cli(root, "save-test", "health", "--name", "health", "--test", '{"request": {"url": "http://127.0.0.1:9/"}}')
    assert saved["success"], saved
    store = root / ".preflight" / "preflight.db"
    inode = store.stat().st_ino

    _fill(disk)
    for command in (["run"], ["save-test", "more", "--name", "more", "--test", '{"request": {"url": "http://x/"}}']):
        reply, _ = _cli(root, *command)
        _unavailable(reply, "no space left")
        assert "0 bytes free" in reply["error"]["message"], reply["error"]["message"]
    listed, _ = _cli(root, "list-tests")
    if not listed["success"]:
        _unavailable(listed, "no space left")
    else:  # a read may still work on a full disk; then it must not come back empty
        assert [t["id"] for t in listed["data"]["tests"]] == ["health"], listed
    assert sorted(p.name for p in store.parent.iterdir() if p.name.startswith("preflight.db")) in (
        ["preflight.db"],
        ["preflight.db", "preflight.db-shm", "preflight.db-wal"],
    ), "nothing moved aside"
    assert store.stat().st_ino == inode

    (disk / "filler").unlink()
    (disk / "filler-tail").unlink()
    listed, _ = _cli(root, "list-tests")
    assert [t["id"] for t in listed["data"]["tests"]] == ["health"], listed
    runs, _ = _cli(root, "runs")
    assert first["data"]["runId"] in [r["runId"] for r in runs["data"]["runs"]], runs


def test_a_read_only_file_system_is_store_unavailable_and_moves_nothing(disk: Path) -> None:
    root = disk / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    first, _ = _cli(root, "run")
    assert first["success"], first
    before = sorted(p.name for p in (root / ".preflight").iterdir())
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    try:
        reply, _ = _cli(root, "run")
        _unavailable(reply, "read-only")
        saved, _ = _cli(root, "save-test", "x", "--name", "x", "--test", '{"request": {"url": "http://x/"}}')
        _unavailable(saved, "read-only")
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    assert sorted(p.name for p in (root / ".preflight").iterdir()) == before
