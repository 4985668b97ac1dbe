"""The run store across real processes: two writers at once, and an owner killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from support.stub import MakeProject

from preflight_sdk import Project

pytestmark = pytest.mark.anyio

_RUN_MANY = textwrap.dedent(
    """
    import json, sys
    import anyio
    from preflight_sdk import Project

    async def main():
        project = Project.open(sys.argv[1])
        warnings = []
        for _ in range(int(sys.argv[2])):
            result = await project.run()
            assert result.status == "passed", result.summary
            warnings += result.warnings
        print(json.dumps(warnings))

    anyio.run(main)
    """
)

_RUN_ONCE = textwrap.dedent(
    """
    import sys
    import anyio
    from preflight_sdk import Project

    anyio.run(lambda: Project.open(sys.argv[1]).run())
    """
)


def _quick(n: int) -> str:
    cases = "".join(
        f"  - name: ok {i}\n    request: {{method: GET, url: '{{{{env.STUB}}}}/doc'}}\n    expect: {{status: 200}}\n"
        for i in range(n)
    )
    return f"name: quick\ncases:\n{cases}"


async def test_two_processes_recording_fifty_runs_each_end_with_a_hundred(make_project: MakeProject) -> None:
    root = make_project([("quick", _quick(1))])
    await Project.open(root).init()  # the store is made by the first writer, whichever it is
    command = [sys.executable, "-c", _RUN_MANY, str(root), "50"]
    procs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outputs = [p.communicate(timeout=240) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-2000:]
        assert json.loads(out.strip().splitlines()[-1]) == []  # no store warning: never "database is locked"
        assert "locked" not in err
    listed = await Project.open(root).list_runs(limit=500)
    assert len(listed.runs) == 100 and len({r.run_id for r in listed.runs}) == 100
    assert all(r.status == "passed" and r.totals.passed == 1 for r in listed.runs)


async def test_a_killed_owner_leaves_a_run_that_reads_interrupted(make_project: MakeProject) -> None:
    slow = "".join(
        f"  - name: slow {i}\n    request: {{method: GET, url: '{{{{env.STUB}}}}/slow?ms=500'}}\n    expect: {{status: 200}}\n"
        for i in range(20)
    )
    root = make_project([("slow", f"name: slow\ncases:\n{slow}")])
    proc = subprocess.Popen([sys.executable, "-c", _RUN_ONCE, str(root)], stderr=subprocess.DEVNULL)
    project = Project.open(root)
    try:
        running = None
        deadline = time.monotonic() + 30
        while running is None and time.monotonic() < deadline:
            await anyio.sleep(0.2)
            if (root / ".preflight" / "preflight.db").exists():
                listed = await project.list_runs(status="running")
                running = listed.runs[0] if listed.runs else None
        assert running is not None, "the child never reported a running run"
        # another process's get_run shows the owner's progress and, from its snapshots, the
        # cases finished so far
        for _ in range(40):
            seen = await project.get_run(running.run_id, wait="250ms")
            if any(c.status == "passed" for s in seen.suites for c in s.cases):
                break
        assert seen.status == "running" and seen.progress is not None and seen.progress.done >= 1
        assert any(c.status == "passed" for s in seen.suites for c in s.cases)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    after = await Project.open(root).get_run(running.run_id)
    assert after.status == "interrupted"
    assert any(c.status == "passed" for s in after.suites for c in s.cases)  # the last snapshot's cases
    listed = await Project.open(root).list_runs()
    assert listed.runs[0].status == "interrupted"
    resumed = await Project.open(root).resume_run(running.run_id, wait="0s")
    assert resumed.resumed_from == running.run_id
    await Project.open(root).cancel_run(resumed.run_id)


def test_the_store_files_are_where_the_docs_say(tmp_path: Path) -> None:
    from preflight_sdk.core.run_request import RunRequest
    from preflight_sdk.store import NewRun, RunStore

    store = RunStore(tmp_path)
    store.create(RunRequest(), NewRun(run_id="01ARZ3NDEKTSV4RRFFQ69G5FAV", started_at="2026-01-01T00:00:00.000Z"))
    assert (tmp_path / ".preflight" / "preflight.db").is_file()
    import sqlite3

    conn = sqlite3.connect(tmp_path / ".preflight" / "preflight.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
    assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x50464C54


def test_another_program_s_database_is_moved_aside_not_used(tmp_path: Path) -> None:
    import sqlite3

    from preflight_sdk.core.run_request import RunRequest
    from preflight_sdk.store import NewRun, RunStore

    folder = tmp_path / ".preflight"
    folder.mkdir()
    foreign = sqlite3.connect(folder / "preflight.db")
    foreign.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    foreign.execute("INSERT INTO invoices (total) VALUES (12.5)")
    foreign.commit()
    foreign.close()
    store = RunStore(tmp_path)
    store.create(RunRequest(), NewRun(run_id="01ARZ3NDEKTSV4RRFFQ69G5FAV", started_at="2026-01-01T00:00:00.000Z"))
    warnings = store.db.pop_warnings()
    assert len(warnings) == 1 and "tables preflight did not make (invoices)" in warnings[0]
    aside = list(folder.glob("preflight.db.corrupt-*"))
    assert len(aside) == 1
    kept = sqlite3.connect(aside[0])
    assert kept.execute("SELECT total FROM invoices").fetchone() == (12.5,)  # their data untouched
    kept.close()
    assert [r.run_id for r in store.runs()] == ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]
