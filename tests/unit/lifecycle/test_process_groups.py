"""The record of running process groups: what `clean`, `cancel_run` and the next run stop.

Real processes in sessions of their own; the record's files are read as another process would.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight_sdk.processes.groups import ProcessGroups, stop_groups


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """`sh -c 'sleep 60 & sleep 61'` in a session of its own: a group with a background child."""
    process = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 61"], start_new_session=True)
    time.sleep(0.2)
    yield process
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone(process: subprocess.Popen[bytes]) -> bool:
    process.wait(timeout=5)
    deadline = time.monotonic() + 5
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _group_alive(process.pid)


def test_a_live_owners_group_is_left_to_it_and_clean_stops_it_whole(tmp_path: Path, sleeper) -> None:
    groups = ProcessGroups(tmp_path)
    groups.record(sleeper.pid, "suite")
    assert stop_groups(tmp_path, orphans_only=True) == 0  # its owner (this process) lives
    assert sleeper.poll() is None
    assert stop_groups(tmp_path, orphans_only=False) == 1
    assert _gone(sleeper)  # the background `sleep 60` too: the whole group
    assert list((tmp_path / ".preflight" / "procs").iterdir()) == []


def test_an_orphaned_group_is_stopped_and_a_reused_pid_never_signalled(tmp_path: Path, sleeper) -> None:
    groups = ProcessGroups(tmp_path)
    groups.record(sleeper.pid, "suite")
    record_file = tmp_path / ".preflight" / "procs" / f"{sleeper.pid}.json"
    record = json.loads(record_file.read_text())

    # The same pid started at another moment: another process now, left alone.
    record_file.write_text(json.dumps({**record, "owner": 2**22 + 1, "started": record["started"] + 1}))
    assert stop_groups(tmp_path, orphans_only=True) == 0
    assert sleeper.poll() is None and not record_file.exists()

    # Its owner gone (no such pid): stopped by the next run or cancel_run.
    groups.record(sleeper.pid, "suite")
    record = json.loads(record_file.read_text())
    record_file.write_text(json.dumps({**record, "owner": 2**22 + 1}))
    assert stop_groups(tmp_path, orphans_only=True) == 1
    assert _gone(sleeper)


def test_forget_removes_the_record_and_a_broken_one_is_dropped(tmp_path: Path, sleeper) -> None:
    groups = ProcessGroups(tmp_path)
    groups.record(sleeper.pid, "suite")
    groups.forget(sleeper.pid)
    (tmp_path / ".preflight" / "procs" / "123.json").write_text("{not json")
    assert stop_groups(tmp_path, orphans_only=False) == 0
    assert sleeper.poll() is None
    assert list((tmp_path / ".preflight" / "procs").iterdir()) == []


def _marked(env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        ["sh", "-c", "sleep 60 & sleep 61"], start_new_session=True, env={**os.environ, **env}
    )
    time.sleep(0.2)
    return process


def _stopped(process: subprocess.Popen[bytes]) -> bool:
    """Whether `process` and its group ended (it is reaped here; its background child by init)."""
    process.wait(timeout=5)
    deadline = time.monotonic() + 3
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _group_alive(process.pid)


def test_a_group_never_recorded_is_found_by_its_mark(tmp_path: Path) -> None:
    # The owner was killed between starting the group and writing its record: only the mark says.
    mine = tmp_path / "mine"
    other = tmp_path / "other"
    ours = _marked(ProcessGroups(mine).mark())
    theirs = _marked(ProcessGroups(other).mark())
    dead_owner = subprocess.Popen(["true"])
    dead_owner.wait()
    orphan = _marked({"PREFLIGHT_PROCESS_GROUP_OF": f"{dead_owner.pid}:0:{mine.resolve()}"})
    try:
        # The next run stops only the orphan: this process, the owner of `ours`, is alive.
        assert stop_groups(mine, orphans_only=True) == 1
        assert _stopped(orphan) and _group_alive(ours.pid)
        # clean stops every group of the project, and none of another project's.
        assert stop_groups(mine, orphans_only=False) == 1
        assert _stopped(ours) and _group_alive(theirs.pid)
    finally:
        for process in (ours, theirs, orphan):
            try:
                os.killpg(process.pid, 9)
            except ProcessLookupError:
                pass
            process.wait()
