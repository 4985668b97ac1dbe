"""The YAML runner: variables, setup, cases (with retries), teardown; AI-friendly failures.

- `setup` failing (and not `ignoreError`) skips every case, with the reason;
- `sequential: true` fails fast: after a failure the remaining cases are skipped;
- setup and cases share the suite's `timeout`: when it passes, the cases finished so far are
  kept, the case in flight fails (with the diagnostics of its window) and the rest are skipped;
- `teardown` always runs, even after that timeout or a cancelled run, within its own deadline
  (`TEARDOWN_LIMIT`); its failures are suite warnings;
- every step's answer is held to its service's contract, setup's and teardown's as a case's;
- a case is retried by its own policy, else its suite's, else `tests.retry`; each attempt is kept,
  and `expect.mock` of each attempt counts only that attempt's mock traffic.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig, TestFile, TestStep
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.results.run import AttemptResult, CaseResult, SuiteResult

from ..cases import failure_for, failure_from_text, window_diagnostics
from ..context import CURRENT_CASE, RunContext, case_id
from ..ordering import case_order
from ..retry import Policy, resolve_policy
from ..touches import UNKNOWN, step_touches
from .scope import Scope
from .steps import Attempt, StepSettings, StepWindows, run_step, save_values

__all__ = ["TEARDOWN_LIMIT", "run_yaml_suite", "timeout_text"]

# Teardown runs after the suite's own deadline: bounded separately so a hanging clean-up step
# cannot hold the run forever.
TEARDOWN_LIMIT = 30.0


class _Running(msgspec.Struct, kw_only=True):
    """The case in flight, so a timeout can say which one it stopped."""

    identifier: str
    name: str
    started: datetime


class _SuiteRun:
    """What one suite's run has so far; kept outside the timed part so a timeout loses none of it."""

    def __init__(self, run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, test: TestFile) -> None:
        self.run = run
        self.loaded = loaded
        self.suite = suite
        self.test = test
        self.started = datetime.now(UTC)
        self.scope = Scope(
            environ=loaded.environ, config_vars=_config_vars(loaded), environment=run.env.variables()
        )
        self.windows = StepWindows(case=self.started, suite=self.started, run=run.started)
        self.cases: list[CaseResult] = []
        self.warnings: list[str] = []
        self.blocked: str | None = None
        self.running: _Running | None = None
        self.reached = 0  # cases of `order` reached so far (selected or not)
        self.order: list[tuple[TestStep, str]] = []  # (case, its id) in the order they run

    def add(self, result: CaseResult) -> None:
        self.cases.append(result)
        self.running = None
        self.run.case_finished(result)


def timeout_text(suite: SuiteConfig) -> str:
    """The suite's timeout as written in e2e.yaml (`300ms`, `2m`; `5m` when unset)."""
    return f"{suite.timeout}ms" if isinstance(suite.timeout, int) else suite.timeout or "5m"


async def run_yaml_suite(
    run: RunContext,
    loaded: LoadedConfig,
    suite: SuiteConfig,
    test: TestFile,
    taken: set[str],
    *,
    timeout: float,
) -> SuiteResult:
    """Run one YAML suite (setup and cases within `timeout` seconds, then teardown) and return its result.

    The caller records `suite_start`; this records every case's start and end, and `suite_end`.
    """
    began = time.perf_counter()
    state = _SuiteRun(run, loaded, suite, test)
    identifiers = [case_id(suite.id, case.name or "case", taken) for case in test.cases]
    indices = case_order(identifiers, suite.id, test.sequential, run.order)
    state.order = [(test.cases[i], identifiers[i]) for i in indices]
    try:
        with anyio.move_on_after(timeout) as limit:
            _define_variables(state)
            await _setup(state)
            await _cases(state)
        if limit.cancelled_caught:
            await _stopped(state)
    finally:
        # Shielded: a timeout or a cancelled run must not skip the clean-up, but it gets a deadline.
        with anyio.CancelScope(shield=True, deadline=anyio.current_time() + TEARDOWN_LIMIT) as shield:
            await _teardown(state)
        if shield.cancelled_caught:
            state.warnings.append(f"teardown did not finish within {TEARDOWN_LIMIT:g}s and was stopped")
    if not test.cases:
        state.blocked = state.blocked or "the test file declares no cases"
    return run.finish_suite(
        suite,
        "yaml",
        name=suite.name or test.name,
        cases=state.cases,
        seconds=time.perf_counter() - began,
        error=state.blocked,
        warnings=state.warnings + run.contracts.warnings.pop(suite.id, []),
    )


def _define_variables(state: _SuiteRun) -> None:
    try:
        state.scope.define(state.test.variables)
    except Exception as exc:
        state.blocked = f"the suite's variables cannot be resolved: {getattr(exc, 'message', exc)}"


async def _setup(state: _SuiteRun) -> None:
    """Run the setup steps in order; the first failing one (without ignoreError) blocks the cases."""
    if state.blocked is not None:
        return
    CURRENT_CASE.set(None)  # not a case: its trace span and its files are the suite's, not a case's
    for index, step in enumerate(state.test.setup):
        if await _bare_delay_done(step):
            continue
        attempt = await _suite_step(state, step)
        save_values(state.scope, attempt, origin=f"setup step {index + 1}")
        if not attempt.passed and not step.ignore_error:
            state.blocked = (
                f"setup step {index + 1} ({step.name or _action(step)}) failed: {_reason(attempt)}"
            )
            return


async def _cases(state: _SuiteRun) -> None:
    failed_before = False
    for case, identifier in state.order:
        state.reached += 1
        if not state.run.selected(state.suite.id, identifier):
            _not_run(state, identifier)
            continue
        CURRENT_CASE.set(identifier)
        state.run.event("case_start", suite=state.suite.id, case=identifier)
        reason = _skip_reason(state, case, failed_before=failed_before)
        if reason is not None:
            state.add(_skipped(state.suite, case, identifier, reason))
            continue
        state.running = _Running(identifier=identifier, name=case.name or "case", started=datetime.now(UTC))
        result = await _run_case(state, case, identifier)
        failed_before = failed_before or result.status == "failed"
        state.add(result)


def _not_run(state: _SuiteRun, identifier: str) -> None:
    """A case this run does not run: what it saved the time it ran, later cases still see (a
    resumed run); its earlier verdict stands at its place when the run carries it."""
    for name, value in state.run.carried(state.suite.id, identifier):
        state.scope.save(name, value)
    order = state.run.order
    carried = order.carried_case(state.suite.id, identifier) if order is not None else None
    if carried is not None:
        state.cases.append(carried)


def _skip_reason(state: _SuiteRun, case: TestStep, *, failed_before: bool) -> str | None:
    if state.blocked is not None:
        return state.blocked
    if case.skip:
        return case.skip if isinstance(case.skip, str) else "marked skip"
    if state.test.sequential and failed_before:
        return "an earlier case failed and the suite is sequential"
    return state.run.stop_reason()


async def _stopped(state: _SuiteRun) -> None:
    """Record the suite's timeout: the case in flight fails, the cases not reached are skipped."""
    shown = timeout_text(state.suite)
    state.blocked = f"the suite did not finish within {shown} and was stopped"
    remaining = state.order[state.reached :]
    running = state.running
    if running is not None:
        state.add(await _timed_out(state, running, shown))
    for case, identifier in remaining:
        if not state.run.selected(state.suite.id, identifier):
            _not_run(state, identifier)
            continue
        state.run.event("case_start", suite=state.suite.id, case=identifier)
        reason = f"not run: the suite was stopped at its timeout ({shown})"
        state.add(_skipped(state.suite, case, identifier, reason))


async def _timed_out(state: _SuiteRun, running: _Running, shown: str) -> CaseResult:
    end = datetime.now(UTC)
    error = f"stopped by the suite's timeout ({shown}) before it finished"
    failure = failure_from_text(
        state.run,
        running.identifier,
        error=error,
        summary=f"`{running.name}` did not finish before the suite's timeout ({shown})",
        output=None,
        fix=(
            "find what the step waits for (the diagnostics show the logs and mock requests of that "
            "time); raise the suite's `timeout` in e2e.yaml, or give the step a shorter timeout of its "
            "own (request.timeout) so it fails by itself"
        ),
        diagnostics=await window_diagnostics(state.run, start=running.started, end=end),
    )
    return CaseResult(
        id=running.identifier,
        name=running.name,
        suite=state.suite.id,
        status="failed",
        duration=int((end - running.started).total_seconds() * 1000),
        timestamp=_now_ms(),
        failure=failure,
    )


async def _teardown(state: _SuiteRun) -> None:
    CURRENT_CASE.set(None)
    for step in state.test.teardown:
        if await _bare_delay_done(step):
            continue
        attempt = await _suite_step(state, step)
        if not attempt.passed and not step.ignore_error:
            state.warnings.append(f"teardown step {step.name or _action(step)} failed: {_reason(attempt)}")


async def _suite_step(state: _SuiteRun, step: TestStep) -> Attempt:
    """Run a setup or teardown step: by its own retry policy only (not the suite's or the run's),
    its answers held to their contracts like a case's, what it touched counted for the suite."""
    own = resolve_policy(step.retry, None, None)
    attempt, _ = await _attempts(state.run, state.scope, step, own, _settings(state, step))
    state.run.touches.note_suite(state.suite.id, _touched(state, attempt))
    return attempt


def _settings(state: _SuiteRun, step: TestStep) -> StepSettings:
    """How `step` runs in its suite; its answers are held to their contracts, a setup or teardown
    step's like a case's.

    A response is a response: a setup step whose answer breaks the contract fails like a failed
    assertion (the cases are skipped), a teardown step's is a suite warning, and in `warn` mode both
    are suite warnings. The step's `contract: false` opts out.
    """
    mode = state.run.contracts.mode(state.suite.contract) if step.contract else "off"
    return StepSettings(
        default_service=state.test.service, windows=state.windows, contract=mode, suite=state.suite.id
    )


async def _bare_delay_done(step: TestStep) -> bool:
    """Wait out a step that is only a `delay`; return whether it was one."""
    if not _bare_delay(step):
        return False
    if step.delay is not None:
        await anyio.sleep(parse_duration(step.delay))
    return True


def _skipped(suite: SuiteConfig, case: TestStep, identifier: str, reason: str) -> CaseResult:
    return CaseResult(
        id=identifier,
        name=case.name or "case",
        suite=suite.id,
        status="skipped",
        duration=0,
        timestamp=_now_ms(),
        skip_reason=reason,
    )


async def _run_case(state: _SuiteRun, case: TestStep, identifier: str) -> CaseResult:
    run, suite = state.run, state.suite
    global_retry = state.loaded.config.tests.retry if state.loaded.config.tests else None
    policy = resolve_policy(case.retry, suite.retry, global_retry)
    started = time.perf_counter()
    case_start = datetime.now(UTC)
    last, attempts = await _attempts(run, state.scope, case, policy, _settings(state, case))
    run.touches.note_case(identifier, suite.id, _touched(state, last))
    unsaved = save_values(state.scope, last, origin=f"case `{case.name or 'case'}`")
    if last.passed and case.save:
        saved = {name: state.scope.saved[name] for name in case.save if name in state.scope.saved}
        run.note_saved(suite.id, identifier, saved)
    if not last.passed and not case.ignore_error:
        for name in unsaved:  # a later case that needs it fails because of this one: say so there
            state.scope.unsave(
                name, f"case `{case.name or 'case'}`, which should have saved `{name}`, failed"
            )
    duration = int((time.perf_counter() - started) * 1000)
    # the case's window ends here, not after its diagnosis below, which can take seconds: what a mock
    # received in [timestamp - duration, timestamp] is attributed to this case
    ended = _now_ms()
    multi = attempts if len(attempts) > 1 else None
    if not last.passed and case.ignore_error:
        state.warnings.append(f"case `{case.name or 'case'}` failed (ignoreError): {_reason(last)}")
    failure = None
    if not (last.passed or case.ignore_error):
        target = _target(case, state.test.service, run)
        failure = await failure_for(
            run, identifier, last, start=case_start, end=datetime.now(UTC), target=target
        )
    return CaseResult(
        id=identifier,
        name=case.name or "case",
        suite=suite.id,
        status="passed" if failure is None else "failed",
        duration=duration,
        timestamp=ended,
        failure=failure,
        attempts=multi,
        pages=last.outcome.pages if last.outcome is not None else [],
    )


async def _attempts(
    run: RunContext, scope: Scope, step: TestStep, policy: Policy, settings: StepSettings
) -> tuple[Attempt, list[AttemptResult]]:
    """Run `step` until it passes or `policy` is spent (its `delay` before each attempt).

    The case window of mock checks (`expect.mock`, since: case) starts again with each attempt:
    the requests an earlier attempt caused are not counted for a later one.
    """
    attempts: list[AttemptResult] = []
    last: Attempt | None = None
    for number in range(1, policy.max_attempts + 1):
        if number > 1:
            await anyio.sleep(policy.waits[number - 2])
        settings.windows.case = datetime.now(UTC)
        if step.delay is not None:
            await anyio.sleep(parse_duration(step.delay))
        attempt_start = time.perf_counter()
        stamp = _now_ms()
        last = await run_step(run, scope, step, settings)
        attempts.append(
            AttemptResult(
                attempt=number,
                passed=last.passed,
                duration=int((time.perf_counter() - attempt_start) * 1000),
                timestamp=stamp,
                error=None if last.passed else _reason(last),
            )
        )
        if last.passed:
            break
    assert last is not None
    return last, attempts


def _touched(state: _SuiteRun, attempt: Attempt) -> set[str]:
    """What a step reached: its service or mock, its container (see `touches`)."""
    env = state.run.env
    if not env.services and not env.mocks:
        return {UNKNOWN}  # no environment: whatever a step reached lies outside it
    outcome = attempt.outcome
    sent = outcome.request.url if outcome and outcome.request else None
    return step_touches(
        attempt.step, state.run.env, state.test.service, sent, outcome.pages if outcome else ()
    )


def _target(case: TestStep, default_service: str | None, run: RunContext) -> str | None:
    action = case.request or case.exec or case.file or case.process or case.browser
    named = getattr(action, "service", None) or getattr(action, "container", None) or default_service
    if named is None and run.env.services:
        return next(iter(run.env.services))
    return named


def _config_vars(loaded: LoadedConfig) -> dict[str, object]:
    merged: dict[str, object] = {}
    for service in loaded.services:
        merged.update(service.vars)
    return merged


def _bare_delay(step: TestStep) -> bool:
    return all(
        getattr(step, field) in (None, False)
        for field in (
            "request",
            "exec",
            "file",
            "process",
            "port",
            "browser",
            "wait_healthy",
            "wait_for_port",
        )
    )


def _action(step: TestStep) -> str:
    for field in ("request", "exec", "file", "process", "port", "browser", "wait_healthy", "wait_for_port"):
        if getattr(step, field) not in (None, False):
            return field
    return "delay"


def _reason(attempt: Attempt) -> str:
    if attempt.error:
        return attempt.error
    failed = [a.message for a in attempt.assertions if not a.passed]
    return "; ".join(failed[:3]) + (f" (+{len(failed) - 3} more)" if len(failed) > 3 else "")


def _now_ms() -> int:
    return int(time.time() * 1000)
