"""The operations of the tool group `environment`: the project loaded, its images built, its
environment set up, read (status, logs, the mocks' traffic) and removed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable

from preflight_sdk.core.durations import wait_seconds
from preflight_sdk.core.operations import operation
from preflight_sdk.core.progress import ProgressArg, Reporter, resolve_sink
from preflight_sdk.core.redaction import DEFAULT, redact_logs
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
from preflight_sdk.core.run_request import RunRequest

from .base import Operations

__all__ = ["EnvironmentOperations"]


class EnvironmentOperations(Operations):
    """The environment's operations (tool group `environment`): load, build, set up, read and remove it."""

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
        async with self._env.lock:
            return await self._env.init()

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
        return await self._env.status()

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
            the line count and the container's status. A tool reply carries at most 256 KB of
            text (16 KB a line): `truncated` says older lines were left out or a line was cut.

        Example:
            `await project.logs("api", lines=50, since="5m")`

        Tips:
            CONTAINER_NOT_RUNNING still carries the last lines in details.lines, which usually
            say why the container stopped. CONTAINER_NOT_FOUND lists the valid names.
        """
        from preflight_sdk.lifecycle import logs as _logs

        reporter = Reporter(resolve_sink(progress, "logs"), "logs")
        try:
            result = await self._env.logs(
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
        return redact_logs(result, self._env.loaded.redactor if self._env.loaded else DEFAULT)

    async def follow_logs(self, container: str, since: str | None = None) -> AsyncIterator[LogLine]:
        """Yield a container's log lines (since `since`, else from its start), then each new one as
        it is written, until you stop iterating. Each line says its stream (stdout or stderr).

        `async for line in project.follow_logs("api", since="1m"): print(line.stream, line.text)`
        """
        from preflight_sdk.core.durations import parse_since

        async for line in self._env.follow(container, since=parse_since(since) if since else None):
            yield line

    def until_removed(self) -> Awaitable[None]:
        """Wait until this project's environment is removed by another process (a `clean` from
        elsewhere, or a new setup): `preflight up` stops waiting then. Not an operation."""
        from preflight_sdk.lifecycle.session.removal import until_removed

        session = self._env.require_session()
        return until_removed(self._env.root, session.session_id)

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
        async with self._operation(False, "clean", lock_if_possible=True):
            return await self._env.clean(force=force, images=images)

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
        return await self._env.mock_requests(mock_name=mock_name, since=since, clear=clear)

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

        loaded = await self._env.ensure_loaded(persist=False)
        return await _check(loaded, mock_name, upstream=upstream, headers=headers)
