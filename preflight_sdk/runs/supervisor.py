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

from preflight_sdk.config import SuiteConfig, TestFile
from preflight_sdk.core.errors import InputError, PreflightError
from preflight_sdk.core.progress import ProgressSink, Reporter
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.tracing import current_parent, new_span_id, new_trace_id
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.lifecycle.session.filelock import project_lock
from preflight_sdk.store import RunStore, StoreError, StoreReplaced, StoreUnavailable, new_run_id
from preflight_sdk.suites.events import EventLog
from preflight_sdk.suites.orchestrator import TestPlan, partial_result, run_suites, select_suites
from preflight_sdk.suites.ordering import CaseOrder

from .affected.planning import AffectedAsk
from .affected.stage import weigh
from .detached import Background
from .finish import finish_lifecycle, finish_test, unwrap_error
from .identity import config_hash, git_state, request_hash
from .live import LiveRun, Relay
from .reading import result_of_row, snapshot_of
from .rebuild import rebuild_history
from .shard_plan import ShardSpec, split_suites
from .sharded_run import ShardedPlan, run_sharded

__all__ = ["HEARTBEAT", "RunSupervisor"]

HEARTBEAT = 0.5  # seconds between a live run's progress writes (and cancel checks)
SNAPSHOT_EVERY = 4  # heartbeats between two snapshots of the partial result (for other processes)


def now_text() -> str:
    """Now, as the store and results spell times (ISO 8601, UTC, milliseconds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RunSupervisor:
    """The runs of one project that this process owns, and its door to the project's store."""

    def __init__(self, ctx: ProjectContext) -> None:
        self.ctx = ctx
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
        *,
        suite_ids: list[str] | None,
        parallel: bool | None,
        wait: float | None,
        idempotency_key: str | None,
        sink: ProgressSink | None,
        selection: dict[str, set[str]] | None = None,
        resumed_from: str | None = None,
        test_id: str | None = None,
        prepare: Callable[[Reporter, str], Awaitable[SetupResult | None]] | None = None,
        after: Callable[[], Awaitable[None]] | None = None,
        parts: object = None,
        synthetic: Sequence[tuple[SuiteConfig, TestFile]] = (),
        environment_optional: bool = False,
        shards: Sequence[ShardSpec] = (),
        fresh: bool = False,
        affected: AffectedAsk | None = None,
        carried: CaseOrder | None = None,
    ) -> RunResult:
        """Start a test run and wait for it up to `wait` seconds (None: to its end).

        `prepare` runs first, under the run's locks (bringing the environment up to date: what it
        did becomes the result's `setup`); `after`
        runs last whatever happened, shielded (removing it when it is not kept). `synthetic` are
        suites that e2e.yaml does not list (saved tests and suites) with their test files;
        `environment_optional` lets them run without a running environment. With `shards` the
        suites are split over those engines, each with its own copy of the environment (`fresh`:
        built without cache), instead of `prepare` and the project's environment. `affected`
        orders the run by what an edit can affect (and with `only` runs just that); a resumed or
        sharded run takes its cases as they come. `carried` are the verdicts a resumed run carries
        from the run it resumes (the cases it does not run again).
        """
        loaded = await self.ctx.ensure_loaded()
        suites = select_suites(loaded, suite_ids, {s.id: s for s, _ in synthetic})
        chash = await anyio.to_thread.run_sync(config_hash, loaded)
        picked = {k: sorted(v) for k, v in (selection or {}).items()}
        rhash = request_hash("test", chash, [[s.id for s in suites], parallel, picked, test_id, parts])
        live, existing = await self._create(
            kind="test",
            suites=[s.id for s in suites],
            config_hash=chash,
            request_hash=rhash,
            idempotency_key=idempotency_key,
            resumed_from=resumed_from,
            test_id=test_id,
            sink=sink,
        )
        if live is None:
            assert existing is not None
            return await self.get(existing, wait)
        plan = await self._plan(live, suites, shards, selection, synthetic, environment_optional)
        live.plan = plan
        plan.suites = suites
        plan.order = carried
        git = _Later(git_state(loaded.root))
        self._background.spawn(git.fill, name=f"git-{live.run_id}")
        ask = affected if resumed_from is None else None

        async def body(reporter: Reporter) -> Any:
            if isinstance(plan, ShardedPlan):
                return await run_sharded(self.ctx, plan, parallel=parallel, fresh=fresh, reporter=reporter)
            try:
                if prepare is not None:
                    plan.phase = "setup"
                    live.log.record("PHASE_STARTED", phase="setup")
                    plan.setup = await prepare(reporter, live.run_id)
                    live.log.record("PHASE_FINISHED", phase="setup")
                await weigh(self, live, plan, ask)
                return await run_suites(
                    self.ctx,
                    suite_ids=[s.id for s in suites],
                    parallel=parallel,
                    reporter=reporter,
                    plan=plan,
                )
            finally:
                if after is not None:
                    with anyio.CancelScope(shield=True):
                        await after()

        async def finish(run: LiveRun, reporter: Reporter) -> RunResult:
            return await finish_test(
                self, run, reporter, config_hash=chash, git=await git.get(), idempotency_key=idempotency_key,
                resumed_from=resumed_from,
            )  # fmt: skip

        self._launch(live, "run", body, finish)
        return await self.wait_started(live, wait)

    async def _plan(
        self,
        live: LiveRun,
        suites: list[SuiteConfig],
        shards: Sequence[ShardSpec],
        selection: dict[str, set[str]] | None,
        synthetic: Sequence[tuple[SuiteConfig, TestFile]],
        environment_optional: bool,
    ) -> TestPlan:
        """The run's plan; a sharded one splits the suites by their recorded durations."""
        if not shards:
            return TestPlan(live.run_id, live.log, selection, synthetic, environment_optional)
        ids = [s.id for s in suites]
        store = await self.store()
        durations = await self.call(store.suite_durations, ids) or {}
        split = split_suites(ids, durations, len(shards))
        return ShardedPlan(live.run_id, live.log, shards, split, selection, synthetic, environment_optional)

    async def run_lifecycle(
        self,
        kind: str,
        body: Callable[[Reporter], Awaitable[Any]],
        *,
        wait: float | None,
        idempotency_key: str | None,
        sink: ProgressSink | None,
        parts: object = None,
    ) -> LiveRun | str:
        """Start a build or setup as a run; return it once it ended or `wait` passed (or an existing run id)."""
        loaded = await self.ctx.ensure_loaded()
        chash = await anyio.to_thread.run_sync(config_hash, loaded)
        live, existing = await self._create(
            kind=kind,
            suites=[],
            config_hash=chash,
            request_hash=request_hash(kind, chash, parts),
            idempotency_key=idempotency_key,
            sink=sink,
        )
        if live is None:
            assert existing is not None
            return existing

        async def finish(run: LiveRun, reporter: Reporter) -> RunResult:
            return await finish_lifecycle(
                self, run, reporter, config_hash=chash, idempotency_key=idempotency_key
            )

        self._launch(live, kind, body, finish)
        await self._wait(live, wait, started_here=True)
        return live

    async def _create(
        self,
        *,
        kind: str,
        suites: list[str],
        config_hash: str,
        request_hash: str,
        idempotency_key: str | None,
        sink: ProgressSink | None,
        resumed_from: str | None = None,
        test_id: str | None = None,
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
        created = await self.need(
            store.create,
            run_id=run_id,
            kind=kind,
            started_at=started,
            suites=suites,
            config_hash=config_hash,
            request_hash=request_hash,
            idempotency_key=idempotency_key,
            resumed_from=resumed_from,
            test_id=test_id,
            trace_id=log.trace_id,
        )
        if created is not None and not created[1]:
            row = created[0]
            if row.request_hash != request_hash:
                raise InputError(
                    f"idempotency key {idempotency_key!r} was used by run {row.run_id} for a different "
                    "request (another config, or other suites)",
                    code="IDEMPOTENCY_CONFLICT",
                    hint="use a new idempotencyKey for a new request, or get_run the existing run",
                    details={"runId": row.run_id, "status": row.status},
                )
            return None, row.run_id
        log.path = store.runs_folder(run_id) / "events.ndjson"
        live = LiveRun(run_id=run_id, kind=kind, log=log, relay=Relay(sink, log), started_at=started)
        live.resumed_from, live.idempotency_key = resumed_from, idempotency_key
        log.record("RUN_CREATED", name=kind, status="queued")
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
        if snapshot and live.plan is not None and live.plan.context is not None:
            partial = msgspec.json.encode(partial_result(live.plan, status="running"))
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
