"""Process groups a run started, recorded where any process finds them: `.preflight/procs/`.

Every command a suite runs (a shell suite, a cold pytest) and every warm pytest server and its
children run in a session of their own, so killing the group stops whatever they left running.
The process that started them does that itself when they end, time out or are cancelled; but
when it is killed (SIGKILL of the CLI, of `watch`, of the MCP server) the groups would go on. So
each group is written down while it runs, one small file per group, and `clean`, `cancel_run` and
the next run stop the groups whose owner is gone (`clean` stops them all).

A record names the group's owner and the start time of its leader, so a pid reused by an
unrelated process is never signalled. A record is written once the group exists, so an owner
killed in the moment between the two would leave the group unknown: each group's environment
therefore also carries a mark (`mark()`: the project and the owner), and stopping looks for
marked processes too.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import msgspec

from preflight_sdk.core import decoding

__all__ = ["MARK", "ProcessGroups", "stop_groups"]

_FOLDER = ("procs",)
MARK = "PREFLIGHT_PROCESS_GROUP_OF"  # `<owner pid>:<owner start time>:<project state root>`


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    pgid: int
    owner: int  # the process that started the group (and forgets it when it ends)
    owner_started: int | None  # its start time (clock ticks since boot), against pid reuse
    started: int | None  # the group leader's start time
    kind: str  # `suite`, `warm-pytest`, `pytest-run`


def _folder(state_root: str | os.PathLike[str]) -> Path:
    return Path(state_root).joinpath(".preflight", *_FOLDER)


def _start_time(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (None when it is gone or unreadable)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from its closing one.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22: starttime
    except (IndexError, ValueError):
        return None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ProcessGroups:
    """The record of one project's running process groups (blocking calls: small files)."""

    def __init__(self, state_root: str | os.PathLike[str]) -> None:
        self.folder = _folder(state_root)
        self.root = str(Path(state_root).resolve())

    def mark(self) -> dict[str, str]:
        """The environment entry every group of this project started by this process carries."""
        me = os.getpid()
        return {MARK: f"{me}:{_start_time(me) or 0}:{self.root}"}

    def record(self, pgid: int, kind: str) -> None:
        """Note that group `pgid` runs for this process (best effort: a failing disk only loses the note)."""
        me = os.getpid()
        record = _Record(
            pgid=pgid, owner=me, owner_started=_start_time(me), started=_start_time(pgid), kind=kind
        )
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{pgid}.json"
            temporary = path.with_suffix(".tmp")
            temporary.write_bytes(msgspec.json.encode(record))
            temporary.replace(path)

    def forget(self, pgid: int) -> None:
        """Note that group `pgid` ended (its owner killed it or it finished)."""
        with contextlib.suppress(OSError):
            (self.folder / f"{pgid}.json").unlink(missing_ok=True)


def stop_groups(state_root: str | os.PathLike[str], *, orphans_only: bool) -> int:
    """SIGKILL the recorded process groups of the project at `state_root`; return how many were running.

    `orphans_only`: only those whose owner is gone (a live owner stops its own). Blocking.
    """
    folder = _folder(state_root)
    try:
        files = sorted(folder.glob("*.json"))
    except OSError:
        return 0
    stopped = 0
    for path in files:
        try:
            record = decoding.decode(path.read_bytes(), _Record)
        except (OSError, msgspec.DecodeError):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
            continue
        if orphans_only and _owner_alive(record):
            continue
        leader = _start_time(record.pgid)
        reused = leader is not None and record.started is not None and leader != record.started
        if not reused and _group_alive(record.pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(record.pgid, signal.SIGKILL)
                stopped += 1
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
    return stopped + _stop_marked(str(Path(state_root).resolve()), orphans_only=orphans_only)


def _stop_marked(root: str, *, orphans_only: bool) -> int:
    """SIGKILL the groups of processes marked as this project's (see `mark`) that no record named."""
    mine = os.getpgid(0)
    groups: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        prefix = f"{MARK}=".encode()
        value = next((v[len(prefix) :] for v in environ.split(b"\0") if v.startswith(prefix)), None)
        if value is None:
            continue
        owner, owner_started, marked_root = value.decode(errors="replace").split(":", 2)
        if marked_root != root or not owner.isdigit():
            continue
        if orphans_only and _owner_alive(
            _Record(pgid=0, owner=int(owner), owner_started=int(owner_started) or None, started=None, kind="")
        ):
            continue
        with contextlib.suppress(OSError):
            groups.add(os.getpgid(int(entry.name)))
    stopped = 0
    for pgid in groups - {mine}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
            stopped += 1
    return stopped


def _owner_alive(record: _Record) -> bool:
    started = _start_time(record.owner)
    if started is None:
        return False
    if record.owner_started is not None and started != record.owner_started:
        return False  # the pid now names another process
    try:
        state = Path(f"/proc/{record.owner}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"  # a zombie has ended
