"""`.preflight/state.json`: what a project has started, readable by any later process.

The CLI after an MCP server, a restarted server, the next notebook kernel: each reads this file to
know the session, its network and containers, and cleans by Docker label even when it is gone.
Writes are atomic (temporary file + rename), so a crash never leaves half a file.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Literal

import msgspec

__all__ = [
    "STATE_DIR",
    "ContainerRecord",
    "MockRecord",
    "SessionState",
    "read_state",
    "remove_state",
    "state_path",
    "write_state",
]

STATE_DIR = ".preflight"
State = Literal["initialized", "built", "running", "stopped"]


class ContainerRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A container setup started."""

    service: str
    name: str
    id: str
    kind: Literal["service", "job"] = "service"


class MockRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A mock setup started (it lives in the process `pid`)."""

    name: str
    port: int
    pid: int


class SessionState(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The persisted session of one project."""

    project: str
    session_id: str
    state: State
    config_path: str
    config_digest: str
    network: str | None = None
    containers: list[ContainerRecord] = msgspec.field(default_factory=list)
    mocks: list[MockRecord] = msgspec.field(default_factory=list)
    images: dict[str, str] = msgspec.field(default_factory=dict)
    owner_pid: int = 0
    updated_at: float = 0.0
    version: int = 1


def state_path(root: str | os.PathLike[str]) -> Path:
    """Return the state file of the project rooted at `root`."""
    return Path(root) / STATE_DIR / "state.json"


def read_state(root: str | os.PathLike[str]) -> SessionState | None:
    """Return the persisted session, or None when there is none (or it cannot be read)."""
    try:
        raw = state_path(root).read_bytes()
    except OSError:
        return None
    try:
        return msgspec.json.decode(raw, type=SessionState)
    except msgspec.DecodeError:
        return None  # a foreign or corrupt file: treat as no session; clean still works by label


def write_state(root: str | os.PathLike[str], state: SessionState) -> None:
    """Write `state` atomically."""
    target = state_path(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    stamped = msgspec.structs.replace(state, owner_pid=os.getpid(), updated_at=time.time())
    fd, tmp = tempfile.mkstemp(prefix=".state.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(msgspec.json.format(msgspec.json.encode(stamped), indent=2))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_state(root: str | os.PathLike[str]) -> bool:
    """Remove the state file; return whether there was one."""
    try:
        state_path(root).unlink()
    except FileNotFoundError:
        return False
    return True
