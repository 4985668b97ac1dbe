"""`run` and `run_suite`: pick the suites, check the environment, run them, write the report.

Suites run in file order; when parallel runs are on (`tests.parallel`, or `parallel=True`), the
suites marked `parallel: true` then run together, up to `concurrency` at a time, each with its own
variables. A suite that declares cases but records none is failed, never an empty pass.

A `TestRunState` is a test run's live state, shared with its owner (the run supervisor): the run
id and event log, the cases to run when it resumes another run, the suites given beside e2e.yaml's,
a cancel scope the owner can trip (the finished cases are kept, the suite in flight runs its
teardown), and what has finished so far, for live snapshots.
Writing the artifacts and recording the run are the owner's work, not this module's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig, TestFile, load_test_file
from preflight_sdk.config.model import ParallelConfig
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import ConfigError, InputError, PreflightError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.redaction import Redactor, redact_failure
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.results.run import CaseResult, RunResult, SuiteResult, Totals

from .browser.playwright_suite import run_playwright_suite
from .commands.runners import run_pytest_suite, run_shell_suite
from .commands.warm_pytest import WarmPytest
from .context import RunContext
from .environment import RunEnvironment
from .events import EventLog
from .fuzz import run_fuzz_suite
from .given import NO_SUITES, GivenSuites
from .ordering import CaseOrder, carried_suite, suite_order
from .traffic import record_mock_traffic
from .yaml.runner import TEARDOWN_LIMIT, run_yaml_suite, timeout_text

__all__ = ["TestRunState", "carried_text", "partial_result", "run_suites", "select_suites", "test_file"]

_DEFAULT_SUITE_TIMEOUT = 300.0
_PROCESS_GRACE = 10.0
_CONTRACT_BUDGET = 5.0  # seconds to check the requests mocks with a contract received


class TestRunState:
    """A test run's live state: what its owner gives it, and sees of it while it runs."""

    def __init__(
        self,
        run_id: str,
        log: EventLog,
        selection: dict[str, set[str]] | None = None,
        given: GivenSuites = NO_SUITES,
    ) -> None:
        self.run_id = run_id
        self.log = log
        self.selection = selection
        self.given = given
        self.synthetic = {suite.id: (suite, test) for suite, test in given.suites}
        self.environment_optional = given.environment_optional
        self.stop: anyio.CancelScope | None = None
        self.cancel_requested = False
        self.context: RunContext | None = None
        self.results: dict[str, SuiteResult] = {}
        self.suites: list[SuiteConfig] = []
        self.phase: str | None = None
        self.redactor: Redactor | None = None  # every output of the run shows secrets replaced
        self.began = time.perf_counter()  # the run's duration counts from here: set-up included
        self.engine: str | None = None  # the engine this run's suites run on, in a sharded run
        self.setup: SetupResult | None = None  # what bringing the environment up to date did
        self.order: CaseOrder | None = None  # affected cases first, carried ones not run
        # The finished cases as outputs show them (secrets replaced), kept as they come: a live
        # run's snapshot, taken every few seconds, then redacts each case once, not at each snapshot.
        self._shown: list[CaseResult] = []
        self._shown_of: list[CaseResult] | None = None

    def tagged(self, suite: SuiteResult) -> SuiteResult:
        """`suite` and its cases marked with the engine they ran on (in a sharded run)."""
        if self.engine is None:
            return suite
        cases = [msgspec.structs.replace(c, engine=self.engine) for c in suite.cases]
        return msgspec.structs.replace(suite, engine=self.engine, cases=cases)

    def shown_finished(self) -> list[CaseResult]:
        """Every case finished so far, in the order they finished, as outputs show them."""
        finished = self.context.finished if self.context is not None else []
        if self.redactor is None:
            return finished
        if self._shown_of is not finished:  # a new context: start again
            self._shown, self._shown_of = [], finished
        redactor = self.redactor
        self._shown.extend(_redacted_case(c, redactor) for c in finished[len(self._shown) :])
        return self._shown

    def cancel(self) -> None:
        """Stop the run: the suite in flight is cancelled (its teardown still runs), the rest skipped."""
        self.cancel_requested = True
        if self.stop is not None:
            self.stop.cancel()


async def run_suites(
    env: RunEnvironment,
    *,
    suite_ids: list[str] | None,
    parallel: bool | None,
    reporter: Reporter,
    state: TestRunState,
    warm: WarmPytest | None = None,
) -> RunResult:
    """Run the selected suites (all when `suite_ids` is None) against `env` and return the report
    (not yet written). `warm`: pytest interpreters kept warm since an earlier run, if any."""
    loaded = env.loaded
    suites = select_suites(loaded, suite_ids, {i: s for i, (s, _) in state.synthetic.items()})
    state.suites = suites
    given = {i: test for i, (_, test) in state.synthetic.items()}
    total = sum(_declared_cases(loaded, s, state.selection, given.get(s.id)) for s in suites)
    estimated = [s.id for s in suites if not _counted_ahead(loaded, s, state.selection, given.get(s.id))]
    run = RunContext(
        run_id=state.run_id,
        env=env,
        reporter=reporter,
        retry=loaded.config.tests.retry if loaded.config.tests else None,
        total_cases=total,
        log=state.log,
        selection=state.selection,
        warm_pytest=warm,
        estimated=estimated,
        order=state.order,
    )
    state.context = run
    state.redactor = loaded.redactor
    state.log.redactor = loaded.redactor
    results = state.results
    taken: set[str] = set()
    enabled, concurrency = _parallel(loaded, parallel)
    order = state.order
    for suite in suites:  # carried whole: nothing of it runs, not even its setup
        if order is not None and suite.id in order.whole:
            results[suite.id] = carried_suite(suite, list(order.carried.get(suite.id, {}).values()))
    running = suite_order([s for s in suites if s.id not in results], order)
    serial = [s for s in running if not (enabled and s.parallel)]
    together = [s for s in running if enabled and s.parallel]
    state.phase = "suites"
    state.log.record("PHASE_STARTED", phase="suites")
    try:
        with anyio.CancelScope() as stop:
            state.stop = stop
            if state.cancel_requested:
                stop.cancel()
            await run.contracts.fetch_served(running)  # the contracts services serve, read after setup
            for suite in serial:
                results[suite.id] = state.tagged(
                    await _run_one(run, loaded, suite, taken, given.get(suite.id))
                )
            if together:
                limiter = anyio.CapacityLimiter(concurrency)

                async def one(suite: SuiteConfig) -> None:
                    async with limiter:
                        done = await _run_one(run, loaded, suite, taken, given.get(suite.id))
                        results[suite.id] = state.tagged(done)

                async with anyio.create_task_group() as tg:
                    for suite in together:
                        tg.start_soon(one, suite)
    finally:
        state.log.record("PHASE_FINISHED", phase="suites")
        state.phase = "teardown"
        state.log.record("PHASE_STARTED", phase="teardown")
        with anyio.CancelScope(shield=True):
            await run.http.aclose()
            await run.browser.aclose()
            await record_mock_traffic(run)
            with anyio.move_on_after(_CONTRACT_BUDGET):
                await run.contracts.check_mock_traffic(run.env.mock_entries, run.started, run.finished)
        state.log.record("PHASE_FINISHED", phase="teardown")
    run.full_failures = {
        key: loaded.redactor.scrub(redact_failure(f, loaded.redactor)) for key, f in run.full_failures.items()
    }
    cancelled = stop.cancelled_caught or state.cancel_requested
    return partial_result(state, status="cancelled" if cancelled else None)


def partial_result(state: TestRunState, *, status: str | None = None) -> RunResult:
    """The run as it stands: finished suites, and the finished cases of the others.

    With `status` None the run is complete and its status follows its cases; otherwise (`running`,
    `cancelled`, …) the suites not finished are listed with the cases they finished.
    """
    run = state.context
    by_suite: dict[str, list[CaseResult]] = {}
    for case in state.shown_finished() if status is not None else ():  # a complete run lists none
        by_suite.setdefault(case.suite, []).append(case)
    ordered: list[SuiteResult] = []
    for suite in state.suites:
        done = state.results.get(suite.id)
        if done is not None:
            ordered.append(_redacted(done, state.redactor) if state.redactor else done)
            continue
        cases = by_suite.get(suite.id, [])
        if status is None or (not cases and status == "running"):
            continue
        ordered.append(
            SuiteResult(
                id=suite.id,
                name=suite.name or suite.id,
                runner=suite.runner,
                status="failed" if any(c.status == "failed" for c in cases) else "skipped",
                duration=0,
                passed=sum(c.status == "passed" for c in cases),
                failed=sum(c.status == "failed" for c in cases),
                skipped=sum(c.status == "skipped" for c in cases),
                cases=cases,
                error=None if status == "running" else f"not finished: the run was {status}",
            )
        )
        if status == "cancelled" and run is not None:
            run.log.record("SUITE_FINISHED", suite=suite.id, status="cancelled")
    return _assemble(state, ordered, status)


def select_suites(
    loaded: LoadedConfig, suite_ids: list[str] | None, extra: Mapping[str, SuiteConfig] | None = None
) -> list[SuiteConfig]:
    """The suites to run, in the order asked (all, in file order, when `suite_ids` is None).

    `extra` are suites from elsewhere than e2e.yaml (saved suites), addressable by their ids.
    """
    suites = loaded.suites
    if suite_ids is None:
        return suites
    known = {s.id: s for s in suites}
    known.update(extra or {})
    unknown = [i for i in suite_ids if i not in known]
    if unknown:
        raise InputError(
            f"no suite with id {', '.join(f'`{u}`' for u in unknown)}",
            code="SUITE_NOT_FOUND",
            hint=f"valid suite ids: {', '.join(known) or '(none configured)'}",
            details={"unknown": unknown, "valid": list(known)},
        )
    return [known[i] for i in dict.fromkeys(suite_ids)]


def _parallel(loaded: LoadedConfig, override: bool | None) -> tuple[bool, int]:
    setting = loaded.config.tests.parallel if loaded.config.tests else None
    concurrency = setting.concurrency if isinstance(setting, ParallelConfig) else 4
    enabled = setting.enabled if isinstance(setting, ParallelConfig) else bool(setting)
    return (override if override is not None else enabled), concurrency


def _counted_ahead(
    loaded: LoadedConfig, suite: SuiteConfig, selection: dict[str, set[str]] | None, given: TestFile | None
) -> bool:
    """Whether `_declared_cases` knows the suite's cases before it runs: a pytest or playwright
    suite's are only known once it has collected them (it counts as one until then)."""
    chosen = selection.get(suite.id) if selection is not None else None
    return chosen is not None or suite.runner not in ("pytest", "playwright", "fuzz") or given is not None


def _declared_cases(
    loaded: LoadedConfig, suite: SuiteConfig, selection: dict[str, set[str]] | None, given: TestFile | None
) -> int:
    chosen = selection.get(suite.id) if selection is not None else None
    if chosen is not None:
        return len(chosen)
    test = given or loaded.test_files.get(suite.id)
    return len(test.cases) if test is not None else 1


async def _run_one(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str], given: TestFile | None = None
) -> SuiteResult:
    """Run one suite of any runner; a suite that cannot run at all is a failed suite with its error.

    `given` is the test file of a suite that has none on disk (a saved suite).

    `suite_start` is recorded here, before the test file is even read, so every `suite_end` has
    its start, including a suite whose file does not load.
    """
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else _DEFAULT_SUITE_TIMEOUT
    stopped = run.stop_reason()
    if stopped is not None:  # not started: skipped (a suite in flight skips its cases itself)
        carried = run.order.carried.get(suite.id, {}) if run.order is not None else {}
        return carried_suite(suite, list(carried.values()), stopped=stopped)
    started = time.perf_counter()
    run.reporter.step(f"suite {suite.id}", scope=suite.id)
    run.event("suite_start", suite=suite.id)
    # Every runner keeps its own deadline and reports it with the cases it finished (YAML suites
    # then still run their teardown): this outer one only catches a runner that hangs past that.
    outer = timeout + _PROCESS_GRACE + (TEARDOWN_LIMIT if suite.runner == "yaml" else 0.0)
    try:
        with anyio.fail_after(outer):
            if suite.runner == "yaml":
                test = given
                if test is None:
                    test = await anyio.to_thread.run_sync(test_file, loaded.resolve(suite.file or ""))
                return await run_yaml_suite(run, loaded, suite, test, taken, timeout=timeout)
            if suite.runner == "playwright":
                return await run_playwright_suite(run, loaded, suite, taken)
            if suite.runner == "pytest":
                return await run_pytest_suite(run, loaded, suite, taken)
            if suite.runner == "fuzz":
                return await run_fuzz_suite(run, loaded, suite, taken, timeout=timeout)
            return await run_shell_suite(run, loaded, suite, taken)
    except TimeoutError:
        error = f"the suite did not finish within {timeout_text(suite)} and was stopped"
    except ConfigError as exc:
        error = str(exc)
    except PreflightError as exc:
        error = f"[{exc.code}] {exc.message}"
    return run.finish_suite(suite, suite.runner, cases=[], seconds=time.perf_counter() - started, error=error)


def test_file(path: Path) -> TestFile:
    """Load a suite's test file (blocking), read at each run so an edit made after `init` is seen;
    parsed again only when its content changed (see `load_test_file`)."""
    return load_test_file(path)


def _redacted_case(case: CaseResult, redactor: Redactor) -> CaseResult:
    named = (
        msgspec.structs.replace(case, failure=redact_failure(case.failure, redactor))
        if case.failure
        else case
    )
    return redactor.scrub(named)


def _redacted(suite: SuiteResult, redactor: Redactor) -> SuiteResult:
    """The suite as every output shows it (report, junit, cases files, replies): secrets replaced."""
    cases = [_redacted_case(c, redactor) for c in suite.cases]
    error = redactor.text(suite.error) if suite.error else suite.error
    return redactor.scrub(msgspec.structs.replace(suite, cases=cases, error=error))


def _assemble(state: TestRunState, suites: list[SuiteResult], status_override: str | None) -> RunResult:
    run = state.context
    cases: list[CaseResult] = [c for s in suites for c in s.cases]
    totals = Totals(
        passed=sum(c.status == "passed" for c in cases),
        failed=sum(c.status == "failed" for c in cases),
        skipped=sum(c.status == "skipped" for c in cases),
        total=sum(c.status != "carried" for c in cases),
        carried=sum(c.status == "carried" for c in cases),
    )
    verdict = "failed" if totals.failed or any(s.status == "failed" for s in suites) else "passed"
    status = status_override or verdict
    started = run.started if run is not None else datetime.now(UTC)
    return RunResult(
        run_id=state.run_id,
        status=status,  # type: ignore[arg-type]
        summary=_summary(suites, totals, status),
        totals=totals,
        duration=int((time.perf_counter() - state.began) * 1000),
        suites=suites,
        started_at=started.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        selected_suites=[s.id for s in state.suites],
        trace_id=state.log.trace_id,
        contracts=run.contracts.report() if run is not None and run.contracts.active else None,
        warnings=list(run.contracts.run_warnings) if run is not None else [],
    )


def _summary(suites: list[SuiteResult], totals: Totals, status: str) -> str:
    text = f"{status}: {len(suites)} suite(s), {totals.total} case(s): {totals.passed} passed, {totals.failed} failed"
    if totals.skipped:
        text += f", {totals.skipped} skipped"
    if totals.carried:
        text += f"; {carried_text(suites)}"
    broken = [s for s in suites if s.error]
    first = next((c for s in suites for c in s.cases if c.status == "failed" and c.failure), None)
    if first is not None and first.failure is not None:
        text += f". First failure {first.id}: {first.failure.summary}"
    elif broken:
        text += f". Suite {broken[0].id}: {broken[0].error}"
    return text[:400]


def carried_text(suites: Sequence[SuiteResult]) -> str:
    """`188 cases carried from run 01J… (3m old)`, or `… from 3 runs, the newest 01J… (3m old)`."""
    sources: dict[str, int] = {}
    ages: dict[str, int] = {}
    for case in (c for s in suites for c in s.cases if c.carried is not None):
        assert case.carried is not None
        sources[case.carried.run_id] = sources.get(case.carried.run_id, 0) + 1
        ages[case.carried.run_id] = case.carried.age
    count = sum(sources.values())
    newest = max(sources)
    age = _age(ages[newest])
    if len(sources) == 1:
        return f"{count} case(s) carried from run {newest} ({age} old)"
    return f"{count} case(s) carried from {len(sources)} runs, the newest {newest} ({age} old)"


def _age(ms: int) -> str:
    seconds = ms // 1000
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _now() -> datetime:
    return datetime.now(UTC)
