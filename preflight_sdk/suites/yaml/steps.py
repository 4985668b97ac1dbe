"""Run one step of a YAML test (render, act, check), with polling when its `retry` is a poll.

A step's fields are rendered against the suite's variables right before it runs, so values saved
by earlier steps are available and keep their types; an unknown variable fails the step with a
message naming it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import anyio
import msgspec

from preflight_sdk.config.testfile import MockExpect, TestStep, WaitHealthy
from preflight_sdk.core import decoding
from preflight_sdk.core.assertions import AssertionResult, passed
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.templates import UnknownVariableError
from preflight_sdk.mocks import evaluate_mock_expect

from ..browser import BrowserRun, run_browser_step
from ..context import CURRENT_CASE, RunContext
from ..contract_checks import Mode
from ..outcome import StepOutcome
from .actions import run_exec, run_file, run_port, run_process, wait_for_port, wait_healthy
from .expect import evaluate_expect
from .expressions import resolve_path
from .http import send
from .scope import Scope

__all__ = ["Attempt", "StepSettings", "StepWindows", "run_step", "save_values"]

_MAX_POLLS_RECORDED = 20


class Attempt(msgspec.Struct, kw_only=True):
    """One execution of a step and its verdict."""

    step: TestStep
    outcome: StepOutcome | None
    assertions: list[AssertionResult]
    error: str | None
    passed: bool
    polls: int = 1


class StepWindows(msgspec.Struct, kw_only=True):
    """Where mock traffic checks start: this case, this suite, or the run."""

    case: datetime
    suite: datetime
    run: datetime


class StepSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How a suite runs a step: the service it acts on when it names none, the windows its mock
    checks count requests in, and how its answers are held to their contracts."""

    default_service: str | None
    windows: StepWindows
    contract: Mode = "off"
    suite: str = ""


async def run_step(run: RunContext, scope: Scope, raw: TestStep, settings: StepSettings) -> Attempt:
    """Render `raw`, execute it (polling if asked) and check its expectations.

    With `settings.contract` `fail` or `warn`, an answer of a service with a contract is also
    checked against it: its violations are failed assertions, or warnings of `settings.suite`.
    """
    try:
        step = _render(scope, raw)
    except UnknownVariableError as exc:
        why = scope.why_unknown(exc.name)
        error = f"{exc.message}: {why}" if why else f"{exc.message} ({exc.hint})"
        return Attempt(step=raw, outcome=None, assertions=[], error=error, passed=False)
    except msgspec.ValidationError as exc:
        return Attempt(
            step=raw,
            outcome=None,
            assertions=[],
            error=f"after filling in variables, the step is invalid: {exc}",
            passed=False,
        )
    retry = step.retry
    default_service, windows = settings.default_service, settings.windows
    if retry is not None and (retry.until is not None or retry.fail_if is not None):
        attempt = await _poll(run, step, default_service=default_service, windows=windows)
    else:
        attempt = await _once(run, step, default_service=default_service, windows=windows)
    contract = settings.contract
    if contract != "off" and step.contract and step.request is not None and attempt.outcome is not None:
        checks = await _contract_checks(run, step, attempt.outcome, default_service, settings.suite, contract)
        if checks:
            attempt.assertions += checks
            attempt.passed = attempt.passed and passed(checks)
    return attempt


async def _contract_checks(
    run: RunContext, step: TestStep, outcome: StepOutcome, default: str | None, suite: str, mode: Mode
) -> list[AssertionResult]:
    if not run.contracts.active or outcome.error:
        return []
    request = step.request
    assert request is not None
    service = None
    if request.path is not None:
        service = request.service or default or next((n for n, e in run.env.services.items() if e.url), None)
    return await run.contracts.check_answer(
        outcome, service=service, path=request.path, suite=suite, mode=mode
    )


async def _once(
    run: RunContext, step: TestStep, *, default_service: str | None, windows: StepWindows
) -> Attempt:
    if step.browser is not None:
        return await _browser(run, step, default_service=default_service, windows=windows)
    outcome = await _act(run, step, default_service)
    if outcome.error:
        return Attempt(
            step=step, outcome=outcome, assertions=list(outcome.checks), error=outcome.error, passed=False
        )
    assertions = list(outcome.checks)
    if step.expect is not None:
        assertions += await evaluate_expect(step.expect, outcome, mocks=_mock_checker(run, windows))
    return Attempt(step=step, outcome=outcome, assertions=assertions, error=None, passed=passed(assertions))


async def _browser(
    run: RunContext, step: TestStep, *, default_service: str | None, windows: StepWindows
) -> Attempt:
    """A browser step checks its expectations itself, while its page is still open."""
    assert step.browser is not None
    expect = step.expect

    async def finish(outcome: StepOutcome) -> list[AssertionResult]:
        checker = _mock_checker(run, windows)
        return [] if expect is None else await evaluate_expect(expect, outcome, mocks=checker)

    where = BrowserRun(folder=run.folder, case=CURRENT_CASE.get(), redactor=run.env.redactor)
    base_url = run.env.base_url(step.browser.service or default_service)
    outcome, assertions, error = await run_browser_step(
        run.browser, step.browser, expect, base_url=base_url, where=where, finish=finish
    )
    return Attempt(
        step=step,
        outcome=outcome,
        assertions=assertions,
        error=error,
        passed=error is None and passed(assertions),
    )


async def _poll(
    run: RunContext, step: TestStep, *, default_service: str | None, windows: StepWindows
) -> Attempt:
    retry = step.retry
    assert retry is not None
    interval = parse_duration(retry.interval) if retry.interval is not None else 0.5
    deadline = time.monotonic() + (parse_duration(retry.deadline) if retry.deadline is not None else 30.0)
    polls = 0
    checker = _mock_checker(run, windows)
    while True:
        polls += 1
        outcome = await _act(run, step, default_service)
        if not outcome.error:
            if retry.fail_if is not None:
                terminal = await evaluate_expect(retry.fail_if, outcome, mocks=checker)
                if passed(terminal):
                    error = f"the failIf condition held after {polls} poll(s): polling stopped"
                    return Attempt(
                        step=step,
                        outcome=outcome,
                        assertions=terminal,
                        error=error,
                        passed=False,
                        polls=polls,
                    )
            done = retry.until is None or passed(await evaluate_expect(retry.until, outcome, mocks=checker))
            if done:
                assertions = list(outcome.checks)
                if step.expect is not None:
                    assertions += await evaluate_expect(step.expect, outcome, mocks=checker)
                return Attempt(
                    step=step,
                    outcome=outcome,
                    assertions=assertions,
                    error=None,
                    passed=passed(assertions),
                    polls=polls,
                )
        if time.monotonic() >= deadline:
            last = (
                await evaluate_expect(retry.until, outcome, mocks=checker)
                if retry.until is not None and not outcome.error
                else []
            )
            error = (
                outcome.error
                or f"the until condition did not hold within {retry.deadline or '30s'} ({polls} polls)"
            )
            return Attempt(
                step=step, outcome=outcome, assertions=last, error=error, passed=False, polls=polls
            )
        await anyio.sleep(min(interval, max(0.0, deadline - time.monotonic())))


async def _act(run: RunContext, step: TestStep, default_service: str | None) -> StepOutcome:
    env = run.env
    try:
        if step.request is not None:
            target = step.request.service or default_service
            return await send(
                run.http, step.request, base_url=env.base_url(target), traceparent=run.traceparent()
            )
        if step.exec is not None:
            return await run_exec(env, _with_container(step.exec, default_service))
        if step.file is not None:
            return await run_file(env, _with_container(step.file, default_service))
        if step.process is not None:
            return await run_process(env, _with_container(step.process, default_service))
        if step.port is not None:
            return await run_port(env, step.port)
        if step.wait_healthy not in (None, False):
            wait = step.wait_healthy if isinstance(step.wait_healthy, WaitHealthy) else WaitHealthy()
            return await wait_healthy(env, wait)
        if step.wait_for_port is not None:
            return await wait_for_port(step.wait_for_port)
    except PreflightError as exc:
        return StepOutcome(kind="exec", error=exc.message, error_kind="engine")
    return StepOutcome(kind="wait")  # a bare `delay` step


def _with_container(action: Any, default_service: str | None) -> Any:
    if getattr(action, "container", None) is None and default_service is not None:
        return msgspec.structs.replace(action, container=default_service)
    return action


def _mock_checker(run: RunContext, windows: StepWindows) -> Any:
    async def check(expect: MockExpect) -> list[AssertionResult]:
        since = {"case": windows.case, "suite": windows.suite, "run": windows.run}[expect.since]
        entries = await run.env.mock_entries(expect.name, since)
        if expect.name not in run.env.mocks:
            return [
                AssertionResult(
                    path=f"mock.{expect.name}",
                    operator="exists",
                    expected=True,
                    actual=None,
                    passed=False,
                    message=f"mock.{expect.name}: no such mock (mocks: {', '.join(run.env.mocks) or 'none'})",
                )
            ]
        results = evaluate_mock_expect(expect, entries)
        if expect.contract:
            results += run.contracts.check_mock_expect(expect, entries)
        return results

    return check


def _render(scope: Scope, step: TestStep) -> TestStep:
    if b"{{" not in msgspec.json.encode(step):
        return step  # nothing to fill in: skip the round trip through builtins
    raw = msgspec.to_builtins(step)
    for key in ("save",):  # paths to read, not values to fill
        raw.pop(key, None)
    rendered = scope.render(raw)
    rendered["save"] = step.save
    # Lax: a value filled in from the environment is text, and `port: "{{env.PORT}}"` means a number.
    return decoding.convert(rendered, TestStep, strict=False)


def save_values(scope: Scope, attempt: Attempt, *, origin: str = "") -> list[str]:
    """Keep the values a step's `save` asks for; return the names that could not be read.

    A path the outcome does not have leaves the name undefined (never a silent null), and a
    later use of it fails saying which step did not provide it.
    """
    outcome = attempt.outcome
    missing: list[str] = []
    where = f" of {origin}" if origin else ""
    for name, path in attempt.step.save.items():
        value = _MISSING if outcome is None else _read(outcome.context(), path)
        if value is _MISSING:
            missing.append(name)
            reason = (
                f"the step{where} failed before it had a result to read `{path}` from"
                if outcome is None or outcome.error
                else f"`{path}` was not in the result{where}"
            )
            scope.unsave(name, reason)
        else:
            scope.save(name, value)
    return missing


_MISSING = object()


def _read(context: dict[str, Any], path: str) -> Any:
    path = path.strip()
    if path in ("status", "responseTime", "exitCode", "output", "stdout", "stderr"):
        value = context.get(path)
        return _MISSING if value is None else value
    if path.startswith(("body.", "headers.", "body[")) or path == "body":
        return resolve_path(context, path, _MISSING)
    # A bare path reads the JSON body (the original format: `save: {id: "data.id"}`).
    return resolve_path({"body": context.get("body")}, f"body.{path}", _MISSING)


def now() -> datetime:
    """The current time (UTC)."""
    return datetime.now(UTC)
