"""`RunSupervisor`: starts runs, builds and setups as durable runs and answers for them.

Why a supervisor: a tool call must return before an MCP host cuts it (about 60 s), while a run
may take minutes. So the work runs in a task of its own (see `detached.py`), holding the
project's locks; the caller waits for it at most `wait` seconds and then gets the run as it
stands, with its runId. A caller cancelled while it waits (an MCP request cancelled, Ctrl-C)
cancels the run it started, which cleans up as before. Once the caller has its reply the run is
stopped only by `cancel_run`, from any process: the owner's heartbeat (every half second) writes
its progress to the store and reads back whether a cancel was asked for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core.errors import InputError, PreflightError
from preflight_sdk.core.progress import ProgressSink, Reporter
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.core.tracing import current_parent, new_span_id, new_trace_id
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.lifecycle.session.filelock import project_lock
from preflight_sdk.store import NewRun, RunStore, StoreError, StoreReplaced, StoreUnavailable, new_run_id
from preflight_sdk.suites.commands.warm_pytest import WarmPytest, warm_enabled
from preflight_sdk.suites.events import EventLog
from preflight_sdk.suites.given import NO_SUITES, GivenSuites
from preflight_sdk.suites.orchestrator import TestRunState, partial_result, run_suites, select_suites

from .affected.carry import resumed_order
from .affected.stage import ask_of, weigh
from .detached import Background
from .finish import finish_lifecycle, finish_test, unwrap_error
from .identity import config_hash, git_state, request_hash
from .live import LiveRun, Relay
from .preparation import RunPreparation
from .reading import result_of_row, snapshot_of
from .rebuild import rebuild_history
from .resume_values import carry_values
from .shard_plan import ShardSpec, parse_shards, split_suites
from .sharded_run import ShardedRunState, run_sharded

__all__ = ["HEARTBEAT", "RunSupervisor"]

HEARTBEAT = 0.5  # seconds between a live run's progress writes (and cancel checks)
SNAPSHOT_EVERY = 4  # heartbeats between two snapshots of the partial result (for other processes)


def now_text() -> str:
    """Now, as the store and results spell times (ISO 8601, UTC, milliseconds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RunSupervisor:
    """The runs of one project that this process owns, and its door to the project's store."""

    def __init__(self, ctx: ProjectContext, preparation: RunPreparation) -> None:
        self.ctx = ctx
        self.preparation = preparation  # what the environment does before and after a test run
        self.live: dict[str, LiveRun] = {}
        self._background = Background()
        self._store: RunStore | None = None
        self.warnings: list[str] = []

    # -- the store -------------------------------------------------------------------------------

    async def store(self) -> RunStore:
        """The project's store (the project must load once; a later edit does not move it).

        Opened here, so that a new store (an emptied or replaced file) first gets back the
        history its run folders hold.
        """
        if self._store is None:
            loaded = await self.ctx.ensure_loaded()
            store = RunStore(Path(loaded.root))
            await self.need(store.db.open)
            self._store = store
            await self._settle(store)
        return self._store

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a store call in a worker thread; a failing store becomes a warning and None.

        A store found damaged by the call is replaced (see `StoreReplaced`): its history is
        rebuilt from the run folders and the call is made once more, on the new store.
        """
        for attempt in (1, 2):
            try:
                value = await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
            except StoreReplaced as exc:
                if attempt == 2 or self._store is None:
                    self.warnings.append(f"the run store failed: {exc}")
                    return None
                try:
                    await anyio.to_thread.run_sync(self._store.db.open)  # the new store
                except StoreError as again:
                    self.warnings.append(f"the run store failed: {again}")
                    return None
                await self._settle(self._store)
                continue
            except StoreError as exc:
                self.warnings.append(f"the run store failed: {exc}; this run is not in the history")
                return None
            break
        if self._store is not None:
            await self._settle(self._store)
        return value

    async def need(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`call`, for a store call the operation cannot do without (opening the store, creating the
        run): a file system that refuses the write fails it with STORE_UNAVAILABLE, the store left as
        it is, instead of a run that is in no history."""
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
        except StoreUnavailable as exc:
            raise exc.error from exc
        except StoreError:
            return await self.call(fn, *args, **kwargs)

    async def _settle(self, store: RunStore) -> None:
        """Collect the store's warnings; refill a store just created from the run folders."""
        self.warnings.extend(store.db.pop_warnings())
        if store.db.created:
            try:
                self.warnings.extend(await anyio.to_thread.run_sync(rebuild_history, store))
            except StoreError as exc:
                self.warnings.append(f"the run history could not be rebuilt: {exc}")

    def take_warnings(self) -> list[str]:
        """The warnings gathered since the last call."""
        out, self.warnings = self.warnings, []
        return out

    # -- starting --------------------------------------------------------------------------------

    async def run_tests(
        self,
        request: RunRequest,
        *,
        wait: float | None,
        sink: ProgressSink | None,
        given: GivenSuites = NO_SUITES,
    ) -> RunResult:
        """Start the test run `request` asks for and wait for it up to `wait` seconds (None: to its end).

        The environment is prepared first as `request.prepare` says, under the run's locks (what
        that did becomes the result's `setup`), and concluded last whatever happened, shielded
        (removed when it is not kept). `given` are suites that e2e.yaml does not list (saved tests
        and suites) with their test files. With `request.shards` the suites are split over those
        engines, each with its own copy of the environment, instead of the project's environment.
        """
        shards = parse_shards(request.shards) if request.shards is not None else []
        loaded = await self.ctx.ensure_loaded()
        suites = select_suites(loaded, _listed(request.suites), given.by_id())
        chash = await anyio.to_thread.run_sync(config_hash, loaded)
        rhash = request_hash(chash, request, given.digest())
        live, existing = await self._create(request, [s.id for s in suites], chash, rhash, sink)
        if live is None:
            assert existing is not None
            return await self.get(existing, wait)
        state = await self._state(live, request, loaded, suites, shards, given)
        live.state = state
        state.suites = suites
        git = _Later(git_state(loaded.root))
        self._background.spawn(git.fill, name=f"git-{live.run_id}")

        async def body(reporter: Reporter) -> Any:
            if isinstance(state, ShardedRunState):
                return await run_sharded(
                    self.ctx, state, parallel=request.parallel, fresh=request.fresh, reporter=reporter
                )
            try:
                await self._prepare(live, request, state, reporter)
                await weigh(self, live, state, ask_of(request))
                return await run_suites(
                    self.ctx, suite_ids=[s.id for s in suites], parallel=request.parallel, reporter=reporter,
                    state=state,
                )  # fmt: skip
            finally:
                with anyio.CancelScope(shield=True):
                    await self.preparation.conclude(request)

        async def finish(run: LiveRun, reporter: Reporter) -> RunResult:
            return await finish_test(self, run, reporter, config_hash=chash, git=await git.get())

        self._launch(live, "run", body, finish)
        return await self.wait_started(live, wait)

    async def _prepare(
        self, live: LiveRun, request: RunRequest, state: TestRunState, reporter: Reporter
    ) -> None:
        """The run's setup phase: the environment prepared as the request says (nothing for `none`)."""
        if request.prepare == "none":
            return
        state.phase = "setup"
        live.log.record("PHASE_STARTED", phase="setup")
        state.setup = await self.preparation.prepare(request, live.run_id, reporter)
        live.log.record("PHASE_FINISHED", phase="setup")
        if request.prepare == "up_to_date" and request.keep and request.warm and warm_enabled():
            # A next run is expected on the kept environment: its pytest suites may start warm.
            self.ctx.pytest_servers = self.ctx.pytest_servers or WarmPytest()

    async def _state(
        self,
        live: LiveRun,
        request: RunRequest,
        loaded: LoadedConfig,
        suites: list[SuiteConfig],
        shards: Sequence[ShardSpec],
        given: GivenSuites,
    ) -> TestRunState:
        """The run's live state; a sharded one splits the suites by their recorded durations."""
        selection = request.picked()
        carried = None
        if selection is not None and request.resumed_from is not None:
            # The values the original run's other cases saved, for the cases run again, and the
            # verdicts of the cases it does not run again, which it carries.
            carried = resumed_order(await self.get(request.resumed_from, None), selection)
            selection = await carry_values(self, request.resumed_from, loaded, selection)
        if not shards:
            state = TestRunState(live.run_id, live.log, selection, given)
            state.order = carried
            return state
        ids = [s.id for s in suites]
        store = await self.store()
        durations = await self.call(store.suite_durations, ids) or {}
        split = split_suites(ids, durations, len(shards))
        return ShardedRunState(live.run_id, live.log, shards, split, selection, given)

    async def run_lifecycle(
        self,
        request: RunRequest,
        body: Callable[[Reporter], Awaitable[Any]],
        *,
        wait: float | None,
        sink: ProgressSink | None,
    ) -> LiveRun | str:
        """Start a build or setup as a run; return it once it ended or `wait` passed (or an existing run id)."""
        loaded = await self.ctx.ensure_loaded()
        chash = await anyio.to_thread.run_sync(config_hash, loaded)
        live, existing = await self._create(request, [], chash, request_hash(chash, request), sink)
        if live is None:
            assert existing is not None
            return existing

        async def finish(run: LiveRun, reporter: Reporter) -> RunResult:
            return await finish_lifecycle(self, run, reporter, config_hash=chash)

        self._launch(live, request.kind, body, finish)
        await self._wait(live, wait, started_here=True)
        return live

    async def _create(
        self,
        request: RunRequest,
        suites: list[str],
        config_hash: str,
        request_hash: str,
        sink: ProgressSink | None,
    ) -> tuple[LiveRun | None, str | None]:
        run_id = new_run_id()
        parent = current_parent()
        log = EventLog(
            run_id,
            parent.trace_id if parent else new_trace_id(),
            new_span_id(),
            parent.span_id if parent else None,
        )
        if self.ctx.loaded is not None:
            log.redactor = self.ctx.loaded.redactor  # every event of the run, setup's included
        started = now_text()
        store = await self.store()
        opening = NewRun(
            run_id=run_id, started_at=started, suites=tuple(suites), config_hash=config_hash,
            request_hash=request_hash, trace_id=log.trace_id,
        )  # fmt: skip
        created = await self.need(store.create, request, opening)
        if created is not None and not created[1]:
            row = created[0]
            if row.request_hash != request_hash:
                raise InputError(
                    f"idempotency key {request.idempotency_key!r} was used by run {row.run_id} for a "
                    "different request (another config, or other suites)",
                    code="IDEMPOTENCY_CONFLICT",
                    hint="use a new idempotencyKey for a new request, or get_run the existing run",
                    details={"runId": row.run_id, "status": row.status},
                )
            return None, row.run_id
        log.path = store.runs_folder(run_id) / "events.ndjson"
        live = LiveRun(request=request, run_id=run_id, log=log, relay=Relay(sink, log), started_at=started)
        log.record("RUN_CREATED", name=request.kind, status="queued")
        self.live[run_id] = live
        return live, None

    def _launch(
        self,
        live: LiveRun,
        operation: str,
        body: Callable[[Reporter], Awaitable[Any]],
        finish: Callable[[LiveRun, Reporter], Awaitable[RunResult]],
    ) -> None:
        async def drive() -> None:
            reporter = Reporter(live.relay, operation)
            try:
                await self._drive(live, operation, body, reporter)
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        live.final = await finish(live, reporter)
                    finally:
                        live.status = live.final.status if live.final else "error"
                        self.live.pop(live.run_id, None)
                        live.done.set()

        self._background.spawn(drive, name=f"run-{live.run_id}")

    async def _drive(
        self, live: LiveRun, operation: str, body: Callable[[Reporter], Awaitable[Any]], reporter: Reporter
    ) -> None:
        try:
            with anyio.CancelScope() as scope:
                live.scope = scope
                if live.cancel_requested:
                    scope.cancel()
                async with self.ctx.lock:
                    root = await anyio.to_thread.run_sync(lambda: self.ctx.root)
                    async with project_lock(root, operation, wait=self.ctx.lock_wait, on_wait=reporter.step):
                        live.status = "running"
                        live.log.record("RUN_STATE_CHANGED", status="running")
                        await self._beat(live)
                        phased = live.kind != "test"  # a test run records its own phases
                        if phased:
                            live.log.record("PHASE_STARTED", phase=live.kind)
                        async with anyio.create_task_group() as beats:
                            beats.start_soon(self._heartbeats, live)
                            try:
                                live.value = await body(reporter)
                            finally:
                                beats.cancel_scope.cancel()
                                if phased:
                                    live.log.record("PHASE_FINISHED", phase=live.kind)
        except BaseException as exc:  # recorded by the finisher; the waiter re-raises it
            error = unwrap_error(exc)
            if isinstance(error, anyio.get_cancelled_exc_class()):
                if not live.cancel_requested:
                    live.error = error
                    raise
            else:
                live.error = error
                if not isinstance(error, Exception):
                    raise

    async def _heartbeats(self, live: LiveRun) -> None:
        beats = 0
        while True:
            await anyio.sleep(HEARTBEAT)
            beats += 1
            # Progress and the cancel check every beat; the partial result (all finished cases,
            # encoded) less often: it is what another process's get_run shows of the suites.
            await self._beat(live, snapshot=beats % SNAPSHOT_EVERY == 1)

    async def _beat(self, live: LiveRun, *, snapshot: bool = False) -> None:
        done, total = live.progress
        partial = None
        if snapshot and live.state is not None and live.state.context is not None:
            partial = msgspec.json.encode(partial_result(live.state, status="running"))
        store = self._store
        if store is None:
            return
        await anyio.to_thread.run_sync(live.log.flush)
        asked = await self.call(
            store.heartbeat,
            live.run_id,
            status=live.status,
            phase=live.phase,
            done_cases=done,
            total_cases=total,
            snapshot=partial,
        )
        if asked:
            live.cancel()

    # -- waiting ---------------------------------------------------------------------------------

    async def wait_started(self, live: LiveRun, wait: float | None) -> RunResult:
        """Wait for a test run this call started; re-raise its error when it failed to run."""
        await self._wait(live, wait, started_here=True)
        if live.done.is_set():
            if live.error is not None and isinstance(live.error, PreflightError) and wait is None:
                raise _with_run(live.error, live.final)
            if live.error is not None and isinstance(live.error, PreflightError) and live.final is not None:
                if live.final.status == "error":
                    raise _with_run(live.error, live.final)
            assert live.final is not None
            return live.final
        return snapshot_of(live)

    async def _wait(self, live: LiveRun, wait: float | None, *, started_here: bool) -> None:
        try:
            if wait is None:
                await live.done.wait()
            else:
                with anyio.move_on_after(wait):
                    await live.done.wait()
        except anyio.get_cancelled_exc_class():
            if started_here:
                # The caller gave up before the reply: the run it started goes with it.
                live.cancel()
                with anyio.CancelScope(shield=True), anyio.move_on_after(120):
                    await live.done.wait()
            raise
        finally:
            if started_here or live.done.is_set():
                live.relay.detach()

    async def get(self, run_id: str, wait: float | None) -> RunResult:
        """The run as it stands, waiting up to `wait` seconds for it to end (any process's run)."""
        live = self.live.get(run_id)
        if live is not None:
            await self._wait(live, wait, started_here=False)
            if live.done.is_set() and live.final is not None:
                return live.final
            return snapshot_of(live)
        store = await self.store()
        row = await self.call(store.get, run_id)
        if row is None:
            newest = await self.call(store.newest_ids, 5) or []
            raise InputError(
                f"no run with id {run_id!r} in this project",
                code="RUN_NOT_FOUND",
                hint="`list_runs` shows the runs of this project",
                details={"newest": newest},
            )
        deadline = anyio.current_time() + (wait or 0.0)
        while row.status in ("queued", "running") and anyio.current_time() < deadline:
            await anyio.sleep(min(0.25, max(0.0, deadline - anyio.current_time())))
            row = await self.call(store.get, run_id) or row
        return result_of_row(row)

    async def shutdown(self, reason: str | None = None) -> None:
        """Cancel the runs this process owns and wait for them to record their end.

        With a `reason` (the process is shutting down, e.g. an MCP server whose client left) they
        end `interrupted`, their summary saying why, and `resume_run` re-runs what they left.
        """
        for live in list(self.live.values()):
            if reason is None:
                live.cancel()
            else:
                live.interrupt(reason)
        for live in list(self.live.values()):
            with anyio.CancelScope(shield=True), anyio.move_on_after(60):
                await live.done.wait()


def _listed(suites: tuple[str, ...] | None) -> list[str] | None:
    return list(suites) if suites is not None else None


class _Later:
    """A value computed in the background while the run goes on (git state)."""

    def __init__(self, work: Awaitable[Any]) -> None:
        self._work = work
        self._value: Any = None
        self._ready = anyio.Event()

    async def fill(self) -> None:
        try:
            self._value = await self._work
        except Exception:
            self._value = None
        finally:
            self._ready.set()

    async def get(self) -> Any:
        with anyio.move_on_after(5):
            await self._ready.wait()
        return self._value


def _with_run(error: PreflightError, final: RunResult | None) -> PreflightError:
    """`error` with the run it ended in (`details.runId`) and that run's page (`details.report`):
    the files of a run that could not finish say why as well (its log tail, its steps so far)."""
    if final is None:
        return error
    page = next((a.path for a in final.artifacts if a.name == "report.html"), None)
    details = dict(error.details or {})
    details.setdefault("runId", final.run_id)
    if page is not None:
        details.setdefault("report", page)
    error.details = details
    return error
