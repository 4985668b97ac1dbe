"""`Project`: the one object behind the SDK, the `preflight` CLI and the `preflight-mcp` tools.

Every public coroutine method here is an operation. The CLI commands and the MCP tools are
generated from these signatures and docstrings (see `preflight_sdk.faces.reflection.registry`), so a
docstring is also a tool description: it is written for the agent that will read it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import aclosing, asynccontextmanager
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import anyio

from preflight_sdk.clarify.results import ArchitectureResult, ClarifyResult
from preflight_sdk.config import LoadedConfig, McpConfig, find_config
from preflight_sdk.core import face_hooks
from preflight_sdk.core.durations import wait_seconds
from preflight_sdk.core.errors import ConfigError, InputError, PreflightError
from preflight_sdk.core.operations import operation
from preflight_sdk.core.progress import ProgressArg, Reporter, resolve_sink
from preflight_sdk.core.redaction import DEFAULT, redact_logs
from preflight_sdk.core.results.contracts import ContractCheck, GeneratedCases
from preflight_sdk.core.results.imports import ImportedTests
from preflight_sdk.core.results.lifecycle import (
    BuildResult,
    CleanResult,
    InitResult,
    LogLine,
    LogsResult,
    SetupResult,
    StatusResult,
)
from preflight_sdk.core.results.mocks import MockRequestsResult
from preflight_sdk.core.results.recording import MockCheckResult
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.results.runs import ArtifactContent, CancelResult, PruneResult, RunDiff, RunList
from preflight_sdk.core.results.saved import (
    DeleteResult,
    ExportResult,
    ImportResult,
    StoredSuite,
    StoredTest,
    SuiteList,
    TestList,
)
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.lifecycle.session.filelock import project_lock
from preflight_sdk.lifecycle.session.init import initialize
from preflight_sdk.lifecycle.session.state import STATE_DIR
from preflight_sdk.verify.result import VerifyResult

if TYPE_CHECKING:
    from preflight_sdk.engine.base import Engine
    from preflight_sdk.runs.supervisor import RunSupervisor
    from preflight_sdk.saved import SavedTests
    from preflight_sdk.sync import SyncProject

__all__ = ["Project"]


def _directory_of(path: str) -> Path:
    base = Path(path).expanduser().resolve()
    return base if base.is_dir() else base.parent


def _self_check_target(root: str) -> tuple[list[str], list[Any]]:
    """The server and tools of a self-check, from the MCP face that generates them (see face_hooks)."""
    hook = face_hooks.self_check()
    if hook is None:
        raise InputError(
            "self_check needs preflight's MCP face, which is not installed",
            hint="reinstall preflight-sdk (pip install -e .): its entry points name the faces",
        )
    return hook(root)


def _suite_ids(filter: str | None) -> tuple[str, ...] | None:
    """The suite ids of a comma-separated `filter` (None: every suite)."""
    return tuple(part.strip() for part in filter.split(",") if part.strip()) if filter else None


class Project:
    """A project with an e2e.yaml: its Docker services, HTTP mocks and test suites.

    Create it with `Project.open(path)` (no I/O), then await its operations; each one initializes
    the project on first use. `async with Project.open(path) as p:` cleans up on exit.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ".",
        config_file: str | None = None,
        *,
        engine: Engine | None = None,
        engine_host: str | None = None,
        context: str | None = None,
    ) -> None:
        target = None
        if engine_host or context:
            from preflight_sdk.config.engine_target import EngineTarget

            target = EngineTarget(host=engine_host, context=context)
        self._ctx = ProjectContext(path, config_file, engine, target)
        # `run(keep=True)` keeps pytest warm for the next run in this process (see
        # suites/commands/warm_pytest.py); a caller that runs once and exits turns it off.
        self.keep_warm = True

    @cached_property
    def _runs(self) -> RunSupervisor:
        from preflight_sdk.lifecycle.setup.serving import RunServing
        from preflight_sdk.runs.supervisor import RunSupervisor

        return RunSupervisor(self._ctx, RunServing(self._ctx))

    @cached_property
    def _saved(self) -> SavedTests:
        from preflight_sdk.saved import SavedTests

        return SavedTests(self._runs)

    def _record_call(
        self, name: str, started: float, duration: int, outcome: str, code: str | None, run_id: str | None
    ) -> None:
        """Queue one operation call for the store's operation log (only for a loaded project)."""
        loaded = self._ctx.loaded
        if loaded is None:
            return  # no project file: nothing is written anywhere
        from preflight_sdk.store.calls import note_call

        note_call((loaded.root, name, started, duration, outcome, code, run_id, os.getpid()))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] = ".",
        config_file: str | None = None,
        *,
        engine: Engine | None = None,
        engine_host: str | None = None,
        context: str | None = None,
    ) -> Self:
        """Return a Project for the directory `path` (or an e2e.yaml file). Does no I/O.

        Args:
            path: the project directory holding `e2e.yaml` (or `e2e.yml`), or the file itself.
            config_file: another config file name or path, relative to `path`.
            engine: a Docker engine to use instead of the default (tests pass a fake).
            engine_host: run on this Docker engine (`ssh://user@host`, `tcp://host:2375`,
                `unix:///path`) instead of e2e.yaml's `engine:`.
            context: run on this `docker context` instead of e2e.yaml's `engine:`.
        """
        return cls(path, config_file, engine=engine, engine_host=engine_host, context=context)

    @property
    def path(self) -> str:
        """The project path given to `open`."""
        return str(self._ctx.path)

    @cached_property
    def sync(self) -> SyncProject:
        """The same operations, blocking: `project.sync.build()` for code that cannot `await`.

        Runs them on a private event loop in a background thread (an anyio blocking portal), so it
        also works inside a Jupyter kernel. Use either the async methods or `sync` on one Project.
        """
        from preflight_sdk.sync import SyncProject

        return SyncProject(self)

    def __repr__(self) -> str:
        state = self._ctx.session.state if self._ctx.session else "not initialized"
        return f"<Project {str(self._ctx.path)!r} ({state})>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        from preflight_sdk.lifecycle.clean import clean_on_exit

        if "_runs" in vars(self):  # a supervisor was started (`_runs` is cached on first use)
            await self._runs.shutdown()
        await self._ctx.stop_pytest_servers()
        await clean_on_exit(self._ctx)

    async def _stop_runs(self, reason: str) -> None:
        """End the runs this object owns as `interrupted`, saying `reason` (its face shuts down)."""
        if "_runs" in vars(self):  # a supervisor was started (`_runs` is cached on first use)
            await self._runs.shutdown(reason)

    # -- operations --------------------------------------------------------------------------

    @operation(title="Load the project", idempotent=True, group="environment")
    async def init(self) -> InitResult:
        """Load and validate the project's e2e.yaml and open its session.

        Call it first, or let any other operation do it for you. Calling it again is cheap: with
        an unchanged file it returns the same session; after an edit it reloads, unless the
        environment is running (then clean first).

        Returns:
            The project name, config path, services (image, ports, whether a health check is
            set), mocks (port, route count), suites (id, runner, file), the session id and its
            lifecycle state (initialized, built, running or stopped).

        Example:
            `await Project.open("examples/shop").init()`

        Tips:
            CONFIG_INVALID lists every problem (JSON path, line, column, did-you-mean): fix them
            all, then call `init` again.
        """
        async with self._ctx.lock:
            return await initialize(self._ctx)

    @operation(title="Build images", group="environment")
    async def build(
        self,
        no_cache: bool = False,
        service: str | None = None,
        pull: bool = False,
        wait: str | None = None,
        idempotency_key: str | None = None,
        progress: ProgressArg = None,
    ) -> BuildResult:
        """Build the Docker image of every service from its Dockerfile (in parallel).

        A service without a `build.dockerfile` uses its `build.image`, which must exist locally
        (or `pull`). Build output lines are reported as progress.

        Args:
            no_cache: build without Docker's layer cache.
            service: build only this service (by name); default: all of them.
            pull: pull ready-made images that are missing locally (needs a reachable registry).
            wait: e.g. "30s"; past it the work goes on and its runId comes back ("0s": at once;
                default: to the end, over MCP the call budget).
            idempotency_key: the same key returns the same run.

        Returns:
            Per service: image, status (success or failed), duration in ms, and where the image
            came from (built, local, pulled); the total duration; runId (`pending` while it goes on).

        Example:
            `await project.build(service="api", no_cache=True)`

        Tips:
            BUILD_FAILED has each failed service's last 30 build lines in
            details.services[].logTail; DOCKERFILE_NOT_FOUND lists the paths tried.
        """
        from preflight_sdk.runs.lifecycle_runs import build_run

        request = RunRequest(
            kind="build", no_cache=no_cache, service=service, pull=pull, idempotency_key=idempotency_key
        )
        return await build_run(
            self._runs, request, wait=wait_seconds(wait), sink=resolve_sink(progress, "build")
        )

    @operation(title="Start the environment", idempotent=True, group="environment")
    async def setup(
        self,
        timeout: str | None = None,
        wait: str | None = None,
        idempotency_key: str | None = None,
        record: str | None = None,
        progress: ProgressArg = None,
    ) -> SetupResult:
        """Start the test environment, or bring the running one up to date: only what changed restarts.

        Services start concurrently unless `dependsOn` orders them; jobs (`kind: job`) must exit
        0 first. Each service is probed from the host until ready. While the environment runs, a
        service whose inputs changed is rebuilt or recreated with its dependants, changed mock
        routes reload, the rest is reused (see each service's `action`). A failed fresh start
        removes what it started; the error names the service, its last probes and log lines.

        Args:
            timeout: how long each service may take to become ready, e.g. "120s" or "2m"
                (default: from its healthcheck: startPeriod + interval × retries; 60s without one).
            wait: e.g. "30s"; past it the work goes on and its runId comes back ("0s": at once;
                default: to the end, over MCP the call budget).
            idempotency_key: the same key returns the same run.
            record: mocks to record until clean (as for run).

        Returns:
            The network, each service (container id and name, status, published ports, base URL,
            readiness: probe kind, attempts, time to ready in ms) and each mock (port, URL).

        Example:
            `await project.setup(timeout="90s")`

        Tips:
            NOT_BUILT: call `build` first. HEALTH_CHECK_TIMEOUT and CONTAINER_EXITED carry
            details.logTail: read it first. PORT_CONFLICT: `0:<port>` in `ports` lets Docker pick
            a free host port.
        """
        from preflight_sdk.runs.lifecycle_runs import setup_run

        recording = await self._record_request(record, sharded=False)
        request = RunRequest(
            kind="setup",
            timeout=timeout,
            record=recording.upstreams if recording is not None else None,
            idempotency_key=idempotency_key,
        )
        return await setup_run(
            self._runs, request, wait=wait_seconds(wait), sink=resolve_sink(progress, "setup")
        )

    @operation(title="Show status", read_only=True, group="environment")
    async def status(self) -> StatusResult:
        """Show the project's state and what is running, as Docker reports it now.

        Works from any process: it reads `.preflight/state.json` and finds containers by label.

        Returns:
            The lifecycle state (initialized, built, running, stopped), the network and whether it
            exists, each service (container status, health measured now, published ports with
            `accessible` from a real connect, uptime in ms, base URL) and each mock (running or
            stopped, request count).

        Example:
            `await project.status()`

        Tips:
            A service `missing` or `exited` while the state is `running` means the environment
            broke: read its logs, then clean and setup again.
        """
        from preflight_sdk.lifecycle import status as _status

        return await _status.status(self._ctx)

    @operation(title="Read container logs", read_only=True, group="environment")
    async def logs(
        self,
        container: str,
        lines: int = 100,
        since: str | None = None,
        follow_for: str | None = None,
        progress: ProgressArg = None,
    ) -> LogsResult:
        """Read a service container's recent output: stdout and stderr interleaved by time.

        Args:
            container: the service name (or the configured container name).
            lines: how many of the last lines to return (0 to 10000).
            since: only lines since then: a duration back from now ("30s", "5m", "2h") or an ISO
                8601 time.
            follow_for: keep collecting new lines for this long (e.g. "10s"), reporting each as
                progress, before returning.

        Returns:
            The lines in the daemon's time order, each whole with its text, stream and timestamp;
            the line count and the container's status. At most 256 KB of text (16 KB a line):
            `truncated` says older lines were left out or a line was cut.

        Example:
            `await project.logs("api", lines=50, since="5m")`

        Tips:
            CONTAINER_NOT_RUNNING still carries the last lines in details.lines, which usually
            say why the container stopped. CONTAINER_NOT_FOUND lists the valid names.
        """
        from preflight_sdk.lifecycle import logs as _logs

        reporter = Reporter(resolve_sink(progress, "logs"), "logs")
        try:
            result = await _logs.logs(
                self._ctx,
                container=container,
                lines=lines,
                since=since,
                follow_for=_logs.follow_seconds(follow_for),
                reporter=reporter,
            )
        except BaseException:
            if follow_for:
                reporter.finish(ok=False)
            raise
        if follow_for:  # only following reports progress; a plain read stays silent
            reporter.finish(ok=True, message=f"{result.line_count} line(s) of {container}")
        return redact_logs(result, self._ctx.loaded.redactor if self._ctx.loaded else DEFAULT)

    async def follow_logs(self, container: str, since: str | None = None) -> AsyncIterator[LogLine]:
        """Yield a container's log lines (since `since`, else from its start), then each new one as
        it is written, until you stop iterating. Each line says its stream (stdout or stderr).

        `async for line in project.follow_logs("api", since="1m"): print(line.stream, line.text)`
        """
        from preflight_sdk.core.durations import parse_since
        from preflight_sdk.lifecycle import logs as _logs

        info = await _logs.find_container(self._ctx, container)
        async for line in _logs.follow(self._ctx, info.id, since=parse_since(since) if since else None):
            yield line

    def until_removed(self) -> Awaitable[None]:
        """Wait until this project's environment is removed by another process (a `clean` from
        elsewhere, or a new setup): `preflight up` stops waiting then. Not an operation."""
        from preflight_sdk.lifecycle.session.removal import until_removed

        session = self._ctx.require_session()
        return until_removed(self._ctx.root, session.session_id)

    @operation(title="Remove the environment", destructive=True, idempotent=True, group="environment")
    async def clean(self, force: bool = True, images: bool = False) -> CleanResult:
        """Stop and remove every container, mock and network of the project, found by label.

        Finds resources by Docker label, so it also removes what a crashed or killed process
        left behind, and works with no session or a broken e2e.yaml. Removes the state file.

        Args:
            force: kill running containers at once (`docker rm -f`); false gives each the usual
                stop grace period first.
            images: also remove the images this checkout built from its Dockerfiles.

        Returns:
            What happened to each container (removed, force_removed, not_found, failed with the
            error), each mock (stopped, not_running, failed) and each network, and whether the
            session file was removed.

        Example:
            `await project.clean()`

        Tips:
            Safe to call at any time and more than once; an empty result means nothing was left.
        """
        from preflight_sdk.lifecycle import clean as _clean

        async with self._operation(False, "clean", lock_if_possible=True):
            return await _clean.clean(self._ctx, force=force, images=images)

    @operation(title="Run test suites", group="runs")
    async def run(
        self,
        filter: str | None = None,
        parallel: bool | None = None,
        keep: bool = True,
        fresh: bool = False,
        wait: str | None = None,
        idempotency_key: str | None = None,
        shards: list[str] | None = None,
        record: str | None = None,
        affected: bool = False,
        affected_within: str = "1d",
        fail_fast: bool = False,
        progress: ProgressArg = None,
    ) -> RunResult:
        """Bring the environment up to date, run the project's test suites and report every failure in full.

        Builds and starts only what is missing or changed (like `setup`), resets what an earlier
        run on the kept environment may have changed (each service's `reset:` in e2e.yaml), then
        runs the suites of e2e.yaml. A failed case carries the request and response, every assertion, the container
        logs and mock requests of that moment, a summary, a suggested fix when known, and its
        history (last passed run, failing since, recent outcomes, flaky). Every run is recorded.

        Args:
            filter: suite ids to run, comma-separated (e.g. "orders,payments"; saved suites too);
                default: all of e2e.yaml's.
            parallel: run the suites marked `parallel` at the same time (default: e2e.yaml's
                `tests.parallel`).
            keep: leave the environment running for the next run; false removes it afterwards.
            fresh: remove the environment and rebuild every image without cache first.
            wait: e.g. "30s"; past it the work goes on and its runId comes back ("0s": at once;
                default: to the end, over MCP the call budget).
            idempotency_key: the same key returns the same run.
            shards: split the suites over these engines, each running its own copy of the
                environment at once: `local` (the project's engine), `context:NAME` or a
                DOCKER_HOST URL (`unix:///…`, `tcp://host:2375`, `ssh://user@host`), e.g.
                ["local", "ssh://ci@builder"]. Split by recorded durations; the copies are always
                removed afterwards (`keep` is for the project's own environment).
            record: mocks to record, comma-separated (`mock=URL`, else from its `proxy:`);
                later runs replay the routes written.
            affected: run only the cases an edit since their last run can affect; the others
                are `carried` with that run's verdict (never a failure). Affected cases run first.
            affected_within: the oldest verdict `affected` carries, e.g. "1d".
            fail_fast: stop at the first failure.

        Returns:
            runId, status (passed, failed; queued or running past `wait`), a one-line summary,
            totals, per-suite results with their cases, the artifacts written, and `setup`: each
            service's action (reused, rebuilt, recreated, started, reset and how) and why, and
            `setup.environment`: the run that set a kept environment up, the runs it served, why
            it was reset first (each run starts from the state after setup). A sharded
            run adds `shards` (each engine's suites, status, setup time) and each case's `engine`.
            `recordings`: mocks that recorded (routes added, replaced) or replayed.
            `affected`: what the edit could affect, why, and where carried verdicts come from.

        Example:
            `await project.run(filter="orders")`

        Tips:
            Call it again after changing code: only what changed is rebuilt. Read each
            failure's `summary` and `suggestedFix` first; `history.flaky` means it also passed on
            the same code. resume_run re-runs only what did not pass.
        """
        recording = await self._record_request(record, sharded=shards is not None)
        request = RunRequest(
            suites=_suite_ids(filter),
            parallel=parallel,
            prepare="none" if shards is not None else "up_to_date",
            keep=keep,
            fresh=fresh,
            warm=self.keep_warm,
            shards=tuple(shards) if shards is not None else None,
            record=recording.upstreams if recording is not None else None,
            idempotency_key=idempotency_key,
            affected=affected,
            affected_within=affected_within,
            fail_fast=fail_fast,
        )
        return await self._test_run(request, wait, progress)

    async def watch(
        self, filter: str | None = None, keep: bool = False, progress: ProgressArg = None
    ) -> AsyncIterator[RunResult | PreflightError]:
        """Run the suites, then again each time a file of the project changes, until you stop iterating.

        Changes are grouped until the files are quiet (one save, or a formatter rewriting many
        files, is one re-run). Each re-run is `run`: only what changed is rebuilt or restarted;
        a change to one suite's own file re-runs only that suite. A file changed while a run
        goes on (by its suites, most often) starts no run; the progress says which files did,
        and which file started each run. Yields each run's result, or the error that stopped it
        (a failing build, a crashing service): fix the file and it runs again. When iteration
        stops the environment is removed, unless `keep`.

        `async for outcome in project.watch(): print(getattr(outcome, "summary", outcome))`
        """
        from preflight_sdk.runs.watching import watch_runs

        reporter = Reporter(resolve_sink(progress, "watch"), "watch")

        async def once(suites: str | None) -> RunResult | PreflightError:
            try:
                return await self.run(filter=suites, keep=True, progress=progress)
            except PreflightError as exc:
                return exc

        watching = watch_runs(once, self._ctx, filter=filter, keep=keep, reporter=reporter)
        async with aclosing(watching) as outcomes:
            async for outcome in outcomes:
                yield outcome

    @operation(title="Run one test suite", group="runs")
    async def run_suite(
        self,
        suite_id: str,
        wait: str | None = None,
        idempotency_key: str | None = None,
        progress: ProgressArg = None,
    ) -> RunResult:
        """Run one test suite by its id; the result has the same shape as `run`.

        Args:
            suite_id: the suite's `id` in e2e.yaml, or a saved suite's id.
            wait: as for run.
            idempotency_key: as for run.

        Returns:
            The same report as `run`, with one suite.

        Example:
            `await project.run_suite("orders")`

        Tips:
            SUITE_NOT_FOUND lists the valid suite ids.
        """
        request = RunRequest(suites=(suite_id,), prepare="if_running", idempotency_key=idempotency_key)
        return await self._test_run(request, wait, progress)

    @operation(title="Read a run", read_only=True, group="runs")
    async def get_run(self, run_id: str, wait: str | None = None) -> RunResult:
        """Return a run (test, build or setup) as it stands, from any process; optionally wait for its end.

        Args:
            run_id: the runId a run, build, setup or list_runs gave; also `latest` (the newest
                run) or the first characters of an id, when only one run starts with them.
            wait: wait up to this long for it to finish, e.g. "30s" (default: answer at once).

        Returns:
            The run: for a test run the same report as `run` (partial suites while it runs, with
            progress); build and setup runs carry that result in `build` or `setup`.

        Example:
            `await project.get_run("01JDQ8ZK5X7N3V9G2H4M6P8R0T", wait="30s")`

        Tips:
            `interrupted` means the process that ran it died; resume_run re-runs what it left.
        """
        from preflight_sdk.runs.queries import resolve_run_id

        seconds = wait_seconds(wait)
        run_id = await resolve_run_id(self._runs, run_id)
        return await self._runs.get(run_id, seconds if seconds is not None else 0.0)

    @operation(title="List runs", read_only=True, group="runs")
    async def list_runs(
        self,
        status: str | None = None,
        suite: str | None = None,
        kind: str | None = None,
        limit: int = 20,
        before: str | None = None,
        test_id: str | None = None,
    ) -> RunList:
        """List the project's runs, newest first, one compact line each.

        Args:
            status: only runs in this status (queued, running, passed, failed, cancelled,
                interrupted, error).
            suite: only runs that selected this suite id.
            kind: only test, build or setup runs.
            test_id: only the runs of this saved test.
            limit: how many (1 to 500).
            before: a runId: the page of runs older than it (see nextBefore).

        Returns:
            runs [{runId, kind, status, startedAt, duration, totals, summary, resumedFrom}],
            nextBefore when more remain.

        Example:
            `await project.list_runs(status="failed", limit=5)`
        """
        from preflight_sdk.runs.queries import list_runs as _list

        if test_id is not None:
            from preflight_sdk.saved.definition import check_id

            check_id(test_id, field="testId")
        return await _list(
            self._runs, status=status, suite=suite, kind=kind, test_id=test_id, limit=limit, before=before
        )

    @operation(title="Cancel a run", destructive=True, idempotent=True, group="runs")
    async def cancel_run(self, run_id: str) -> CancelResult:
        """Stop a queued or running run, from any process: its finished cases are kept, teardown runs.

        Args:
            run_id: the run to stop.

        Returns:
            cancelled: true when this call stopped it (false for a run already finished, which
            comes back unchanged); run: the run as recorded.

        Example:
            `await project.cancel_run("01JDQ8ZK5X7N3V9G2H4M6P8R0T")`
        """
        from preflight_sdk.runs.queries import cancel_run as _cancel

        return await _cancel(self._runs, run_id)

    async def _record_request(self, record: str | None, *, sharded: bool) -> Any:
        """The mocks a run or setup records, checked against e2e.yaml before anything starts."""
        if not record:
            return None
        if sharded:
            raise InputError(
                "`record` and `shards` do not go together", hint="record in a run without shards"
            )
        from .lifecycle.mockhost.recording import record_request

        return record_request(await self._ctx.ensure_loaded(persist=False), record)

    @operation(title="Resume a run", group="runs")
    async def resume_run(
        self, run_id: str, wait: str | None = None, progress: ProgressArg = None
    ) -> RunResult:
        """Run again exactly the cases of a finished run that did not pass (failed, errored, never finished).

        The environment is brought up to date first, as `run` does (and kept). The cases run again
        see the values that the original run's other cases saved (`save:`); a case needing a
        redacted value runs the case that saved it again too.

        Args:
            run_id: the earlier test run.
            wait: how long to wait for the verdict (as for run).

        Returns:
            A new run with resumedFrom set; `resume` lists which of those cases now pass.

        Example:
            `await project.resume_run("01JDQ8ZK5X7N3V9G2H4M6P8R0T")`

        Tips:
            pytest and shell suites are re-run whole. A run whose cases all passed has nothing to
            resume (INVALID_INPUT).
        """
        from preflight_sdk.runs.queries import resume_selection

        run_id, suites, selection = await resume_selection(self._runs, run_id, await self._saved.ids())
        test_id = await self._saved.test_of_run(run_id)  # a saved test's run resumes in its history
        request = RunRequest(
            suites=tuple(suites),
            prepare="up_to_date",  # up to date, as `run` brings it
            warm=self.keep_warm,
            selection={suite: tuple(sorted(cases)) for suite, cases in selection.items()},
            resumed_from=run_id,
            test_id=test_id,
        )
        return await self._test_run(request, wait, progress)

    @operation(title="Read a run's file", read_only=True, group="runs")
    async def get_artifact(
        self, run_id: str, name: str, offset: int = 0, limit: int = 200_000
    ) -> ArtifactContent:
        """Read one file of a run (report.json, junit.xml, events.ndjson, cases/<caseId>.json).

        A screenshot (`failure.browser.screenshot`) read whole comes back as an image too.

        Args:
            run_id: the run.
            name: the file's name inside the run's folder, as listed in its artifacts.
            offset: the first byte to return.
            limit: at most this many bytes (1 to 1000000).

        Returns:
            name, contentType, sha256 and size of the whole file, encoding (utf-8 or base64),
            content, nextOffset when more remains.

        Example:
            `await project.get_artifact("01JDQ8ZK5X7N3V9G2H4M6P8R0T", "events.ndjson")`

        Tips:
            ARTIFACT_NOT_FOUND lists the run's files.
        """
        from preflight_sdk.runs.queries import get_artifact as _get

        return await _get(self._runs, run_id, name, offset, limit)

    @operation(title="Compare two runs", read_only=True, group="runs")
    async def diff_runs(self, base: str, head: str) -> RunDiff:
        """Compare two test runs case by case: what newly fails, what got fixed, what still fails and why.

        Args:
            base: the earlier run (e.g. the last that passed).
            head: the later run.

        Returns:
            newlyFailing, fixed, stillFailing (with causeChanged: another assertion, status or
            log line), added, removed, unchanged count, summary.

        Example:
            `await project.diff_runs(base="01JDQ8…", head="01JDQA…")`
        """
        from preflight_sdk.runs.queries import diff_runs as _diff

        return await _diff(self._runs, base, head)

    @operation(title="Delete old runs", destructive=True, idempotent=True, group="runs")
    async def prune_runs(self, keep: int | None = None, max_age: str | None = None) -> PruneResult:
        """Delete finished runs beyond the newest `keep` or older than `max_age`, with their files.

        Runs are pruned after each run by e2e.yaml's `history: {keep, maxAge}` (200, 30d).

        Args:
            keep: keep this many of the newest runs (default: history.keep).
            max_age: delete runs older than this, e.g. "7d" (default: history.maxAge).

        Returns:
            deleted run ids, and how many runs remain.

        Example:
            `await project.prune_runs(keep=50)`
        """
        from preflight_sdk.runs.queries import prune_runs as _prune

        return await _prune(self._runs, keep, max_age)

    # -- saved tests and suites --------------------------------------------------------------

    @operation(title="Save a test", group="tests")
    async def save_test(
        self,
        id: str,
        name: str,
        test: dict[str, Any],
        description: str | None = None,
        tags: list[str] | None = None,
        overwrite: bool = False,
    ) -> StoredTest:
        """Save an HTTP or browser test in the project's store, to run it later by id and keep its history.

        Args:
            id: a lowercase slug, e.g. "login-works".
            name: a short title (the case's name).
            test: one case of the YAML test grammar (request or browser, expect, save, retry);
                templates as in suites ({{services.api.url}}). A browser test:
                {"browser": {"goto": "/", "actions": [{"click": "#buy"}]}, "expect": {"text": "Thanks"}}.
            description: free text.
            tags: labels to list by.
            overwrite: replace an existing test (createdAt is kept).

        Returns:
            The stored test: id, name, test, tags, description, createdAt, updatedAt.

        Example:
            `await project.save_test(id="health", name="health", test={"request": {"path": "/health"}})`

        Tips:
            A bad `test` is INVALID_INPUT naming each problem's path ($.test.expect.staus).
        """
        return await self._saved.save_test(
            id, name, test, description=description, tags=tags, overwrite=overwrite
        )

    @operation(title="Read a saved test", read_only=True, group="tests")
    async def get_test(self, id: str) -> StoredTest | None:
        """Return a saved test, or null when there is none.

        Args:
            id: the saved test's id.

        Example:
            `await project.get_test("health")`
        """
        return await self._saved.get_test(id)

    @operation(title="List saved tests", read_only=True, group="tests")
    async def list_tests(self, tag: str | None = None) -> TestList:
        """List the saved tests: id, name, tags, updatedAt and the status of each one's newest run.

        Args:
            tag: only the tests carrying this tag.

        Example:
            `await project.list_tests(tag="smoke")`
        """
        return await self._saved.list_tests(tag)

    @operation(title="Delete a saved test", destructive=True, idempotent=True, group="tests")
    async def delete_test(self, id: str) -> DeleteResult:
        """Delete a saved test and all its runs (their files too). Deleting a missing test is no error.

        Args:
            id: the saved test's id.

        Returns:
            deleted (false when there was no such test) and runsDeleted.

        Example:
            `await project.delete_test("health")`
        """
        return await self._saved.delete_test(id)

    @operation(title="Run a test", group="tests")
    async def run_test(
        self,
        test_id: str | None = None,
        test: dict[str, Any] | None = None,
        wait: str | None = None,
        progress: ProgressArg = None,
    ) -> RunResult:
        """Run one saved test by id (recorded in its history), or an inline test (an ad-hoc run).

        Args:
            test_id: a saved test's id.
            test: instead, one case of the YAML test grammar (as for save_test).
            wait: how long to wait for the verdict (as for run).

        Returns:
            The same report as `run`: status, summary and, for a failure, the request, response,
            assertions, logs, mock requests, suggested fix and history.

        Example:
            `await project.run_test(test_id="health")`

        Tips:
            A test naming a service or mock needs setup first (NOT_RUNNING); absolute URLs run
            without it. TEST_NOT_FOUND lists the closest stored ids.
        """
        return await self._saved.run_test(
            test, test_id, wait=wait_seconds(wait), sink=resolve_sink(progress, "run")
        )

    @operation(title="Read a test's newest run", read_only=True, group="tests")
    async def get_latest_run(self, test_id: str) -> RunResult | None:
        """Return the newest run of a saved test (the report of `run`), or null when it has none.

        Args:
            test_id: the saved test's id.

        Example:
            `await project.get_latest_run("health")`
        """
        return await self._saved.latest_run(test_id)

    @operation(title="Save a suite of saved tests", group="tests")
    async def save_suite(
        self, id: str, name: str, test_ids: list[str], overwrite: bool = False
    ) -> StoredSuite:
        """Save a suite: saved tests run together, in order, wherever a suite id goes (run_suite, run).

        Args:
            id: a lowercase slug, not an e2e.yaml suite id.
            name: a short title.
            test_ids: saved tests, in run order.
            overwrite: replace an existing suite.

        Example:
            `await project.save_suite(id="smoke-saved", name="smoke", test_ids=["health", "login-works"])`

        Tips:
            TEST_NOT_FOUND lists every missing test id.
        """
        return await self._saved.save_suite(id, name, test_ids, overwrite=overwrite)

    @operation(title="List saved suites", read_only=True, group="tests")
    async def list_suites(self) -> SuiteList:
        """List the saved suites with their test ids.

        Example:
            `await project.list_suites()`
        """
        return await self._saved.list_suites()

    @operation(title="Delete a saved suite", destructive=True, idempotent=True, group="tests")
    async def delete_suite(self, id: str) -> DeleteResult:
        """Delete a saved suite; its tests stay. Deleting a missing suite is no error.

        Args:
            id: the saved suite's id.

        Example:
            `await project.delete_suite("smoke-saved")`
        """
        return await self._saved.delete_suite(id)

    @operation(title="Export saved tests to a test file", group="tests")
    async def export_tests(
        self,
        path: str,
        test_ids: list[str] | None = None,
        suite_id: str | None = None,
        overwrite: bool = False,
    ) -> ExportResult:
        """Write saved tests as a YAML test file in the project, to review and version them.

        Args:
            path: the file to write, inside the project.
            test_ids: these saved tests (default: all).
            suite_id: instead, this saved suite's tests.
            overwrite: replace an existing file.

        Returns:
            path, testIds, and suiteEntry: the e2e.yaml `tests.suites` entry that runs the file.

        Example:
            `await project.export_tests(path="tests/smoke.yaml", suite_id="smoke-saved")`
        """
        from preflight_sdk.saved import export_tests as _export

        return await _export(
            self._saved, path=path, test_ids=test_ids, suite_id=suite_id, overwrite=overwrite
        )

    @operation(title="Import tests from a test file", group="tests")
    async def import_tests(
        self, path: str, tags: list[str] | None = None, overwrite: bool = False
    ) -> ImportResult:
        """Save each case of a YAML test file in the project as a saved test (id: its name as a slug).

        Args:
            path: the test file, relative to the project.
            tags: tags for every imported test.
            overwrite: replace saved tests with the same ids.

        Example:
            `await project.import_tests(path="tests/orders.yaml", tags=["orders"])`
        """
        from preflight_sdk.saved import import_tests as _import

        return await _import(self._saved, path=path, tags=tags, overwrite=overwrite)

    @operation(
        title="Check a response against a contract", read_only=True, idempotent=True, group="contracts"
    )
    async def check_response(
        self,
        service: str,
        method: str,
        path: str,
        status: int,
        body: str | None = None,
        headers: list[str] | None = None,
    ) -> ContractCheck:
        """Check a response you hold against a service's OpenAPI contract (`contract:`).

        A served contract is read from the running environment. Over MCP it is in the opt-in
        group `contracts`: `preflight-mcp --tools environment,runs,contracts`.

        Args:
            service: its name in e2e.yaml.
            method: e.g. "GET".
            path: as sent, e.g. "/orders/42".
            status: its status code.
            body: the body as text (JSON is parsed).
            headers: "Name: value" strings.

        Returns:
            The operation matched and each violation: JSON path, rule, expected, actual, the
            document's file and line.

        Example:
            `await project.check_response("orders", "GET", "/orders/42", 200, body='{"id": 42}')`
        """
        from preflight_sdk.suites.contract_tools import check_held_response, contract_of

        loaded = await self._ctx.ensure_loaded()
        return check_held_response(
            loaded,
            await contract_of(self._ctx, loaded, service),
            service=service,
            method=method,
            path=path,
            status=status,
            body=body,
            headers=_header_pairs(headers or []),
        )

    @operation(title="Generate cases from a contract", group="contracts")
    async def generate_cases(self, service: str, output: str | None = None) -> GeneratedCases:
        """Write a new YAML test file of one case per operation of a service's contract.

        A served contract is read from the running environment. Over MCP it is in the opt-in
        group `contracts`: `preflight-mcp --tools environment,runs,contracts`.

        Args:
            service: its name in e2e.yaml.
            output: the file, relative to e2e.yaml (default tests/generated/<service>.yaml); an
                existing file is never written over.

        Returns:
            The file, its cases, and the suite entry for e2e.yaml's `tests.suites`.

        Example:
            `await project.generate_cases("orders")`
        """
        from preflight_sdk.suites.contract_tools import contract_of, generate_starter_cases

        loaded = await self._ctx.ensure_loaded()
        contract = await contract_of(self._ctx, loaded, service)
        return await anyio.to_thread.run_sync(
            partial(generate_starter_cases, loaded, contract, service=service, output=output)
        )

    @operation(title="Import Postman, .http or Hurl tests", group="tests")
    async def import_file(
        self,
        source: str,
        output: str | None = None,
        hosts: dict[str, str] | None = None,
        environment: str | None = None,
        overwrite: bool = False,
        dry_run: bool = False,
    ) -> ImportedTests:
        """Convert a Postman collection, `.http` or Hurl file into a YAML test file.

        Hosts become services or mocks (by `hosts`, name or port). What does not convert is in
        `notConverted` with its place. Add `suiteEntry` to e2e.yaml to run it.

        Args:
            source: `.json` (Postman), `.http` or `.hurl`, relative to the project.
            output: default `tests/<name>.yaml`.
            hosts: host, origin or base-URL variable → service or mock.
            environment: a Postman environment file.
            overwrite: replace an existing file.
            dry_run: write nothing; the YAML is in `text`.

        Example:
            `await project.import_file("api.postman_collection.json", hosts={"baseUrl": "api"})`
        """
        from preflight_sdk.importers import convert_file

        loaded = await self._config_if_any()
        root = Path(loaded.root) if loaded is not None else self._ctx.root
        redactor = loaded.redactor if loaded is not None else DEFAULT
        convert = partial(convert_file, source, root=root, loaded=loaded, output=output, hosts=hosts)
        return await anyio.to_thread.run_sync(
            partial(convert, environment=environment, overwrite=overwrite, dry_run=dry_run, redactor=redactor)
        )

    async def _config_if_any(self) -> LoadedConfig | None:
        """The project's configuration, or None where there is no e2e.yaml (an invalid one raises)."""
        try:
            return await self._ctx.ensure_loaded(persist=False)
        except ConfigError as exc:
            if exc.code == "CONFIG_NOT_FOUND":
                return None
            raise

    @operation(title="Read mock traffic", group="environment")
    async def mock_requests(
        self, mock_name: str | None = None, since: str | None = None, clear: bool = False
    ) -> MockRequestsResult:
        """Show the requests the project's HTTP mocks received, oldest first, with their bodies.

        Each request: method, URL, query, headers, body, the route that answered (none: a 404),
        the status sent and the time. Works from any process while the mocks run.

        Args:
            mock_name: one mock (by its name in e2e.yaml); default: all of them.
            since: only requests since then: a duration back from now ("30s", "5m") or an ISO
                8601 time.
            clear: empty the journal after reading (nothing arriving meanwhile is lost).

        Returns:
            Per mock: name, port, number of requests, how many old ones the bounded journal
            dropped, and the requests.

        Example:
            `await project.mock_requests("payments", since="1m")`

        Tips:
            A request with no matchedRoute got a 404 listing the closest routes and why each did
            not match. MOCKS_NOT_RUNNING: call `setup` first.
        """
        from preflight_sdk.lifecycle.mockhost.traffic import mock_requests

        return await mock_requests(self._ctx, mock_name=mock_name, since=since, clear=clear)

    @operation(title="Check a mock against its real service", open_world=True, group="environment")
    async def check_mock(
        self,
        mock_name: str,
        upstream: str | None = None,
        headers: list[str] | None = None,
    ) -> MockCheckResult:
        """Check a mock's routes against the real service: status, content type, JSON shape.

        Each route's example request is sent as it is (POSTs too). Needs no environment.

        Args:
            mock_name: the mock.
            upstream: the service's base URL (default: the recorded one, else `proxy:`).
            headers: "Name: value" headers to send (credentials; never shown).

        Returns:
            status (ok, drift, error), a summary, and per route its differences.

        Example:
            `await project.check_mock("payments", headers=["Authorization: Bearer sk_test_1"])`
        """
        from preflight_sdk.lifecycle.mockhost.check import check_mock as _check

        loaded = await self._ctx.ensure_loaded(persist=False)
        return await _check(loaded, mock_name, upstream=upstream, headers=headers)

    @operation(title="Verify an MCP server", open_world=True, group="verify")
    async def verify(
        self,
        command: str | None = None,
        manifest: str | None = None,
        timeout: str = "10s",
        call_readonly: bool = False,
        strict: bool = False,
        mcp_only: bool = False,
        self_check: bool = False,
        call_timeout: str = "30s",
        call_open_world: bool = False,
    ) -> VerifyResult:
        """Check an MCP server against what it promises: start it over stdio, list its tools, compare.

        Starts the server (e2e.yaml's `mcp:` block unless `command` or `manifest` is given), lists
        every page of tools with the official MCP client, and reports each declared tool as found
        or missing and each undeclared one as extra. Each tool definition is checked too. The
        server and its children are always stopped.

        Args:
            command: start this server instead, split like a shell would but never run by one
                (e.g. "python -m books.mcp --db test.db"); its tools are not compared. Over MCP
                only when the server was started with --allow-verify-command.
            manifest: a pai-deps manifest, relative to the project, declaring the start command
                and the tools.
            timeout: one limit for start, handshake and listing, e.g. "10s"; raise it for slow
                starters (npx, a JVM).
            call_readonly: also call each read-only, closed-world tool (readOnlyHint true,
                openWorldHint false) with minimal arguments and each declared tool with its
                `exampleArguments`; the result lists every tool called or skipped.
            strict: undeclared tools and a missing start command fail (default: a warning, skipped).
            mcp_only: skip the command-line contracts a manifest declares under `provides.cli`.
            self_check: verify preflight's own MCP server against its operations.
            call_timeout: the limit of each call made by call_readonly, e.g. "30s"; it starts
                again at each progress notification the server sends.
            call_open_world: with call_readonly, also call read-only tools whose openWorldHint is
                true or unset (they may reach the internet or other outside systems).

        Returns:
            status passed | failed | error | skipped; the server (name, version, protocol
            version); tools [{name, status found|missing|extra, findings}]; server-level findings;
            summary counts; calls [{tool, outcome, arguments, duration, reason}] with
            call_readonly; stderrTail when it did not pass.

        Example:
            `await project.verify(call_readonly=True, timeout="30s")`

        Tips:
            status `error`: the server could not be verified (start, timeout, exit, protocol): read
            findings and stderrTail. `command`, `manifest` and `self_check` exclude each other.
        """
        from preflight_sdk.verify import verify as _verify
        from preflight_sdk.verify.spec import check_sources

        # Before anything is loaded: a bad combination must fail fast and start nothing.
        check_sources(command=command, manifest=manifest, self_check=self_check)
        root, mcp = await self._verify_source()
        verify = partial(
            _verify,
            root=root,
            timeout=timeout,
            call_timeout=call_timeout,
            call_readonly=call_readonly,
            call_open_world=call_open_world,
        )
        if self_check:
            argv, expected = _self_check_target(str(root))
            return await verify(command=argv, expected_tools=expected, strict=True)
        return await verify(mcp=mcp, command=command, manifest=manifest, strict=strict, mcp_only=mcp_only)

    @operation(title="Clarify an intention into ADR and task files", group="clarify")
    async def clarify(
        self,
        intention: str,
        answers: dict[str, str | list[str]] | None = None,
        session_id: str | None = None,
        context: str | None = None,
        force_adr: bool = False,
    ) -> ClarifyResult:
        """Turn an intention into decisions before code: ADR and task files in the project's git repository.

        First call, the intention alone: the reply is needs_clarification with a sessionId and up
        to 4 questions (at most 5 per session). Next call, the same intention with session_id and
        answers: the reply is completed with the files written: an ADR in docs/adr/ when the
        change is architectural (or force_adr), docs/CURRENT_TASK.md and
        docs/ARCHITECTURE_STATE.md. Needs a git repository, not an e2e.yaml.

        Args:
            intention: the change in one sentence, e.g. "Add authentication".
            answers: {question id: answer}: an option or "Other: <text>", a list of options
                (multi_choice), or text (free_text).
            session_id: the sessionId of the previous reply; omit it to start a new session.
            context: background text, recorded in the task.
            force_adr: write an ADR even for a bug fix or a refactor.

        Returns:
            needs_clarification: sessionId, questions (id, type, question, options, optional,
            otherId), progress {askedSoFar, answered}, detectedFromIntent (answers the intention
            states). completed: artifacts [{path, type adr|task|projection, uid}], summary,
            adrReasons, archivedTask. warning "llm_fallback" with warningReason when a configured
            language model failed.

        Example:
            `await project.clarify("Add authentication", answers={"auth_strategy": "OAuth"}, session_id="s-7f3a")`

        Tips:
            INVALID_ANSWER names the question and its options: fix the answer and call again.
            SESSION_EXPIRED / SESSION_NOT_FOUND: start again without session_id.
        """
        from preflight_sdk.clarify.flow import clarify as _clarify

        return await _clarify(Path(self.path), intention, answers, session_id, context, force_adr)

    @operation(title="Read the architecture decisions", idempotent=True, group="clarify")
    async def read_architecture(self) -> ArchitectureResult:
        """Return the architecture decisions recorded in the repository's ADRs.

        Reads the latest ADR in docs/adr/ (highest UID), the source of truth, and rewrites
        docs/ARCHITECTURE_STATE.md from it when that file is missing or stale. Needs a git
        repository (found by walking up from the project path), not an e2e.yaml.

        Returns:
            uid: the latest ADR's UID (null when none exists); categories: {Category: {Field:
            value}}, e.g. {"Authentication": {"Strategy": "OAuth"}}; sourceFile; adrFile;
            regenerated.

        Example:
            `await project.read_architecture()`

        Tips:
            Follow these decisions when implementing; change one only through clarify (a new ADR).
        """
        from preflight_sdk.clarify.flow import read_architecture as _read_architecture

        return await _read_architecture(Path(self.path))

    # -- helpers -----------------------------------------------------------------------------

    async def _test_run(self, request: RunRequest, wait: str | None, progress: ProgressArg) -> RunResult:
        """Start the test run `request` asks for, with the saved suites among its suites."""
        seconds = wait_seconds(wait)
        given = await self._saved.expand(request.suites, tests_too=request.resumed_from is not None)
        return await self._runs.run_tests(
            request, wait=seconds, sink=resolve_sink(progress, "run"), given=given
        )

    async def _verify_source(self) -> tuple[Path, McpConfig | None]:
        """Return the directory verify works in and the e2e.yaml `mcp:` block (when there is one)."""
        try:
            loaded = await self._ctx.ensure_loaded(persist=False)
        except ConfigError as exc:
            if exc.code != "CONFIG_NOT_FOUND":
                raise
            return await anyio.to_thread.run_sync(_directory_of, self.path), None
        return Path(loaded.root), loaded.config.mcp

    def _lock_place(self, optional: bool) -> tuple[Path, bool]:
        """The checkout's root and whether its lock file may (and can) be used (blocking)."""
        if not optional:
            return self._ctx.root, True
        try:
            root = find_config(self._ctx.path, self._ctx.config_file).parent
        except ConfigError:
            return self._ctx.root, False  # not a project: write nothing there
        folder = root / STATE_DIR
        usable = not (folder / "lock").is_dir() and (folder.is_dir() or not folder.exists())
        return root, usable

    @asynccontextmanager
    async def _operation(
        self, progress: ProgressArg, name: str, *, lock_if_possible: bool = False
    ) -> AsyncIterator[Reporter]:
        """Serialise a changing operation on this project and report its start and end.

        With `lock_if_possible` (clean) the operation also runs without the checkout's lock file
        when there is no project file (nothing may be written there) or `.preflight/` is broken.
        """
        reporter = Reporter(resolve_sink(progress, name), name)
        try:
            async with self._ctx.lock:
                root, lockable = await anyio.to_thread.run_sync(self._lock_place, lock_if_possible)
                waiting = lambda text: reporter.step(text)  # noqa: E731
                if not lockable:
                    yield reporter
                    return
                async with project_lock(root, name, wait=self._ctx.lock_wait, on_wait=waiting):
                    yield reporter
        except BaseException as exc:
            message = exc.message if isinstance(exc, PreflightError) else type(exc).__name__
            reporter.finish(ok=False, message=f"{name} failed: {message}")
            raise
        reporter.finish(ok=True)


def _header_pairs(lines: list[str]) -> dict[str, str]:
    """`["X-Id: 7"]` as `{"X-Id": "7"}`."""
    pairs: dict[str, str] = {}
    for line in lines:
        name, found, value = line.partition(":")
        if not found or not name.strip():
            raise InputError(
                f"header {line!r} is not `Name: value`", hint='write each header as "Name: value"'
            )
        pairs[name.strip()] = value.strip()
    return pairs
