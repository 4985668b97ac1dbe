"""The operations of the tool group `runs`: run the suites (all, one, again on each change, the
cases that did not pass), and read, cancel, compare and prune the recorded runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

from preflight_sdk.core.durations import wait_seconds
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.operations import operation
from preflight_sdk.core.progress import ProgressArg, Reporter, resolve_sink
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.results.runs import ArtifactContent, CancelResult, PruneResult, RunDiff, RunList
from preflight_sdk.core.run_request import RunRequest

from .base import Operations

__all__ = ["RunOperations"]


def _suite_ids(filter: str | None) -> tuple[str, ...] | None:
    """The suite ids of a comma-separated `filter` (None: every suite)."""
    return tuple(part.strip() for part in filter.split(",") if part.strip()) if filter else None


class RunOperations(Operations):
    """The runs' operations (tool group `runs`): run the suites, follow, resume, compare and prune runs."""

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

        watching = watch_runs(once, self._env, filter=filter, keep=keep, reporter=reporter)
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
