"""Find and stop every process a verified server started, by process group and by marker.

The server runs in its own session, so its process group id is its pid: one `killpg` reaches it
and every descendant that stayed in the group. A descendant can leave the group (`setsid`, a
daemonising wrapper), but it keeps the environment it was given, so each server also gets a
unique marker variable (`PREFLIGHT_VERIFY_MARKER=<token>`) and `/proc/<pid>/environ` finds the
stragglers. Scanning needs Linux's `/proc`; elsewhere only the group is signalled.

These are short blocking reads of small files; callers run them through `anyio.to_thread`.
"""

from __future__ import annotations

import os
import signal
from contextlib import suppress
from pathlib import Path

__all__ = ["MARKER_VARIABLE", "kill_pids", "living_processes", "signal_group"]

MARKER_VARIABLE = "PREFLIGHT_VERIFY_MARKER"
"""The environment variable that tags every process of one verification."""

_PROC = Path("/proc")


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send `sig` to the process group `pgid`; return False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its credentials (setuid); it is out of reach, not gone.
        return True
    return True


def kill_pids(pids: list[int], sig: signal.Signals) -> None:
    """Send `sig` to each pid, ignoring those that are already gone."""
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def living_processes(*, pgid: int | None, marker: str | None) -> list[int]:
    """Return the pids of live (non-zombie) processes in group `pgid` or carrying `marker`.

    Args:
        pgid: a process group id to match, or None.
        marker: the value of `MARKER_VARIABLE` to match in a process's environment, or None.
    """
    if not _PROC.is_dir():
        return []
    own = os.getpid()
    needle = f"{MARKER_VARIABLE}={marker}".encode() if marker else None
    found: list[int] = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == own:
            continue
        state = _stat(entry)
        if state is None or state[0] in {"Z", "X"}:
            continue
        if pgid is not None and state[1] == pgid:
            found.append(pid)
            continue
        if needle is not None and _has_marker(entry, needle):
            found.append(pid)
    return sorted(found)


def _stat(entry: Path) -> tuple[str, int] | None:
    """Return (state, pgrp) from `/proc/<pid>/stat`, or None if the process vanished."""
    try:
        text = (entry / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces or parentheses.
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 3:
        return None
    return fields[0], int(fields[2])


def _has_marker(entry: Path, needle: bytes) -> bool:
    try:
        environ = (entry / "environ").read_bytes()
    except OSError:  # another user's process, or gone
        return False
    return needle in environ.split(b"\0")
