"""`Environment`: one project's test environment, and the only writer of its session.

It owns what its operations share: the loaded configuration, the session (what the state file
says runs), the engine, the mock host this process serves, the warm pytest interpreters, the
recording and the lock. Its methods are the lifecycle's verbs (init, build, up, clean, status,
logs, mock_requests; serve_run and begin_recording for a run, which `serving.RunServing` prepares
through them), each a short body over a module that takes frozen inputs and returns an outcome
(`Given → Observed → SetupPlan → Outcome`, `Removal → CleanResult`, a reset's bookkeeping) that
the environment alone persists (tests/unit/lifecycle/test_environment_owns_the_session.py).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, find_config
from preflight_sdk.core.errors import ConfigError, PreflightError, StateError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.lifecycle import (
    BuildResult,
    CleanResult,
    InitResult,
    LogLine,
    LogsResult,
    ServiceSetup,
    SetupResult,
    StatusResult,
)
from preflight_sdk.core.results.mocks import MockRequestsResult
from preflight_sdk.core.run_request import RunRequest

from .mockhost.recording import Recordings
from .session.engine_choice import EngineSlot, engine_record
from .session.loading import Fingerprint, Known, WatchedFiles, mtime, read_project
from .session.state import SessionState, read_state_checked, remove_state, state_path, write_state

if TYPE_CHECKING:
    from preflight_sdk.config.engine_target import EngineTarget
    from preflight_sdk.engine.base import ContainerInfo, Engine
    from preflight_sdk.mocks import MockHost

    from .setup.execute import Outcome
    from .setup.facts import Given

__all__ = ["Closable", "Environment"]


class Closable(Protocol):
    """What the environment keeps of the warm pytest servers (the runners' `WarmPytest`): a way to stop them."""

    def close(self) -> None: ...


class Environment:
    """One project's environment (one per `Project`): its session, engine, mocks and lock."""

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
        self._engines = EngineSlot(engine, target)
        # fast_acquire: a free lock is taken without a trip through the event loop (every operation
        # takes it; its awaits inside give other tasks their turn).
        self.lock = anyio.Lock(fast_acquire=True)
        self.lock_wait = 120.0  # seconds to wait for another process changing the same checkout
        self._loaded: LoadedConfig | None = None
        self._session: SessionState | None = None
        self._mocks: MockHost | None = None  # the mock host this process serves, once it serves one
        self._pytest_servers: Closable | None = None  # pytest kept warm for the next run
        self._stale = False  # the file changed while an environment of the old one runs
        self._owns_environment = False  # this object's setup started what is running
        self._state_problem: str | None = None  # why `.preflight/state.json` could not be used
        self._files = WatchedFiles(self.path, config_file)
        self.recordings = Recordings(self._serve_mocks_here)  # the mocks recording now, and what ended
        self._loaded_fingerprint: Fingerprint = ()
        self._state_mark: int | None = None

    # -- what it holds (read-only: only its own verbs change it) -------------------------------

    @property
    def loaded(self) -> LoadedConfig | None:
        """The configuration as last loaded (None before the first operation)."""
        return self._loaded

    @property
    def session(self) -> SessionState | None:
        """The session as this process last read or wrote it."""
        return self._session

    @property
    def mocks(self) -> MockHost | None:
        """The mock host this process serves (None: none, or another process serves them)."""
        return self._mocks

    @property
    def pytest_servers(self) -> Closable | None:
        """The pytest interpreters kept warm for the next run, if any."""
        return self._pytest_servers

    @property
    def stale(self) -> bool:
        """Whether e2e.yaml changed while the environment of its previous version runs."""
        return self._stale

    @property
    def owns_environment(self) -> bool:
        """Whether this object's setup started what runs (so leaving `async with` cleans it)."""
        return self._owns_environment

    @property
    def state_problem(self) -> str | None:
        """Why `.preflight/state.json` could not be used, if it could not."""
        return self._state_problem

    # -- engine ------------------------------------------------------------------------------

    @property
    def caller_target(self) -> EngineTarget | None:
        """The engine the caller named (CLI flags, `Project.open(engine_host=...)`), if any."""
        return self._engines.override

    @property
    def owns_engine(self) -> bool:
        """Whether it chose its engine (not a test's fake): only then do a kept environment's mocks
        move to a detached host when this process exits."""
        return self._engines.owned

    @property
    def engine(self) -> Engine:
        """The container engine, made on first use (again when e2e.yaml names another)."""
        return self._engines.get(self._loaded, self._session)

    def engine_target(self) -> EngineTarget:
        """The engine to use: the caller's, else e2e.yaml's `engine:` (see `session/engine_choice.py`)."""
        return self._engines.target(self._loaded, self._session)

    def engine_record(self) -> dict[str, str | None]:
        """The session fields naming the engine in use (`engine_host`, `engine_context`)."""
        return engine_record(self.engine_target())

    # -- configuration and session -----------------------------------------------------------

    @property
    def state_root(self) -> str:
        """Where this environment's `.preflight/state.json` lives (a shard's own folder, else the root)."""
        if self._loaded is not None:
            return self._loaded.state_root
        root = str(self.root)
        return os.path.join(root, ".preflight", "shards", self.shard) if self.shard else root

    @property
    def root(self) -> Path:
        """The directory of e2e.yaml (where `.preflight/` lives)."""
        if self._loaded is not None:
            return Path(self._loaded.root)
        try:
            return find_config(self.path, self.config_file).parent
        except ConfigError:
            return self.path if self.path.is_dir() else self.path.parent

    def require_loaded(self) -> LoadedConfig:
        """Return the loaded configuration (call `ensure_loaded` first)."""
        if self._loaded is None:
            raise StateError(
                "the project is not initialized", code="SESSION_NOT_FOUND", hint="call `init` first"
            )
        return self._loaded

    def require_session(self) -> SessionState:
        """Return the session (call `ensure_loaded` first)."""
        if self._session is None:
            raise StateError("the project has no session", code="SESSION_NOT_FOUND", hint="call `init` first")
        return self._session

    async def load(self, *, persist: bool = True) -> tuple[LoadedConfig, bool]:
        """Load (or reload) the configuration; return it and whether it differs from before.

        An unchanged file keeps the session (also one found in `.preflight/state.json` from an
        earlier process). A changed file starts a new session, except while the environment is
        running: then the running session is kept and `stale` is set, so `init` can refuse
        (`INVALID_STATE`, clean first) while `status`, `logs` and `clean` still work. With
        `persist=False` (read-only operations) a new session is kept in memory only.
        """
        known = Known(
            self._loaded, self._loaded_fingerprint, self._session, self._state_mark, self._state_problem
        )
        reading = await read_project(self._files, self.shard, known, persist=persist)
        self._loaded_fingerprint, self._state_mark = reading.fingerprint, reading.state_mark
        self._state_problem, self._stale = reading.state_problem, reading.stale
        if reading.save:
            await self._save(reading.session, root=reading.loaded.state_root)
        self._session, self._loaded = reading.session, reading.loaded
        return reading.loaded, reading.changed

    async def ensure_loaded(self, *, persist: bool = True) -> LoadedConfig:
        """Load the configuration at the start of an operation, every time: a long-lived Project sees
        an edited e2e.yaml and a session another process changed (a few `stat` calls when nothing
        did). Read-only operations pass `persist=False`: they never write the state file."""
        loaded, _ = await self.load(persist=persist)
        return loaded

    async def _save(self, session: SessionState, *, root: str | None = None) -> SessionState:
        """Keep `session` in memory and in `.preflight/state.json`: the one place either is written."""
        self._session = session
        target = root or self.state_root
        await anyio.to_thread.run_sync(write_state, target, session)
        self._state_mark = await anyio.to_thread.run_sync(mtime, state_path(target))
        return session

    async def _transition(self, **changes: Any) -> SessionState:
        """Persist a change of the session (`state=`, `network=`, `containers=`…)."""
        return await self._save(msgspec.structs.replace(self.require_session(), **changes))

    # -- the lifecycle's verbs -----------------------------------------------------------------

    async def init(self) -> InitResult:
        """Load and validate e2e.yaml and open (or resume) the session (see `Project.init`)."""
        from .session.init import describe

        loaded, changed = await self.load()
        session = self.require_session()
        if self._stale:
            raise StateError(
                "e2e.yaml changed while the environment of the previous version is running",
                hint="call `clean` first (it removes the running containers), then `init` again",
                details={"configPath": loaded.path, "sessionId": session.session_id, "state": session.state},
            )
        return describe(loaded, session.session_id, session.state, reloaded=changed)

    async def build(
        self, *, no_cache: bool, service: str | None, pull: bool, reporter: Reporter
    ) -> BuildResult:
        """Build the project's images (see `Project.build`) and note them in the session."""
        from .images.build import build_services, built

        loaded = await self.ensure_loaded()
        result = await build_services(
            self.engine, loaded, service, no_cache=no_cache, pull=pull, reporter=reporter
        )
        await self._save(built(self.require_session(), loaded, result, service=service))
        return result

    async def up(
        self,
        *,
        build: bool,
        fresh: bool,
        timeout: str | None,
        reporter: Reporter,
        stage: bool = False,
        reset: bool = False,
    ) -> SetupResult:
        """Make the running environment match the project's files, doing only what changed.

        `build`: also build missing images (setup alone reports NOT_BUILT); `fresh`: remove it first
        and rebuild without cache; `stage`: a stage of `run` (its end is a step); `reset`: a run
        follows, so a served environment is reset first as each `reset:` says (`setup/reset.py`).
        """
        from .setup import up as steps

        reporter = steps.Stage(reporter) if stage else reporter
        loaded = await self.ensure_loaded()
        if fresh:
            reporter.step("fresh: removing the environment and rebuilding from nothing", status="started")
            await self.clean(force=True)
            loaded = await self.ensure_loaded()
        given = self._given(loaded)
        observed = await steps.observe(given)
        builds = steps.plan_builds(observed, build=build, fresh=fresh)
        beside = steps.resets_beside_builds(observed, builds) if reset and builds else frozenset()
        if builds:
            try:
                observed = await steps.build_planned(
                    given, observed, builds, beside, fresh=fresh, reporter=reporter
                )
            except PreflightError as exc:  # a reset killed at its timeout: recreated by the next run
                if beside:
                    await self._save(steps.recreate_next(self.require_session(), exc))
                raise
            session = await self._save(steps.images_built(observed.session, loaded, builds))
            observed = msgspec.structs.replace(observed, session=session)
        pulls = steps.plan_pulls(observed)
        if pulls:
            observed = await steps.pull_planned(given.engine, observed, pulls, reporter=reporter)
        plan = steps.plan_setup(observed, builds, reset=reset, done=beside)
        outcome = await steps.carry_out(plan, observed, given, timeout=timeout, reporter=reporter)
        await self._keep(outcome)
        self._stale = False
        self._owns_environment = self._owns_environment or plan.fresh
        await anyio.to_thread.run_sync(steps.remember_inputs, loaded, outcome.stamped)
        assert outcome.result is not None
        return outcome.result

    def _given(self, loaded: LoadedConfig) -> Given:
        """What a setup is given, read once from this environment."""
        from .setup.facts import Given

        return Given(
            loaded=loaded,
            session=self.require_session(),
            engine=self.engine,
            target=self.engine_target(),
            mocks=self._mocks,
            stale=self._stale,
            engine_fields=self.engine_record(),
            keep_after_exit=self._keep_after_exit if self.owns_engine else None,
        )

    async def _keep(self, outcome: Outcome) -> None:
        """Persist a setup's outcome, whatever it was; then raise its error, if it ended with one."""
        from .setup.reset_exec import recreate_next

        with anyio.CancelScope(shield=True):
            self._mocks = outcome.mocks
            try:
                # A reset killed at its timeout leaves its service for the next run to recreate.
                await self._save(recreate_next(outcome.session, outcome.error))
            except OSError:
                if outcome.error is None:
                    raise
        if outcome.error is not None:
            raise outcome.error

    def _keep_after_exit(self, host: MockHost) -> None:
        """At this interpreter's exit, move `host`'s mocks to a detached host if the environment is kept."""
        from .mockhost.host import keep_after_exit

        root, session_id = self.state_root, self.require_session().session_id

        def record(pid: int) -> None:  # at exit, after the hand-off: where later processes look
            state, _ = read_state_checked(root)
            if state is not None and state.session_id == session_id:
                mocks = [msgspec.structs.replace(m, pid=pid) for m in state.mocks]
                write_state(root, msgspec.structs.replace(state, mocks=mocks))

        keep_after_exit(host, root, session_id, record)

    async def ensure_mocks(self, reporter: Reporter) -> None:
        """Make sure every configured mock of the project is served (here or by another process)."""
        from .mockhost.host import mock_records, mock_route, mocks_served, start_mock_host

        loaded, session = self.require_loaded(), self.require_session()
        if not loaded.config.mocks or (self._mocks is not None and self._mocks.running()):
            return
        if await mocks_served(loaded, session.mocks):
            return  # another process serves them
        reporter.step("mocks are not served any more: starting them in this process", scope="mocks")
        binds = list((await mock_route(self.engine, self.engine_target())).binds) if loaded.services else []
        if self._mocks is not None:
            host, self._mocks = self._mocks, None
            await host.stop()
        self._mocks = await start_mock_host(
            loaded,
            session.session_id,
            binds=binds,
            ports={r.name: r.port for r in session.mocks},
            keep_after_exit=self._keep_after_exit if self.owns_engine else None,
        )
        await self._transition(mocks=mock_records(self._mocks, loaded))

    async def begin_recording(self, request: RunRequest, *, owner: str, reporter: Reporter) -> None:
        """Record the mocks `request.record` names for the run `owner` (or `setup`), from their upstreams."""
        from .mockhost.recording import RecordRequest

        recording = RecordRequest(upstreams=dict(request.record)) if request.record else None
        await self.recordings.begin(self.require_loaded(), recording, owner=owner, reporter=reporter)

    async def _serve_mocks_here(self, reporter: Reporter) -> MockHost:
        """This process's mock host, taking the mocks over from a detached host when one serves them."""
        from .mockhost.host import stop_detached_mocks
        from .mockhost.recording import not_served_here

        if self._mocks is not None and self._mocks.running():
            return self._mocks
        session = self.require_session()
        await stop_detached_mocks(session.mocks, self.state_root)
        await self.ensure_mocks(reporter)
        if self._mocks is None or not self._mocks.running():
            raise not_served_here(session)
        return self._mocks

    async def reset_mocks(self) -> None:
        """Start the mocks' journals, sequences and counters over, wherever they are served."""
        from .mockhost.host import reset_served_mocks

        await reset_served_mocks(self._mocks, self._session.mocks if self._session else [])

    async def serve_run(self, run_id: str, setup: SetupResult) -> SetupResult:
        """Record that run `run_id` uses the environment; return `setup` saying who set it up (`setup/reset.py`)."""
        from .setup.reset import served_by

        session, served = served_by(self.require_session(), run_id, setup)
        await self._save(session)
        return served

    # -- what a test run keeps --------------------------------------------------------------------

    def keep_pytest_warm(self, make: type[Closable]) -> None:
        """Keep pytest interpreters warm for the next run (made with `make` unless some already are)."""
        if self._pytest_servers is None:
            self._pytest_servers = make()

    async def stop_pytest_servers(self) -> None:
        """Stop the warm pytest interpreters (their running children are killed)."""
        servers, self._pytest_servers = self._pytest_servers, None
        if servers is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(servers.close)

    # -- ending and reading it -------------------------------------------------------------------

    async def clean(self, *, force: bool, images: bool = False) -> CleanResult:
        """Remove the project's environment, found by label (see `Project.clean`)."""
        from .clean import Removal, clean_root, remove_environment, stopped

        root = await clean_root(self)
        loaded = self._loaded
        state_root = loaded.state_root if loaded is not None else root
        session = self._session or await anyio.to_thread.run_sync(lambda: read_state_checked(state_root)[0])
        recordings = await self.recordings.end_setup()  # written before the mocks stop
        host, self._mocks = self._mocks, None
        await self.stop_pytest_servers()
        given = Removal(root=root, loaded=loaded, session=session, known=self._session, host=host)
        result = await remove_environment(given, lambda: self.engine, force=force, images=images)
        removed = await anyio.to_thread.run_sync(remove_state, state_root)
        self._state_mark = None  # this process removed it: the next load keeps the session below
        if self._session is not None:
            self._session = None if loaded is None else stopped(self._session)
        self._owns_environment = False
        return msgspec.structs.replace(result, session_removed=removed, recordings=recordings)

    async def clean_on_exit(self) -> None:
        """Clean when leaving `async with Project.open(...)`, if this object started an environment."""
        if self._owns_environment:
            with anyio.CancelScope(shield=True):
                await self.clean(force=True)

    async def status(self) -> StatusResult:
        """What runs now, as Docker and `.preflight/state.json` say (see `Project.status`)."""
        from .status import status

        loaded = await self.ensure_loaded(persist=False)
        return await status(loaded, self.require_session(), self.engine, self._mocks, self._state_problem)

    async def service_now(self, service: str) -> tuple[str, ServiceSetup | None]:
        """The lifecycle state, and `service`'s container when it runs now (else None)."""
        from .status import service_now

        return await service_now(await self.ensure_loaded(persist=False), self._session, self.engine, service)

    async def logs(
        self, *, container: str, lines: int, since: str | None, follow_for: float | None, reporter: Reporter
    ) -> LogsResult:
        """A container's recent output (see `Project.logs`)."""
        from .logs import logs

        info = await self._container(container)
        return await logs(
            self.engine, info, self._redactor(), container=container, lines=lines, since=since,
            follow_for=follow_for, reporter=reporter,
        )  # fmt: skip

    async def follow(self, container: str, *, since: datetime | None = None) -> AsyncIterator[LogLine]:
        """Yield a container's log lines (since `since`, else from its start), then each new one, redacted."""
        from .logs import follow

        info = await self._container(container)
        async for line in follow(self.engine, info.id, self._redactor(), since=since):
            yield line

    async def _container(self, name: str) -> ContainerInfo:
        """The container of a service (by its name or its configured container name)."""
        from .logs import find_container

        loaded = await self.ensure_loaded(persist=False)
        return await find_container(self.engine, loaded, self.require_session(), name)

    async def mock_requests(
        self, *, mock_name: str | None, since: str | None, clear: bool
    ) -> MockRequestsResult:
        """What the mocks received (see `Project.mock_requests`)."""
        from .mockhost.traffic import mock_requests

        loaded = await self.ensure_loaded(persist=False)
        session = self.require_session()
        return await mock_requests(
            loaded, session, self._mocks, mock_name=mock_name, since=since, clear=clear
        )

    def _redactor(self) -> Redactor:
        return self._loaded.redactor if self._loaded is not None else DEFAULT
