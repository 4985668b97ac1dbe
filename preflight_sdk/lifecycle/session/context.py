"""The state a `Project` shares with the modules that do its work.

`Project` stays a thin facade: each operation lives in its own module and receives this context,
which holds the loaded configuration, the session, the engine, the mock host and the lock.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, find_config, load_config
from preflight_sdk.config.loader import config_candidates
from preflight_sdk.core.errors import ConfigError, StateError

from .engine_choice import choose_engine, engine_record
from .shard_copy import shard_copy
from .state import SessionState, read_state_checked, state_path, write_state

if TYPE_CHECKING:
    from preflight_sdk.config.engine_target import EngineTarget
    from preflight_sdk.engine.base import Engine

__all__ = ["Closable", "ProjectContext"]


class Closable(Protocol):
    """What the context keeps of the warm pytest servers (the runners' `WarmPytest`): a way to stop them."""

    def close(self) -> None: ...


class ProjectContext:
    """Everything one project's operations share (one per `Project`)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        config_file: str | None,
        engine: Engine | None,
        target: EngineTarget | None = None,
        *,
        shard: str | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.shard = shard  # a shard's own copy of the environment (see `shard_copy`)
        self.config_file = config_file
        self._engine = engine
        self._target_override = target  # from the caller (CLI flags, a shard): wins over e2e.yaml
        self._engine_target: EngineTarget | None = None  # set when this context chose the engine itself
        self.loaded: LoadedConfig | None = None
        self.session: SessionState | None = None
        # fast_acquire: a free lock is taken without a trip through the event loop (every operation
        # takes it; its awaits inside give other tasks their turn).
        self.lock = anyio.Lock(fast_acquire=True)
        self.mocks: Any = None  # preflight_sdk.mocks.MockHost once setup started mocks
        # The mocks recording now (`lifecycle.mockhost.recording.ActiveRecording`), for the run or setup
        # that began it; and what a recording setup left, ended by the next run (for its report).
        self.recording: Any = None
        self.ended_recordings: list[Any] = []
        # pytest interpreters kept warm for the next run, once a run kept its environment
        self.pytest_servers: Closable | None = None
        self.stale = False  # the file changed while an environment of the old one runs
        self.owns_environment = False  # this object's setup started what is running
        self.lock_wait = 120.0  # seconds to wait for another process changing the same checkout
        self._loaded_fingerprint: tuple[tuple[str, int, int], ...] = ()
        self._state_mark: int | None = None
        self.state_problem: str | None = None  # why `.preflight/state.json` could not be used
        self._watched: tuple[LoadedConfig, tuple[str, ...], str] | None = None

    # -- engine ------------------------------------------------------------------------------

    @property
    def caller_target(self) -> EngineTarget | None:
        """The engine the caller named (CLI flags, `Project.open(engine_host=...)`), if any."""
        return self._target_override

    @property
    def owns_engine(self) -> bool:
        """Whether this context chose its engine (not one a caller handed in, such as a test's fake).

        Only then can a kept environment's containers outlive this process, so only then do its
        mocks move to a detached host when it exits.
        """
        return self._engine is None or self._engine_target is not None

    @property
    def engine(self) -> Engine:
        """The container engine (python-on-whales), created on first use.

        The engine is `engine_target()`'s; it is made again when that changes (e2e.yaml edited).
        An engine given to the constructor (the fake in unit tests) is always the one used.
        """
        if self._engine is not None and self._engine_target is None:
            return self._engine
        target = self.engine_target()
        if self._engine is None or target != self._engine_target:
            from preflight_sdk.engine.target import create_engine  # lazy: keeps `import preflight_sdk` light

            self._engine = create_engine(target)
            self._engine_target = target
        return self._engine

    def engine_kind(self) -> str:
        """`docker` or `podman`: `PREFLIGHT_ENGINE`, else e2e.yaml's `engine:` (`CONFIG_INVALID` for another name)."""
        return self.engine_target().kind

    def engine_target(self) -> EngineTarget:
        """The engine to use: the caller's host/context, else e2e.yaml's `engine:`; `PREFLIGHT_ENGINE` sets the kind.

        Neither saying a host or context leaves `DOCKER_HOST` / `DOCKER_CONTEXT` to the docker CLI.
        """
        return choose_engine(self.loaded, self._target_override, self.session)

    def engine_record(self) -> dict[str, str | None]:
        """The session fields naming the engine in use (`engine_host`, `engine_context`), DOCKER_HOST
        and DOCKER_CONTEXT included; both None for this machine's default engine."""
        return engine_record(self.engine_target())

    # -- configuration and session -----------------------------------------------------------

    @property
    def state_root(self) -> str:
        """Where this context's `.preflight/state.json` lives (a shard's own folder, else the root)."""
        if self.loaded is not None:
            return self.loaded.state_root
        root = str(self.root)
        return os.path.join(root, ".preflight", "shards", self.shard) if self.shard else root

    @property
    def root(self) -> Path:
        """The directory of e2e.yaml (where `.preflight/` lives)."""
        if self.loaded is not None:
            return Path(self.loaded.root)
        try:
            return find_config(self.path, self.config_file).parent
        except ConfigError:
            return self.path if self.path.is_dir() else self.path.parent

    def require_loaded(self) -> LoadedConfig:
        """Return the loaded configuration (call `ensure_loaded` first)."""
        if self.loaded is None:
            raise StateError(
                "the project is not initialized", code="SESSION_NOT_FOUND", hint="call `init` first"
            )
        return self.loaded

    def require_session(self) -> SessionState:
        """Return the session (call `ensure_loaded` first)."""
        if self.session is None:
            raise StateError("the project has no session", code="SESSION_NOT_FOUND", hint="call `init` first")
        return self.session

    async def load(self, *, persist: bool = True) -> tuple[LoadedConfig, bool]:
        """Load (or reload) the configuration; return it and whether it differs from before.

        An unchanged file keeps the session (also one found in `.preflight/state.json` from an
        earlier process). A changed file starts a new session, except while the environment is
        running: then the running session is kept and `stale` is set, so `init` can refuse
        (`INVALID_STATE`, clean first) while `status`, `logs` and `clean` still work. With
        `persist=False` (read-only operations) a new session is kept in memory only.
        """
        # The common case, nothing changed on disk, is a handful of `stat` calls on the project's
        # own files (microseconds): done here, as a worker-thread round trip would cost more.
        fingerprint, state_mark = self._marks()
        if self.loaded is not None and fingerprint == self._loaded_fingerprint:
            loaded = self.loaded  # nothing it was read from changed: no need to parse it again
        else:
            loaded = await anyio.to_thread.run_sync(load_config, self.path, self.config_file)
            if self.shard is not None:
                loaded = shard_copy(loaded, self.shard)
            self._loaded_fingerprint = await anyio.to_thread.run_sync(self._fingerprint, loaded)
            state_mark = await anyio.to_thread.run_sync(_mtime, state_path(loaded.state_root))
        changed = self.loaded is not None and self.loaded.digest != loaded.digest
        if self.session is None or state_mark != self._state_mark:
            # First load, or another process changed the session (a CLI clean after the MCP setup).
            self.session, self.state_problem = await anyio.to_thread.run_sync(
                read_state_checked, loaded.state_root
            )
            self._state_mark = state_mark
        session = self.session
        self.stale = False
        if session is not None and session.config_digest != loaded.digest:
            if session.state == "running":
                self.stale = True
            else:
                session = None
                changed = True
        if session is None:
            session = SessionState(
                project=loaded.project_name,
                session_id=secrets.token_hex(3),
                state="initialized",
                config_path=loaded.path,
                config_digest=loaded.digest,
            )
            if persist:
                await self.save(session, root=loaded.state_root)
        elif persist and state_mark is None and self.state_problem is None:
            # A session kept only in memory so far (read-only calls, or this process's clean):
            # a changing operation writes it, so other processes and the mocks' watch see it.
            await self.save(session, root=loaded.state_root)
        self.session = session
        self.loaded = loaded
        return loaded, changed

    async def ensure_loaded(self, *, persist: bool = True) -> LoadedConfig:
        """Load the configuration at the start of an operation (operations initialize on first use).

        Checked again every time, not only once: a long-lived Project (the MCP server, a notebook
        kernel) must see an edited e2e.yaml and a session that another process set up or cleaned.
        When nothing changed this costs a few `stat` calls in one worker-thread trip. Read-only
        operations pass `persist=False`: they never write `.preflight/state.json`.
        """
        loaded, _ = await self.load(persist=persist)
        return loaded

    async def save(self, session: SessionState, *, root: str | None = None) -> None:
        """Keep `session` in memory and in `.preflight/state.json`."""
        self.session = session
        target = root or self.state_root
        await anyio.to_thread.run_sync(write_state, target, session)
        self._state_mark = await anyio.to_thread.run_sync(_mtime, state_path(target))

    def state_file_removed(self) -> None:
        """Note that this process removed the state file, so the next load keeps the in-memory
        session (`stopped`, with its images) instead of taking the absence for another process's work."""
        self._state_mark = None

    def _marks(self) -> tuple[tuple[tuple[str, int, int], ...], int | None]:
        """The configuration's fingerprint and the state file's mtime."""
        if self.loaded is None:
            return (), None
        files, state_file = self._watched_files(self.loaded)
        return tuple(_stat_mark(path) for path in files), _mtime(state_file)

    def _fingerprint(self, loaded: LoadedConfig | None = None) -> tuple[tuple[str, int, int], ...]:
        """Sizes and modification times of every file a load reads or chooses between."""
        current = loaded or self.loaded
        if current is None:
            return ()
        return tuple(_stat_mark(path) for path in self._watched_files(current)[0])

    def _watched_files(self, loaded: LoadedConfig) -> tuple[tuple[str, ...], str]:
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

    async def stop_pytest_servers(self) -> None:
        """Stop the warm pytest interpreters (their running children are killed)."""
        servers, self.pytest_servers = self.pytest_servers, None
        if servers is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(servers.close)

    async def transition(self, **changes: Any) -> SessionState:
        """Persist a change of the session (`state=`, `network=`, `containers=`…)."""
        session = msgspec.structs.replace(self.require_session(), **changes)
        await self.save(session)
        return session


def _stat_mark(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, stat.st_mtime_ns, stat.st_size)


def _mtime(path: str | os.PathLike[str]) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
