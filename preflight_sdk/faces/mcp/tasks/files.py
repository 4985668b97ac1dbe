"""Call tasks on disk: a task that records no run (verify) is kept in the project's `.preflight/tasks/`.

A run-backed task is read from the run store; a call task has no run, so its server writes it
here when it starts (`working`, with the server's pid) and when it ends (with the tool's reply).
A later server on the same project reads it back: a `working` task whose server is gone reads as
`failed`, like an interrupted run. Only the newest `KEEP` files stay.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import msgspec
from mcp import types

from preflight_sdk.config import find_config
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.lifecycle.session.state import STATE_DIR

from .state import INTERRUPTED_CODE, TaskView

__all__ = ["KEEP", "load_task", "save_task", "tasks_folder"]

KEEP = 100
_FOLDER = "tasks"


def tasks_folder(project_path: str) -> Path | None:
    """Where the call tasks of the project at `project_path` are kept (None: not a project)."""
    try:
        config = find_config(project_path)
    except ConfigError:
        return None  # nothing is written outside a project
    return config.parent / STATE_DIR / _FOLDER


def save_task(folder: Path, view: TaskView) -> None:
    """Write `view` (blocking); past `KEEP` files the oldest go."""
    record: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "statusMessage": view.status_message,
        "createdAt": view.created_at,
        "lastUpdatedAt": view.last_updated_at,
        "pid": os.getpid(),
    }
    if view.result is not None:
        record["result"] = view.result.model_dump(by_alias=True, mode="json", exclude_none=True)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{view.task_id}.json"
    partial = target.with_suffix(".tmp")
    partial.write_bytes(msgspec.json.encode(record))
    os.replace(partial, target)
    files = sorted(folder.glob("*.json"))  # ULID names: oldest first
    for old in files[: max(0, len(files) - KEEP)]:
        with contextlib.suppress(OSError):
            old.unlink()


def load_task(folders: list[Path], task_id: str) -> TaskView | None:
    """The call task `task_id` from the first folder that has it (blocking), else None."""
    if not task_id.isalnum():
        return None  # a task id is a ULID: never a path
    for folder in folders:
        try:
            record = msgspec.json.decode((folder / f"{task_id}.json").read_bytes())
        except (OSError, msgspec.DecodeError):
            continue
        view = TaskView(
            task_id=record["taskId"],
            status=record["status"],
            status_message=record.get("statusMessage"),
            created_at=record["createdAt"],
            last_updated_at=record["lastUpdatedAt"],
        )
        if "result" in record:
            view.result = types.CallToolResult.model_validate(record["result"])
        if view.status == "working" and not _alive(int(record.get("pid", 0))):
            message = "interrupted: the server that ran it ended before it finished; call the tool again"
            view.status, view.status_message = "failed", message
            view.error = {"code": INTERRUPTED_CODE, "message": message, "data": {"status": "interrupted"}}
        return view
    return None


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
