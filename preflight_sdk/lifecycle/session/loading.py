"""Loading a project: its configuration and session, read again only when a file changed.

A long-lived environment (the MCP server, a notebook kernel) checks at every operation whether
e2e.yaml, the files it reads or the state file changed (another process set up or cleaned).
Nothing changed is the common case: it costs a `stat` of each file, on paths built once per load.
`read_project` returns what a load found, as a value; the environment keeps it (and writes a new
session to the state file when the load says so).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import anyio

from preflight_sdk.config import LoadedConfig, load_config
from preflight_sdk.config.loader import config_candidates

from .shard_copy import shard_copy
from .state import SessionState, read_state_checked, state_path

__all__ = ["Fingerprint", "Known", "Reading", "WatchedFiles", "mtime", "read_project"]

Fingerprint = tuple[tuple[str, int, int], ...]


class WatchedFiles:
    """The files of one project checkout that a load depends on, and the marks that tell a change."""

    def __init__(self, path: Path, config_file: str | None) -> None:
        self.path = path
        self.config_file = config_file
        self._watched: tuple[LoadedConfig, tuple[str, ...], str] | None = None

    def marks(self, loaded: LoadedConfig | None) -> tuple[Fingerprint, int | None]:
        """The configuration's fingerprint and the state file's mtime (nothing before a first load)."""
        if loaded is None:
            return (), None
        files, state_file = self._files(loaded)
        return tuple(_stat_mark(path) for path in files), mtime(state_file)

    def fingerprint(self, loaded: LoadedConfig) -> Fingerprint:
        """Sizes and modification times of every file a load reads or chooses between (blocking)."""
        return tuple(_stat_mark(path) for path in self._files(loaded)[0])

    def _files(self, loaded: LoadedConfig) -> tuple[tuple[str, ...], str]:
        """The candidate config files (e2e.yaml, e2e.yml: one appearing or vanishing switches
        files), the one loaded, `.env`, the compose files it reads and the YAML suite files; and
        the state file. Computed once per load: every operation stats them, so no path is built
        on that path."""
        if self._watched is None or self._watched[0] is not loaded:
            files = [os.path.abspath(path) for path in config_candidates(self.path, self.config_file)]
            files += [loaded.path, os.path.join(loaded.root, ".env"), *loaded.sources]
            files += [str(loaded.resolve(s.file)) for s in loaded.suites if s.file and s.runner == "yaml"]
            self._watched = (loaded, tuple(dict.fromkeys(files)), str(state_path(loaded.state_root)))
        return self._watched[1], self._watched[2]


@dataclass(frozen=True)
class Known:
    """What an environment knew before this load: the configuration and the marks it was read at,
    the session and the state file's mark when it was read, and why that file was not usable."""

    loaded: LoadedConfig | None
    fingerprint: Fingerprint
    session: SessionState | None
    state_mark: int | None
    state_problem: str | None


@dataclass(frozen=True)
class Reading:
    """What a load found: the configuration, the session to keep, the marks it was read at, whether
    it `changed` from before, whether the session is `stale` (e2e.yaml changed while the environment
    of the old one runs), and whether the session must be written to the state file (`save`)."""

    loaded: LoadedConfig
    fingerprint: Fingerprint
    session: SessionState
    state_mark: int | None
    state_problem: str | None
    changed: bool
    stale: bool
    save: bool


async def read_project(files: WatchedFiles, shard: str | None, known: Known, *, persist: bool) -> Reading:
    """Load (or reload) the configuration and the session (see `Environment.load`)."""
    # The common case, nothing changed on disk, is a handful of `stat` calls on the project's
    # own files (microseconds): done here, as a worker-thread round trip would cost more.
    fingerprint, state_mark = files.marks(known.loaded)
    if known.loaded is not None and fingerprint == known.fingerprint:
        loaded = known.loaded  # nothing it was read from changed: no need to parse it again
    else:
        loaded = await anyio.to_thread.run_sync(load_config, files.path, files.config_file)
        if shard is not None:
            loaded = shard_copy(loaded, shard)
        fingerprint = await anyio.to_thread.run_sync(files.fingerprint, loaded)
        state_mark = await anyio.to_thread.run_sync(mtime, state_path(loaded.state_root))
    changed = known.loaded is not None and known.loaded.digest != loaded.digest
    session, problem = known.session, known.state_problem
    if session is None or state_mark != known.state_mark:
        # First load, or another process changed the session (a CLI clean after the MCP setup).
        session, problem = await anyio.to_thread.run_sync(read_state_checked, loaded.state_root)
    stale = False
    if session is not None and session.config_digest != loaded.digest:
        if session.state == "running":
            stale = True
        else:
            session, changed = None, True
    # A new session is written by a changing operation; so is one kept only in memory so far
    # (read-only calls, or this process's clean), so other processes and the mocks' watch see it.
    save = persist and (session is None or (state_mark is None and problem is None))
    if session is None:
        session = SessionState(
            project=loaded.project_name,
            session_id=secrets.token_hex(3),
            state="initialized",
            config_path=loaded.path,
            config_digest=loaded.digest,
        )
    return Reading(loaded, fingerprint, session, state_mark, problem, changed, stale, save)


def _stat_mark(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, stat.st_mtime_ns, stat.st_size)


def mtime(path: str | os.PathLike[str]) -> int | None:
    """The file's modification time in ns, None when it does not exist."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
