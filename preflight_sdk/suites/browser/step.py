"""Run one `browser` step: a fresh context, the page, its actions, its expectations, its evidence.

The context (and its pages) lives exactly as long as the step: nothing a case did is seen by the
next. A Playwright trace is recorded while the step runs (`trace: false` turns it off) and kept
only when the step fails, like Playwright's `retain-on-failure`. Everything is checked while the
page is still open, so a failure's screenshot shows the page as the check saw it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from itertools import count
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.config.browser import BrowserStep
from preflight_sdk.config.testfile import Expect
from preflight_sdk.core.assertions import AssertionResult, passed
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.browser import BrowserEvidence

from ..outcome import StepOutcome
from .actions import ActionFailed, Navigation, goto, run_action, target_url
from .checks import has_page_checks, wait_for_page_checks
from .evidence import dom_excerpt, redact_trace, screenshot, thumbnail
from .host import BrowserHost
from .watch import PageWatch

__all__ = ["BrowserRun", "run_browser_step"]

# `status`, `mock` and the other checks of `expect` that are not read from the page, evaluated
# (with the page still open) against the step's outcome.
Finish = Callable[[StepOutcome], Awaitable[list[AssertionResult]]]


class BrowserRun(msgspec.Struct, kw_only=True):
    """Where a step's evidence goes: the run's folder, the case running (None in setup/teardown)."""

    folder: Path
    case: str | None
    redactor: Redactor


_steps = count(1)


async def run_browser_step(
    host: BrowserHost, step: BrowserStep, expect: Expect | None, *, base_url: str | None, where: BrowserRun,
    finish: Finish,
) -> tuple[StepOutcome, list[AssertionResult], str | None]:  # fmt: skip
    """Run `step` in the run's browser; return its outcome, every assertion, and its error (or None)."""
    started = time.perf_counter()
    try:
        browser = await host.browser()
    except PreflightError as exc:
        unavailable = f"[{exc.code}] {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
        return StepOutcome(kind="browser", error=unavailable, error_kind="browser"), [], unavailable
    timeout_ms = parse_duration(step.timeout, field="browser.timeout") * 1000
    context = await browser.new_context(**host.context_options(step.viewport))
    try:
        if step.trace:
            await context.tracing.start(snapshots=True, screenshots=False, sources=False)
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        watch = PageWatch(page, where.redactor)
        error: str | None = None
        failed_step: str | None = None
        selector: str | None = None
        navigation = Navigation()
        assertions: list[AssertionResult] = []
        typed: list[str] = []  # values typed into password (or secret-named) fields: kept out of the evidence
        try:
            url = target_url(step.goto, base_url)
            navigation = await goto(
                page, url, wait_until=step.wait_until, timeout_ms=timeout_ms, shown=step.goto
            )
            for action in step.actions:
                password = await run_action(page, action, base_url=base_url, timeout_ms=timeout_ms)
                if action.fill is not None and (password or where.redactor.secret(action.fill.selector)):
                    typed.append(str(action.fill.value))
        except ActionFailed as exc:
            error, failed_step, selector = where.redactor.text(exc.message), exc.step, exc.selector
        outcome = StepOutcome(
            kind="browser", status=navigation.status, error=error, error_kind="browser" if error else None
        )
        if error is None:
            if has_page_checks(expect):
                assert expect is not None
                wait = parse_duration(step.expect_timeout, field="browser.expectTimeout")
                page_results, selector = await wait_for_page_checks(page, expect, watch, timeout=wait)
                assertions += page_results
            assertions += await finish(outcome)
            if not passed(assertions):
                failed_step = "expect " + _first_failed(assertions)
        outcome.pages = list(watch.pages)
        outcome.duration = (time.perf_counter() - started) * 1000
        if error is None and passed(assertions):
            if step.trace:
                await context.tracing.stop()
            outcome.checks = assertions
            return outcome, assertions, None
        if typed:
            secrets = Redactor(where.redactor.words, [*where.redactor.values, *typed])
            where = msgspec.structs.replace(where, redactor=secrets)
        outcome.browser = await _evidence(page, context, watch, step, where, failed_step, selector)
        outcome.checks = assertions
        return outcome, assertions, error
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            await context.close()


async def _evidence(
    page: object, context: object, watch: PageWatch, step: BrowserStep, where: BrowserRun,
    failed_step: str | None, selector: str | None,
) -> BrowserEvidence:  # fmt: skip
    from playwright.async_api import BrowserContext, Error, Page

    assert isinstance(page, Page) and isinstance(context, BrowserContext)
    folder = (
        where.folder / "cases" / where.case
        if where.case
        else where.folder / "browser" / f"step-{next(_steps)}"
    )
    shot = folder / "screenshot.png"
    saved = await screenshot(page, shot)
    small = folder / "screenshot-small.jpg"
    shrunk = saved and await thumbnail(page, small)
    dom, around = await dom_excerpt(page, selector, where.redactor)
    trace_name: str | None = None
    if step.trace:
        trace = folder / "trace.zip"
        try:
            await context.tracing.stop(path=str(trace))
            await anyio.to_thread.run_sync(redact_trace, trace, where.redactor)
            trace_name = _name(where.folder, trace)
        except (Error, OSError):
            trace_name = None
    try:
        title = where.redactor.text(await page.title())
    except Error:
        title = None
    return BrowserEvidence(
        url=where.redactor.url(page.url),
        title=title,
        step=failed_step,
        selector=around or selector,
        dom=dom,
        screenshot=_name(where.folder, shot) if saved else None,
        thumbnail=_name(where.folder, small) if shrunk else None,
        trace=trace_name,
        console=watch.shown_console(),
        failed_requests=watch.shown_failed(),
    )


def _name(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()


def _first_failed(assertions: list[AssertionResult]) -> str:
    """The first failed check as the report names it: `text "Order confirmed"`, `elements[#x].count`."""
    failed = next(a for a in assertions if not a.passed)
    if isinstance(failed.expected, str) and len(failed.expected) <= 60:
        return f"{failed.path} {json.dumps(failed.expected)}"
    return failed.path
