"""Build the failure block of a failed case: compact in the result, complete in the artifacts."""

from __future__ import annotations

from datetime import datetime

import anyio
import msgspec

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.results.browser import BrowserEvidence
from preflight_sdk.core.results.run import (
    ContainerLogInfo,
    DiagnosticReport,
    Failure,
    MockRequestInfo,
    MockTraffic,
    ResponseInfo,
)

from .browser import explain_browser
from .context import RunContext
from .diagnostics import FULL, Limits, collect
from .explain import explain
from .outcome import StepOutcome, cap_body
from .yaml.steps import Attempt

__all__ = ["COMPACT", "LOG_LINE_CHARS", "failure_for", "failure_from_text", "window_diagnostics"]

COMPACT = Limits()
# One log line can be a whole stack trace or a dumped payload: the result keeps its start.
LOG_LINE_CHARS = 300
_MAX_ASSERTIONS = 20
# A service often logs its exception a moment after answering: let it reach the log first.
_LOG_SETTLE = 0.05


async def failure_for(
    run: RunContext, identifier: str, attempt: Attempt, *, start: datetime, end: datetime, target: str | None
) -> Failure:
    """Return the compact failure of a case; keep the complete one for the artifacts."""
    outcome = attempt.outcome
    full_diagnostics: DiagnosticReport | None = None
    if outcome is not None:  # a case that sent nothing has no window of logs to blame
        if run.env.services:
            await anyio.sleep(_LOG_SETTLE)
        full_diagnostics = await collect(run.env, start=start, end=end, target=target, limits=FULL)
    command = None
    if attempt.step.exec is not None:
        command = (
            attempt.step.exec.command
            if isinstance(attempt.step.exec.command, str)
            else " ".join(attempt.step.exec.command)
        )
    if outcome is not None and outcome.kind == "browser":
        summary, fix = explain_browser(
            outcome=outcome, assertions=attempt.assertions, diagnostics=full_diagnostics, target=target
        )
    else:
        summary, fix = explain(
            outcome=outcome,
            assertions=attempt.assertions,
            error=attempt.error,
            diagnostics=full_diagnostics,
            target=target,
            command=command,
        )
    error = attempt.error or "; ".join(a.message for a in attempt.assertions if not a.passed) or "failed"
    artifact = f"cases/{identifier}.json"
    full = Failure(
        error=error,
        summary=summary,
        suggested_fix=fix,
        assertions=attempt.assertions,
        request=outcome.request if outcome else None,
        response=_full_response(outcome),
        diagnostics=full_diagnostics,
        output=_output(outcome, 20_000),
        artifact=artifact,
        browser=outcome.browser if outcome else None,
    )
    run.full_failures[identifier] = full
    return Failure(
        error=_cut(error, 500),
        summary=summary,
        suggested_fix=fix,
        assertions=_bounded(attempt.assertions),
        request=outcome.request if outcome else None,
        response=outcome.response if outcome else None,
        diagnostics=_compact(full_diagnostics) if full_diagnostics is not None else None,
        output=_output(outcome, 1_000),
        artifact=artifact,
        browser=outcome.browser if outcome else None,
    )


async def window_diagnostics(run: RunContext, *, start: datetime, end: datetime) -> DiagnosticReport | None:
    """Return the complete diagnostics of a time window, or None when there is nothing to look at.

    Used for failures of other runners (pytest, shell) and for cases stopped by a timeout: every
    service's log lines, container states and mock requests between `start` and `end`. A project
    without services and mocks gets None rather than an empty block.
    """
    if not run.env.services and not run.env.mocks:
        return None
    if run.env.services:
        await anyio.sleep(_LOG_SETTLE)
    return await collect(run.env, start=start, end=end, target=None, limits=FULL)


def failure_from_text(
    run: RunContext,
    identifier: str,
    *,
    error: str,
    summary: str,
    output: str | None,
    assertions: list[AssertionResult] | None = None,
    fix: str | None = None,
    diagnostics: DiagnosticReport | None = None,
    browser: BrowserEvidence | None = None,
) -> Failure:
    """Return the failure of a case from another runner (pytest, shell, playwright) or of a stopped case.

    `diagnostics` is the complete report of the case's window (see `window_diagnostics`): kept
    whole in the artifact, compact in the result. `browser` is a Playwright test's page evidence.
    """
    artifact = f"cases/{identifier}.json"
    run.full_failures[identifier] = Failure(
        error=error,
        summary=summary,
        assertions=assertions or [],
        output=output,
        suggested_fix=fix,
        diagnostics=diagnostics,
        artifact=artifact,
        browser=browser,
    )
    short = "…" + output[-2_000:] if output and len(output) > 2_000 else output
    return Failure(
        error=_cut(error, 1_000),
        summary=summary,
        assertions=_bounded(assertions or []),
        output=short,
        suggested_fix=fix,
        diagnostics=_compact(diagnostics) if diagnostics is not None else None,
        artifact=artifact,
        browser=browser,
    )


def _bounded(assertions: list[AssertionResult]) -> list[AssertionResult]:
    failing = [a for a in assertions if not a.passed]
    passing = [a for a in assertions if a.passed]
    return (failing + passing)[:_MAX_ASSERTIONS]


def _compact(report: DiagnosticReport) -> DiagnosticReport:
    """Shrink a complete report to the result's limits: fewer items, and each item cut short.

    Cutting only the lists is not enough: one 20,000-character mock body or log line would make
    the failure too big, and the MCP face's reply bound would then drop the detail of the whole failure.
    """
    logs = [
        ContainerLogInfo(
            container_name=item.container_name,
            lines=[_cut(line, LOG_LINE_CHARS) for line in item.lines[-COMPACT.log_lines :]],
            line_count=item.line_count,
            truncated=item.truncated or len(item.lines) > COMPACT.log_lines,
        )
        for item in report.container_logs
    ]
    traffic = [
        MockTraffic(
            mock_name=t.mock_name,
            requests=[_compact_request(r) for r in t.requests[-COMPACT.mock_requests :]],
            truncated=t.truncated or len(t.requests) > COMPACT.mock_requests,
        )
        for t in report.mock_requests
    ]
    return msgspec.structs.replace(report, container_logs=logs, mock_requests=traffic)


def _compact_request(request: MockRequestInfo) -> MockRequestInfo:
    """Cap the body again at the result's limit (the full record keeps up to 20,000 characters)."""
    body, cut = cap_body(request.body, COMPACT.body_chars)
    return msgspec.structs.replace(request, body=body, body_truncated=True) if cut else request


def _cut(text: str, limit: int) -> str:
    """Return `text`, or its first `limit` characters marked with how many were cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def _full_response(outcome: StepOutcome | None) -> ResponseInfo | None:
    if outcome is None or outcome.response is None:
        return None
    return msgspec.structs.replace(outcome.response, body=outcome.body, body_truncated=False)


def _output(outcome: StepOutcome | None, limit: int) -> str | None:
    if outcome is None or outcome.kind != "exec":
        return None
    text = outcome.stdout + (("\n[stderr]\n" + outcome.stderr) if outcome.stderr else "")
    return text if len(text) <= limit else "…" + text[-limit:]
