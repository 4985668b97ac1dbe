"""The YAML runner: variables, setup, cases (with retries), teardown; AI-friendly failures.

- `setup` failing (and not `ignoreError`) skips every case, with the reason;
- `sequential: true` fails fast: after a failure the remaining cases are skipped;
- `teardown` always runs; its failures are suite warnings;
- a case is retried by its own policy, else its suite's, else `tests.retry`; each attempt is kept.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import anyio

from ..config import LoadedConfig, SuiteConfig, TestFile, TestStep
from ..durations import parse_duration
from ..results.run import AttemptResult, CaseResult, SuiteResult
from .cases import failure_for
from .context import RunContext, case_id
from .retry import Policy, resolve_policy
from .scope import Scope
from .steps import Attempt, StepWindows, run_step, save_values

__all__ = ["run_yaml_suite"]


async def run_yaml_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, test: TestFile, taken: set[str]
) -> SuiteResult:
    """Run one YAML suite and return its result."""
    started = time.perf_counter()
    suite_start = datetime.now(UTC)
    name = suite.name or test.name or suite.id
    run.event("suite_start", suite=suite.id)
    scope = Scope(environ=loaded.environ, config_vars=_config_vars(loaded), environment=run.env.variables())
    default_service = test.service
    cases: list[CaseResult] = []
    warnings: list[str] = []
    blocked: str | None = None
    try:
        scope.define(test.variables)
    except Exception as exc:
        blocked = f"the suite's variables cannot be resolved: {getattr(exc, 'message', exc)}"
    windows = StepWindows(case=suite_start, suite=suite_start, run=run.started)
    if blocked is None:
        for index, step in enumerate(test.setup):
            if _bare_delay(step):
                if step.delay is not None:
                    await anyio.sleep(parse_duration(step.delay))
                continue
            windows.case = datetime.now(UTC)
            # setup and teardown steps retry by their own policy only (not the suite's or run's)
            own = resolve_policy(step.retry, None, None)
            attempt, _ = await _attempts(run, scope, step, own, default_service, windows)
            save_values(scope, attempt, origin=f"setup step {index + 1}")
            if not attempt.passed and not step.ignore_error:
                blocked = f"setup step {index + 1} ({step.name or _action(step)}) failed: {_reason(attempt)}"
                break
    failed_before = False
    for case in test.cases:
        identifier = case_id(suite.id, case.name or "case", taken)
        run.event("case_start", suite=suite.id, case=identifier)
        reason = None
        if blocked is not None:
            reason = blocked
        elif case.skip:
            reason = case.skip if isinstance(case.skip, str) else "marked skip"
        elif test.sequential and failed_before:
            reason = "an earlier case failed and the suite is sequential"
        if reason is not None:
            result = CaseResult(
                id=identifier,
                name=case.name or "case",
                suite=suite.id,
                status="skipped",
                duration=0,
                timestamp=_now_ms(),
                skip_reason=reason,
            )
        else:
            result = await _run_case(
                run, loaded, suite, scope, case, identifier, default_service, windows, warnings
            )
            failed_before = failed_before or result.status == "failed"
        cases.append(result)
        run.case_finished(result)
    for step in test.teardown:
        if _bare_delay(step):
            if step.delay is not None:
                await anyio.sleep(parse_duration(step.delay))
            continue
        windows.case = datetime.now(UTC)
        own = resolve_policy(step.retry, None, None)
        attempt, _ = await _attempts(run, scope, step, own, default_service, windows)
        if not attempt.passed and not step.ignore_error:
            warnings.append(f"teardown step {step.name or _action(step)} failed: {_reason(attempt)}")
    if not test.cases:
        blocked = blocked or "the test file declares no cases"
    return run.finish_suite(
        id=suite.id,
        name=name,
        runner="yaml",
        cases=cases,
        seconds=time.perf_counter() - started,
        error=blocked,
        warnings=warnings,
    )


async def _run_case(
    run: RunContext,
    loaded: LoadedConfig,
    suite: SuiteConfig,
    scope: Scope,
    case: TestStep,
    identifier: str,
    default_service: str | None,
    windows: StepWindows,
    warnings: list[str],
) -> CaseResult:
    global_retry = loaded.config.tests.retry if loaded.config.tests else None
    policy = resolve_policy(case.retry, suite.retry, global_retry)
    started = time.perf_counter()
    case_start = datetime.now(UTC)
    windows.case = case_start
    last, attempts = await _attempts(run, scope, case, policy, default_service, windows)
    save_values(scope, last, origin=f"case `{case.name or 'case'}`")
    duration = int((time.perf_counter() - started) * 1000)
    multi = attempts if len(attempts) > 1 else None
    if not last.passed and case.ignore_error:
        warnings.append(f"case `{case.name or 'case'}` failed (ignoreError): {_reason(last)}")
    if last.passed or case.ignore_error:
        return CaseResult(
            id=identifier,
            name=case.name or "case",
            suite=suite.id,
            status="passed",
            duration=duration,
            timestamp=_now_ms(),
            attempts=multi,
        )
    target = _target(case, default_service, run)
    failure = await failure_for(run, identifier, last, start=case_start, end=datetime.now(UTC), target=target)
    return CaseResult(
        id=identifier,
        name=case.name or "case",
        suite=suite.id,
        status="failed",
        duration=duration,
        timestamp=_now_ms(),
        failure=failure,
        attempts=multi,
    )


async def _attempts(
    run: RunContext,
    scope: Scope,
    step: TestStep,
    policy: Policy,
    default_service: str | None,
    windows: StepWindows,
) -> tuple[Attempt, list[AttemptResult]]:
    """Run `step` until it passes or `policy` is spent (its `delay` before each attempt)."""
    attempts: list[AttemptResult] = []
    last: Attempt | None = None
    for number in range(1, policy.max_attempts + 1):
        if step.delay is not None:
            await anyio.sleep(parse_duration(step.delay))
        if number > 1:
            await anyio.sleep(policy.waits[number - 2])
        attempt_start = time.perf_counter()
        stamp = _now_ms()
        last = await run_step(run, scope, step, default_service=default_service, windows=windows)
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


def _target(case: TestStep, default_service: str | None, run: RunContext) -> str | None:
    action = case.request or case.exec or case.file or case.process
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
        for field in ("request", "exec", "file", "process", "port", "wait_healthy", "wait_for_port")
    )


def _action(step: TestStep) -> str:
    for field in ("request", "exec", "file", "process", "port", "wait_healthy", "wait_for_port"):
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
