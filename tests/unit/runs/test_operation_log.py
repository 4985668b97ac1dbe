"""The operation log's writer: every call lands, in batches, and a reader in the process sees them at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from preflight_sdk import Project
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.runs.queries import operation_log
from preflight_sdk.store import RunStore
from preflight_sdk.store import calls as log

pytestmark = pytest.mark.anyio


async def test_a_reader_in_the_same_process_sees_every_call_without_waiting(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project:\n  name: logged\n", encoding="utf-8")
    project = Project.open(tmp_path)
    for _ in range(3):
        await project.init()
    with pytest.raises(PreflightError):
        await project.get_run("nope")
    started = time.monotonic()
    seen = await operation_log(project._runs, 10)
    assert time.monotonic() - started < log.LINGER  # flushed, not waited for
    assert [(c.operation, c.outcome, c.error_code) for c in seen.calls] == [
        ("get_run", "error", "INVALID_INPUT"),
        *[("init", "ok", None)] * 3,
    ]


def test_calls_noted_together_are_written_in_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".preflight").mkdir()
    log.flush_calls()  # nothing of another test left in the queue
    batches: list[int] = []
    record = RunStore.record_operations

    def counted(store: RunStore, rows: list[object]) -> None:
        batches.append(len(rows))
        record(store, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "record_operations", counted)
    for n in range(20):
        log.note_call((str(tmp_path), f"op{n}", time.time(), n, "ok", None, None, 1))
    log.flush_calls()
    assert sum(batches) == 20 and len(batches) <= 2, batches  # not one transaction per call
    rows = RunStore(tmp_path, create=False).operations(limit=50)
    assert [r.operation for r in rows] == [f"op{n}" for n in reversed(range(20))]
    assert rows[0].started_at.endswith("Z") and rows[0].duration_ms == 19
