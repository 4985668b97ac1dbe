"""A damaged or emptied run store, met by the real `preflight` command: never INTERNAL, never a
silently empty history while the run folders remain (real SQLite files, real processes)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli import BIN

CONFIG = """\
project: {name: store-recovery}
tests:
  suites:
    - {id: ok, runner: shell, command: ["true"]}
"""


def _cli(root: Path, *args: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"], capture_output=True, text=True, timeout=120
    )
    assert done.stdout, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply, done.stderr


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, list[str]]:
    """A project with two recorded runs, its store checkpointed into the main file."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    ids = [_cli(root, "run")[0]["data"]["runId"] for _ in range(2)]
    with sqlite3.connect(root / ".preflight" / "preflight.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return root, ids


def _damage_the_runs_table(path: Path) -> None:
    """Overwrite the runs table's pages; the file's header and schema stay intact."""
    with sqlite3.connect(path) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        [page] = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()
    data = bytearray(path.read_bytes())
    data[(page - 1) * size : page * size] = b"\xab" * size
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_store_with_damaged_pages_is_moved_aside_and_its_history_rebuilt(
    project: tuple[Path, list[str]],
) -> None:
    root, ids = project
    store = root / ".preflight" / "preflight.db"
    _damage_the_runs_table(store)
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        with sqlite3.connect(store) as db:
            db.execute("SELECT * FROM runs").fetchall()
    listed, warned = _cli(root, "list-runs")
    assert listed["success"] is True, listed
    assert [r["runId"] for r in listed["data"]["runs"]] == ids[::-1]
    assert "moved aside" in warned and "rebuilt from the report.json of 2" in warned, warned
    assert len(list(store.parent.glob("preflight.db.corrupt-*"))) == 1
    shown, _ = _cli(root, "get-run", ids[0])
    again, _ = _cli(root, "run")
    assert shown["success"] is True and shown["data"]["status"] == "passed"
    assert again["success"] is True and again["data"]["status"] == "passed"
    assert len(_cli(root, "list-runs")[0]["data"]["runs"]) == 3


def test_an_emptied_store_gets_its_history_back_from_the_run_folders(project: tuple[Path, list[str]]) -> None:
    root, ids = project
    store = root / ".preflight" / "preflight.db"
    store.write_bytes(b"")
    (root / ".preflight" / "runs" / "01ARZ3NDEKTSV4RRFFQ69G5FAV").mkdir()  # a folder without a report
    listed, warned = _cli(root, "list-runs")
    assert listed["success"] is True
    assert [r["runId"] for r in listed["data"]["runs"]] == ids[::-1]
    assert "rebuilt from the report.json of 2 of them" in warned and "01ARZ3NDEKTSV4RRFFQ69G5FAV" in warned
    cases, _ = _cli(root, "get-run", ids[1])
    assert [c["status"] for s in cases["data"]["suites"] for c in s["cases"]] == ["passed"]
    second, warned_again = _cli(root, "list-runs")
    assert len(second["data"]["runs"]) == 2 and "rebuilt" not in warned_again  # once
