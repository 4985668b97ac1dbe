"""`Project`: the one object behind the SDK, the `preflight` CLI and the `preflight-mcp` tools.

Every public coroutine method here is an operation. The CLI commands and the MCP tools are
generated from these signatures and docstrings (see `preflight_sdk.export.registry`), so a
docstring is also a tool description: it is written for the agent that will read it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import msgspec

from .clarify.compat import READ_ARCHITECTURE_ALIAS, REQUIRE_CLARIFICATION_ALIAS
from .clarify.results import ArchitectureResult, ClarifyResult
from .config import McpConfig, find_config
from .errors import ConfigError, InputError, PreflightError
from .lifecycle.context import ProjectContext
from .lifecycle.filelock import project_lock
from .lifecycle.init import initialize
from .lifecycle.state import STATE_DIR
from .operations import operation
from .progress import ProgressArg, Reporter, resolve_sink
from .results.lifecycle import (
    BuildResult,
    CleanResult,
    InitResult,
    LogLine,
    LogsResult,
    SetupResult,
    StatusResult,
)
from .results.mocks import MockRequestsResult
from .results.run import RunResult
from .results.runs import ArtifactContent, CancelResult, PruneResult, RunDiff, RunList
from .verify.result import VerifyResult

if TYPE_CHECKING:
    from .engine.base import Engine
    from .runs.supervisor import RunSupervisor
    from .sync import SyncProject

__all__ = ["Project"]


class _Pending(msgspec.Struct, frozen=True, kw_only=True):
    """A build or setup still going on when its caller's `wait` ran out."""

    run_id: str
    duration: int
    pending: Any


def _check_key(key: str | None) -> None:
    if key is not None and not (1 <= len(key) <= 200):
        raise InputError("idempotency_key must be 1 to 200 characters", hint="e.g. a task id or a commit sha")


def _directory_of(path: str) -> Path:
    base = Path(path).expanduser().resolve()
    return base if base.is_dir() else base.parent


_MAX_WAIT = 24 * 3600.0


def _wait_seconds(wait: str | int | None) -> float | None:
    """`wait` in seconds (None: to the end); INVALID_INPUT outside 0s..24h."""
    if wait is None:
        return None
    from .durations import parse_duration

    seconds = parse_duration(wait, field="wait")
    if not 0 <= seconds <= _MAX_WAIT:
        raise InputError(f"wait must be between 0s and 24h, not {wait!r}", hint='e.g. wait="0s" or wait="2m"')
    return seconds


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
    ) -> None:
        self._ctx = ProjectContext(path, config_file, engine)
        self._sync: SyncProject | None = None
        self._supervisor: RunSupervisor | None = None

    @property
    def _runs(self) -> RunSupervisor:
        if self._supervisor is None:
            from .runs.supervisor import RunSupervisor

            self._supervisor = RunSupervisor(self._ctx)
        return self._supervisor

    def _record_call(
        self, name: str, started: float, duration: int, outcome: str, code: str | None, run_id: str | None
    ) -> None:
        """Queue one operation call for the store's operation log (only for a loaded project)."""
        loaded = self._ctx.loaded
        if loaded is None:
            return  # no project file: nothing is written anywhere
        from datetime import UTC, datetime

        from .store import OperationRow
        from .store.calls import note_call

        stamp = datetime.fromtimestamp(started, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        row = OperationRow(
            operation=name, started_at=stamp, duration_ms=duration, outcome=outcome, error_code=code,
            run_id=run_id, pid=os.getpid(),
        )  # fmt: skip
        note_call(Path(loaded.root), row)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] = ".",
        config_file: str | None = None,
        *,
        engine: Engine | None = None,
    ) -> Self:
        """Return a Project for the directory `path` (or an e2e.yaml file). Does no I/O.

        Args:
            path: the project directory holding `e2e.yaml` (or `e2e.yml`), or the file itself.
            config_file: another config file name or path, relative to `path`.
            engine: a Docker engine to use instead of the default (tests pass a fake).
        """
        return cls(path, config_file, engine=engine)

    @property
    def path(self) -> str:
        """The project path given to `open`."""
        return str(self._ctx.path)

    @property
    def sync(self) -> SyncProject:
        """The same operations, blocking: `project.sync.build()` for code that cannot `await`.

        Runs them on a private event loop in a background thread (an anyio blocking portal), so it
        also works inside a Jupyter kernel. Use either the async methods or `sync` on one Project.
        """
        if self._sync is None:
            from .sync import SyncProject

            self._sync = SyncProject(self)
        return self._sync

    def __repr__(self) -> str:
        state = self._ctx.session.state if self._ctx.session else "not initialized"
        return f"<Project {str(self._ctx.path)!r} ({state})>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        from .lifecycle.clean import clean_on_exit

        if self._supervisor is not None:
            await self._supervisor.shutdown()
        await clean_on_exit(self._ctx)

    # -- operations --------------------------------------------------------------------------

    @operation(title="Load the project", idempotent=True)
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
            A CONFIG_INVALID error lists every problem with its JSON path, line and column,
            and a did-you-mean for misspelt keys; fix them all, then call init again.
        """
        async with self._ctx.lock:
            return await initialize(self._ctx)

    @operation(title="Build images")
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

        A service without a `build.dockerfile` uses its `build.image` as it is: it must exist
        locally (or be pulled, when `pull` is true). Every build output line is reported as
        progress while it happens. The project moves to `built` only when every image is ready.

        Args:
            no_cache: build without Docker's layer cache.
            service: build only this service (by name); default: all of them.
            pull: pull ready-made images that are missing locally (needs a reachable registry).
            wait: how long to wait for the end, e.g. "30s" (default: to the end; over MCP, the
                server's call budget). Past it the build goes on; follow its runId with get_run.
            idempotency_key: a key of yours: calling again with it returns the same run.

        Returns:
            Per service: image, status (success or failed), duration in ms, and where the image
            came from (built, local, pulled); the total duration; runId. `pending` when it goes on.

        Example:
            `await project.build(service="api", no_cache=True)`

        Tips:
            BUILD_FAILED carries the last 30 build lines of each failed service in
            details.services[].logTail; DOCKERFILE_NOT_FOUND lists the paths tried (relative
            paths are resolved against the e2e.yaml directory, then the build context).
        """
        from .lifecycle import build as _build

        async def body(reporter: Reporter) -> BuildResult:
            return await _build.build(
                self._ctx, no_cache=no_cache, service=service, pull=pull, reporter=reporter
            )

        outcome = await self._lifecycle_run(
            "build", body, wait, idempotency_key, progress, parts=[no_cache, service, pull]
        )
        if isinstance(outcome, BuildResult):
            return outcome
        return BuildResult(
            services=[], total_duration=outcome.duration, run_id=outcome.run_id, pending=outcome.pending
        )

    @operation(title="Start the environment", idempotent=True)
    async def setup(
        self,
        timeout: str | None = None,
        wait: str | None = None,
        idempotency_key: str | None = None,
        progress: ProgressArg = None,
    ) -> SetupResult:
        """Start the test environment, or bring the running one up to date: only what changed restarts.

        Services start concurrently unless `dependsOn` orders them; jobs (`kind: job`) must exit
        0 before their dependents start. Each service is probed from the host until ready (HTTP
        health path, TCP, or its first published port) with fast adaptive polling. While the
        environment runs, a service whose build inputs (context files, Dockerfile, args) or
        container spec changed is rebuilt or recreated, then the services depending on it;
        changed mock routes reload in place; the rest is reused. Each service says its `action`
        (started, reused, rebuilt, recreated) and `reason`. On a failure of a fresh start
        everything started is removed and the error names the service, its last probe outcomes
        and its last log lines.

        Args:
            timeout: how long each service may take to become ready, e.g. "120s" or "2m"
                (default: from its healthcheck: startPeriod + interval × retries; 60s without one).
            wait: how long to wait for the end (default: to the end; over MCP, the call budget).
                Past it setup goes on; follow its runId with get_run.
            idempotency_key: a key of yours: calling again with it returns the same run.

        Returns:
            The network, each service (container id and name, status, published ports, base URL,
            readiness: probe kind, attempts, time to ready in ms) and each mock (port, URL).

        Example:
            `await project.setup(timeout="90s")`

        Tips:
            NOT_BUILT means an image is missing: call build first. HEALTH_CHECK_TIMEOUT and
            CONTAINER_EXITED carry details.logTail: read it before changing anything.
            PORT_CONFLICT names the port (and its holder when known); `0:<port>` in `ports`
            lets Docker pick a free host port.
        """
        from .lifecycle.uptodate import bring_up_to_date

        async def body(reporter: Reporter) -> SetupResult:
            return await bring_up_to_date(
                self._ctx, build=False, fresh=False, timeout=timeout, reporter=reporter
            )

        outcome = await self._lifecycle_run("setup", body, wait, idempotency_key, progress, parts=[timeout])
        if isinstance(outcome, SetupResult):
            return outcome
        return SetupResult(
            services=[],
            mocks=[],
            total_duration=outcome.duration,
            run_id=outcome.run_id,
            pending=outcome.pending,
        )

    @operation(title="Show status", read_only=True)
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
        from .lifecycle import status as _status

        return await _status.status(self._ctx)

    @operation(title="Read container logs", read_only=True)
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
            The lines (text), each entry with its timestamp and stream, the line count and the
            container's status.

        Example:
            `await project.logs("api", lines=50, since="5m")`

        Tips:
            CONTAINER_NOT_RUNNING still carries the last lines in details.lines, which usually
            say why the container stopped. CONTAINER_NOT_FOUND lists the valid names.
        """
        from .lifecycle import logs as _logs

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
        return result

    async def follow_logs(self, container: str, since: str | None = None) -> AsyncIterator[LogLine]:
        """Yield a container's log lines (since `since`, else from its start), then each new one as
        it is written, until you stop iterating. Each line says its stream (stdout or stderr).

        `async for line in project.follow_logs("api", since="1m"): print(line.stream, line.text)`
        """
        from .durations import parse_since
        from .lifecycle import logs as _logs

        info = await _logs.find_container(self._ctx, container)
        async for line in _logs.follow(self._ctx, info.id, since=parse_since(since) if since else None):
            yield line

    @operation(title="Remove the environment", destructive=True, idempotent=True)
    async def clean(self, force: bool = True) -> CleanResult:
        """Stop and remove every container, mock and network of the project, found by label.

        Finds resources by Docker label, so it also removes what a crashed or killed process
        left behind, and works with no session or a broken e2e.yaml. Removes the state file.

        Args:
            force: kill running containers at once (`docker rm -f`); false gives each the usual
                stop grace period first.

        Returns:
            What happened to each container (removed, force_removed, not_found, failed with the
            error), each mock (stopped, not_running, failed) and each network, and whether the
            session file was removed.

        Example:
            `await project.clean()`

        Tips:
            Safe to call at any time and more than once; an empty result means nothing was left.
        """
        from .lifecycle import clean as _clean

        async with self._operation(False, "clean", lock_if_possible=True):
            return await _clean.clean(self._ctx, force=force)

    @operation(title="Run test suites")
    async def run(
        self,
        filter: str | None = None,
        parallel: bool | None = None,
        keep: bool = True,
        fresh: bool = False,
        wait: str | None = None,
        idempotency_key: str | None = None,
        progress: ProgressArg = None,
    ) -> RunResult:
        """Bring the environment up to date, run the project's test suites and report every failure in full.

        First builds and starts only what is missing or changed (like `setup`: unchanged services
        are reused, mocks start over with empty journals), then runs YAML HTTP suites, pytest
        suites and shell suites (as e2e.yaml lists them), with the service and mock URLs
        available to each. A failed case carries the request as sent and the
        response, every assertion (path, operator, expected, actual), the container log lines and
        mock requests of that moment, a one-sentence summary, a suggested fix when known, and its
        history (last passed run, failing since, recent outcomes, flaky). Every run is recorded
        in the project's store; its files are under `.preflight/runs/<runId>/`.

        Args:
            filter: suite ids to run, comma-separated (e.g. "orders,payments"); default: all.
            parallel: run the suites marked `parallel` at the same time (default: e2e.yaml's
                `tests.parallel`).
            keep: leave the environment running afterwards, so the next run reuses it; false
                removes it once the suites are done.
            fresh: remove the environment and rebuild every image without cache before running.
            wait: how long to wait for the verdict, e.g. "30s"; "0s" starts and returns at once
                (default: to the end; over MCP, the server's call budget). Past it the run goes
                on: status is `running`, with progress; follow it with get_run.
            idempotency_key: a key of yours: the same key (and config) returns the same run
                instead of starting another.

        Returns:
            runId, status (passed, failed, or queued/running/cancelled/error), a one-line
            summary, totals, per-suite results with their cases, and the artifacts written.

        Example:
            `await project.run(filter="orders", wait="0s")`

        Tips:
            Call it again after changing code: only what changed is rebuilt. Read `summary` and
            `suggestedFix` of each failure first; `history.flaky` means the case also passed on
            the same code. resume_run re-runs only what did not pass. BUILD_FAILED and
            CONTAINER_EXITED come from bringing the environment up to date: read their logTail.
        """
        from .lifecycle.uptodate import bring_up_to_date, reset_mocks

        async def prepare(reporter: Reporter) -> None:
            await bring_up_to_date(
                self._ctx, build=True, fresh=fresh, timeout=None, reporter=reporter, stage=True
            )
            await reset_mocks(self._ctx)

        async def after() -> None:
            if not keep:
                from .lifecycle.clean import clean as _clean

                await _clean(self._ctx, force=True)

        ids = [part.strip() for part in filter.split(",") if part.strip()] if filter else None
        return await self._test_run(
            ids, parallel, wait, idempotency_key, progress, prepare=prepare, after=after, parts=[keep, fresh]
        )

    @operation(title="Run one test suite")
    async def run_suite(
        self,
        suite_id: str,
        wait: str | None = None,
        idempotency_key: str | None = None,
        progress: ProgressArg = None,
    ) -> RunResult:
        """Run one test suite by its id; the result has the same shape as `run`.

        Args:
            suite_id: the suite's `id` in e2e.yaml.
            wait: how long to wait for the verdict (as for run).
            idempotency_key: as for run.

        Returns:
            The same report as `run`, with one suite.

        Example:
            `await project.run_suite("orders")`

        Tips:
            SUITE_NOT_FOUND lists the valid suite ids.
        """
        return await self._test_run([suite_id], None, wait, idempotency_key, progress)

    @operation(title="Read a run", read_only=True)
    async def get_run(self, run_id: str, wait: str | None = None) -> RunResult:
        """Return a run (test, build or setup) as it stands, from any process; optionally wait for its end.

        Args:
            run_id: the runId a run, build, setup or list_runs gave.
            wait: wait up to this long for it to finish, e.g. "30s" (default: answer at once).

        Returns:
            The run: for a test run the same report as `run` (partial suites while it runs, with
            progress); build and setup runs carry that result in `build` or `setup`.

        Example:
            `await project.get_run("01JDQ8ZK5X7N3V9G2H4M6P8R0T", wait="30s")`

        Tips:
            `interrupted` means the process that ran it died; resume_run re-runs what it left.
        """
        from .runs.queries import check_run_id

        check_run_id(run_id)
        seconds = _wait_seconds(wait)
        return await self._runs.get(run_id, seconds if seconds is not None else 0.0)

    @operation(title="List runs", read_only=True)
    async def list_runs(
        self,
        status: str | None = None,
        suite: str | None = None,
        kind: str | None = None,
        limit: int = 20,
        before: str | None = None,
    ) -> RunList:
        """List the project's runs, newest first, one compact line each.

        Args:
            status: only runs in this status (queued, running, passed, failed, cancelled,
                interrupted, error).
            suite: only runs that selected this suite id.
            kind: only test, build or setup runs.
            limit: how many (1 to 500).
            before: a runId: the page of runs older than it (see nextBefore).

        Returns:
            runs [{runId, kind, status, startedAt, duration, totals, summary, resumedFrom}],
            nextBefore when more remain.

        Example:
            `await project.list_runs(status="failed", limit=5)`
        """
        from .runs.queries import list_runs as _list

        return await _list(
            self._runs, status=status, suite=suite, kind=kind, test_id=None, limit=limit, before=before
        )

    @operation(title="Cancel a run", destructive=True, idempotent=True)
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
        from .runs.queries import cancel_run as _cancel

        return await _cancel(self._runs, run_id)

    @operation(title="Resume a run")
    async def resume_run(
        self, run_id: str, wait: str | None = None, progress: ProgressArg = None
    ) -> RunResult:
        """Run again exactly the cases of a finished run that did not pass (failed, errored, never finished).

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
        from .runs.queries import resume_selection

        suites, selection = await resume_selection(self._runs, run_id)
        return await self._test_run(
            suites, None, wait, None, progress, selection=selection, resumed_from=run_id
        )

    @operation(title="Read a run's file", read_only=True)
    async def get_artifact(
        self, run_id: str, name: str, offset: int = 0, limit: int = 200_000
    ) -> ArtifactContent:
        """Read one file of a run (report.json, junit.xml, events.ndjson, cases/<caseId>.json).

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
        from .runs.queries import get_artifact as _get

        return await _get(self._runs, run_id, name, offset, limit)

    @operation(title="Compare two runs", read_only=True)
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
        from .runs.queries import diff_runs as _diff

        return await _diff(self._runs, base, head)

    @operation(title="Delete old runs", destructive=True, idempotent=True)
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
        from .runs.queries import prune_runs as _prune

        return await _prune(self._runs, keep, max_age)

    @operation(title="Read mock traffic")
    async def mock_requests(
        self, mock_name: str | None = None, since: str | None = None, clear: bool = False
    ) -> MockRequestsResult:
        """Show the requests the project's HTTP mocks received, oldest first, with their bodies.

        Every request is recorded: method, URL, path, query, headers, body (JSON when it parses,
        else text or base64), the route that answered (or none: the mock answered 404), the
        status sent and the time. Works from any process while the mocks are served.

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
            A request with no matchedRoute got a 404 whose body lists the closest routes and why
            each did not match. MOCKS_NOT_RUNNING means setup has not started them.
        """
        from .lifecycle.mockrequests import mock_requests

        return await mock_requests(self._ctx, mock_name=mock_name, since=since, clear=clear)

    @operation(title="Verify an MCP server", open_world=True)
    async def verify(
        self,
        command: str | None = None,
        manifest: str | None = None,
        timeout: str = "10s",
        call_readonly: bool = False,
        strict: bool = False,
        mcp_only: bool = False,
        self_check: bool = False,
    ) -> VerifyResult:
        """Check an MCP server against what it promises: start it over stdio, list its tools, compare.

        Starts the server (the `mcp:` block of e2e.yaml unless `command` or `manifest` is given),
        negotiates the protocol with the official MCP client, follows tools/list through every
        page, and reports each declared tool as found or missing and each undeclared one as extra.
        It also checks every tool definition: object-rooted, valid inputSchema and outputSchema with
        local $refs; required names present in properties; a real description; property
        descriptions; coherent annotations. The server is always stopped afterwards, children
        included.

        Args:
            command: start this server instead, as one string split like a shell would but never
                run by one (e.g. "python -m books.mcp --db test.db"); its tools are then not
                compared with declarations. Not together with `manifest` or `self_check`.
            manifest: a pai-deps manifest (relative to the project) declaring the start command
                (`mcp_start`, or `provides.mcp.start`) and the tools. Not together with `command`
                or `self_check`.
            timeout: one limit for start, handshake and listing, e.g. "10s" or "500ms"; raise it
                for slow starters (npx, a JVM).
            call_readonly: also call every tool annotated readOnlyHint with minimal valid
                arguments, every declared tool with `exampleArguments` with those (read-only or
                not), plus an unknown tool and a wrongly typed argument, and check the answers.
                Off by default: calls can touch what the server is connected to.
            strict: undeclared tools fail (default: a warning); a missing start command fails
                (default: skipped).
            mcp_only: check only the MCP server, not the command-line contracts a manifest declares
                under `provides.cli` (each must exit 0 and print JSON matching its `output_schema`).
            self_check: verify preflight's own MCP server (`preflight-mcp`) against the operations
                it is generated from: every tool, schema and annotation must match. Not together
                with `command` or `manifest`.

        Returns:
            status passed | failed | error | skipped; the server (name, version, protocol
            version); tools [{name, status found|missing|extra, findings}]; server-level findings;
            summary counts; stderrTail when it did not pass.

        Example:
            `await project.verify(command="python -m books.mcp", call_readonly=True)`

        Tips:
            `error` means the server could not be verified (did not start, timed out, exited, broke
            the protocol): read the findings and stderrTail, not the tool list. STDOUT_POLLUTION
            means the server prints on stdout: log to stderr. SCHEMA_MISMATCH comes with
            schemaDiff (added, removed and changed properties). `command`, `manifest` and
            `self_check` each name the server: more than one is INVALID_INPUT.
        """
        from .verify import verify as _verify
        from .verify.spec import check_sources

        # Before anything is loaded: a bad combination must fail fast and start nothing.
        check_sources(command=command, manifest=manifest, self_check=self_check)
        root, mcp = await self._verify_source()
        if self_check:
            from .export.selfcheck import self_check_command, self_check_tools

            return await _verify(
                root=root,
                command=self_check_command(str(root)),
                expected_tools=self_check_tools(),
                timeout=timeout,
                call_readonly=call_readonly,
                strict=True,
            )
        return await _verify(
            root=root,
            mcp=mcp,
            command=command,
            manifest=manifest,
            timeout=timeout,
            call_readonly=call_readonly,
            strict=strict,
            mcp_only=mcp_only,
        )

    @operation(
        title="Clarify an intention into ADR and task files",
        aliases=(REQUIRE_CLARIFICATION_ALIAS,),
    )
    async def clarify(
        self,
        intention: str,
        answers: dict[str, str | list[str]] | None = None,
        session_id: str | None = None,
        context: str | None = None,
        force_adr: bool = False,
    ) -> ClarifyResult:
        """Turn an intention into decisions before code: ADR and task files in the project's git repository.

        Call it with the intention alone ("Add authentication"): the reply is needs_clarification
        with a sessionId and up to 4 questions (at most 5 per session). Call it again with the same
        intention, the session_id and the answers: the reply is completed with the files written:
        docs/adr/<UID>_<slug>.md when the change is architectural (auth, database, cache,
        deployment, queue, a new dependency, a migration, or force_adr), docs/CURRENT_TASK.md
        (objective, allowlist, forbidden paths, constraints, acceptance criteria; the previous task
        is archived) and docs/ARCHITECTURE_STATE.md. Needs a git repository, not an e2e.yaml.

        Args:
            intention: the change in one sentence, e.g. "Add authentication" or "Fix typo in login button".
            answers: {question id: answer}. single_choice: one of the options, or "Other: <your value>";
                multi_choice: a list of options; free_text: a string. Optional questions may be left
                out. Answers on the first call ({} included) complete at once when nothing required
                is missing.
            session_id: the sessionId of the previous reply; omit it to start a new session.
            context: background text, recorded in the task (not used to choose questions).
            force_adr: write an ADR even for a bug fix or a refactor.

        Returns:
            needs_clarification: sessionId, questions (id, type, question, options, optional,
            otherId), progress {askedSoFar, answered}, detectedFromIntent (answers the intention
            states). completed: artifacts [{path, type adr|task|projection, uid}], summary,
            adrReasons, archivedTask. warning "llm_fallback" with warningReason when a configured
            language model failed.

        Example:
            `await project.clarify("Add authentication", answers={"auth_strategy": "OAuth"}, session_id=sid)`

        Tips:
            INVALID_ANSWER names the question and its options; the session is unchanged, so fix the
            answer and call again. SESSION_EXPIRED / SESSION_NOT_FOUND (30 idle minutes, or already
            completed): start again without session_id. Call read_architecture first to see what is
            already decided.
        """
        from .clarify.flow import clarify as _clarify

        return await _clarify(Path(self.path), intention, answers, session_id, context, force_adr)

    @operation(title="Read the architecture decisions", idempotent=True, aliases=(READ_ARCHITECTURE_ALIAS,))
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
        from .clarify.flow import read_architecture as _read_architecture

        return await _read_architecture(Path(self.path))

    # -- helpers -----------------------------------------------------------------------------

    async def _test_run(
        self,
        suite_ids: list[str] | None,
        parallel: bool | None,
        wait: str | None,
        idempotency_key: str | None,
        progress: ProgressArg,
        *,
        selection: dict[str, set[str]] | None = None,
        resumed_from: str | None = None,
        prepare: Any = None,
        after: Any = None,
        parts: object = None,
    ) -> RunResult:
        seconds = _wait_seconds(wait)
        _check_key(idempotency_key)
        return await self._runs.run_tests(
            suite_ids=suite_ids,
            parallel=parallel,
            wait=seconds,
            idempotency_key=idempotency_key,
            sink=resolve_sink(progress, "run"),
            selection=selection,
            resumed_from=resumed_from,
            prepare=prepare,
            after=after,
            parts=parts,
        )

    async def _lifecycle_run(
        self,
        kind: str,
        body: Any,
        wait: str | None,
        idempotency_key: str | None,
        progress: ProgressArg,
        *,
        parts: object,
    ) -> Any:
        """Run a build or setup as a durable run: its result when it ended within `wait`, else a pending note."""
        from .results.lifecycle import BuildProgress
        from .runs.reading import snapshot_of

        seconds = _wait_seconds(wait)
        _check_key(idempotency_key)
        outcome = await self._runs.run_lifecycle(
            kind,
            body,
            wait=seconds,
            idempotency_key=idempotency_key,
            sink=resolve_sink(progress, kind),
            parts=parts,
        )
        run: RunResult | None
        if isinstance(outcome, str):  # an idempotency key replayed: the existing run
            run = await self._runs.get(outcome, seconds)
        elif outcome.done.is_set():
            run = outcome.final
            if outcome.error is not None and isinstance(outcome.error, PreflightError):
                raise outcome.error
            value = outcome.value
            if value is not None:
                return msgspec.structs.replace(value, run_id=outcome.run_id)
        else:
            run = snapshot_of(outcome)
        assert run is not None
        if run.finished:
            value = run.build if kind == "build" else run.setup
            if value is not None:
                return msgspec.structs.replace(value, run_id=run.run_id)
            if run.error is not None:
                raise PreflightError(
                    run.error.message,
                    code=run.error.code,  # type: ignore[arg-type]
                    hint=run.error.hint,
                    details=run.error.details,
                )
        progress_info = run.progress
        return _Pending(
            run_id=run.run_id,
            duration=run.duration,
            pending=BuildProgress(
                status="queued" if run.status == "queued" else "running",
                phase=progress_info.phase if progress_info else None,
                done=progress_info.done if progress_info else 0,
                total=progress_info.total if progress_info else 0,
            ),
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
