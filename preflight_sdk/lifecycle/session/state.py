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

from preflight_sdk.core import decoding
from preflight_sdk.core.disk import is_no_room, store_unavailable
from preflight_sdk.core.errors import PreflightError, StateError

__all__ = [
    "STATE_DIR",
    "ContainerRecord",
    "MockRecord",
    "SessionState",
    "broken_state_dir",
    "read_state",
    "read_state_checked",
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
    # The engine the environment runs on, when not this machine's default (a later process without
    # --engine-host/--context still finds it there).
    engine_host: str | None = None
    engine_context: str | None = None
    # What the kept environment served (docs/setup-plan.md, "Reset between runs"): the run that set
    # it up, how many runs it served since, and the run that used it since setup or its last reset
    # (None: it is as setup left it, so the next run needs no reset).
    set_up_by: str | None = None
    runs_served: int = 0
    served_by: str | None = None
    resets: int = 0
    # Services whose last reset did not finish (its command killed at its timeout): the next
    # setup recreates their containers instead of trusting them.
    recreate: list[str] = msgspec.field(default_factory=list)
    owner_pid: int = 0
    updated_at: float = 0.0
    version: int = 1


def state_path(root: str | os.PathLike[str]) -> Path:
    """Return the state file of the project rooted at `root`."""
    return Path(root) / STATE_DIR / "state.json"


def read_state(root: str | os.PathLike[str]) -> SessionState | None:
    """Return the persisted session, or None when there is none (or it cannot be read)."""
    return read_state_checked(root)[0]


def read_state_checked(root: str | os.PathLike[str]) -> tuple[SessionState | None, str | None]:
    """Return the persisted session and, when a state file exists but cannot be used, why not.

    A foreign or corrupt file is no session (clean still works by label), but the caller says so:
    silently starting a new session beside the old containers hides them.
    """
    path = state_path(root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if not path.parent.exists() and not path.parent.is_symlink():
            return None, None
        return None, f"{path} cannot be read ({exc.strerror or type(exc).__name__})"
    try:
        return decoding.decode(raw, SessionState), None
    except msgspec.DecodeError as exc:
        return None, f"{path} is not a valid state file ({exc}); the session was recovered from Docker labels"


def write_state(root: str | os.PathLike[str], state: SessionState) -> None:
    """Write `state` atomically.

    Raises:
        StateError: `INVALID_STATE` when `.preflight/` or its state file is not what it should
            be (a file where the folder belongs, a folder where the file belongs).
        InfrastructureError: `STORE_UNAVAILABLE` when its file system refuses the write (no space
            left, read-only).
    """
    target = state_path(root)
    stamped = msgspec.structs.replace(state, owner_pid=os.getpid(), updated_at=time.time())
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".state.", dir=target.parent)
    except OSError as exc:
        raise broken_state_dir(target, exc) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(msgspec.json.format(msgspec.json.encode(stamped), indent=2))
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise broken_state_dir(target, exc) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def broken_state_dir(path: Path, exc: OSError) -> PreflightError:
    """The error for a `.preflight/` entry that cannot be used: a file or folder in the way, or a
    file system that refuses the write (STORE_UNAVAILABLE: no space left, read-only)."""
    if is_no_room(exc):
        return store_unavailable(path, exc)
    return StateError(
        f"{path} cannot be written: {exc.strerror or exc}",
        hint=f"something else is in the way under {path.parent}: remove it (`clean` still removes "
        "the environment by label), then call again",
        details={"path": str(path)},
    )


def remove_state(root: str | os.PathLike[str]) -> bool:
    """Remove the state file; return whether there was one (a folder in its place is left)."""
    try:
        state_path(root).unlink()
    except OSError:
        return False
    return True
