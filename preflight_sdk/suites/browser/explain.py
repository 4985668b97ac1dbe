"""A failing browser step in one sentence, and the fix when the evidence points at one.

/index.html: expected the page to show "Order confirmed"; the page logged "Error: order failed: 500";
POST /api/orders answered 500; api logged "KeyError: 'qty'"
"""

from __future__ import annotations

from urllib.parse import urlsplit

from preflight_sdk.core.assertions import AssertionResult, json_text
from preflight_sdk.core.results.browser import BrowserEvidence, FailedRequest
from preflight_sdk.core.results.run import DiagnosticReport

from ..explain import error_line
from ..outcome import StepOutcome

__all__ = ["explain_browser"]


def explain_browser(
    *,
    outcome: StepOutcome,
    assertions: list[AssertionResult],
    diagnostics: DiagnosticReport | None,
    target: str | None,
) -> tuple[str, str | None]:
    """Return `(summary, suggested_fix)` for a failed browser step."""
    evidence = outcome.browser or BrowserEvidence()
    failed = [a for a in assertions if not a.passed]
    page = _path(evidence.url) or "the page"
    if outcome.error:
        summary = _short(outcome.error, 200)
        if not summary.startswith(("goto ", "[")):
            summary = f"{page}: {summary}"
    elif failed:
        summary = f"{page}: {_expected(failed[0])}"
    else:
        summary = f"{page}: the step failed"
    error = _first_error(evidence)
    if error is not None:
        summary += f'; the page logged "{_short(error, 100)}"'
    request = _worst_request(evidence.failed_requests)
    if request is not None:
        answered = f"answered {request.status}" if request.status else f"failed ({request.error})"
        summary += f"; {request.method} {_path(request.url)} {answered}"
    logged = _logged(diagnostics, target)
    if logged is not None:
        summary += f'; {logged[0]} logged "{_short(logged[1], 100)}"'
    return summary, _fix(outcome, evidence, failed, request, logged)


def _fix(
    outcome: StepOutcome,
    evidence: BrowserEvidence,
    failed: list[AssertionResult],
    request: FailedRequest | None,
    logged: tuple[str, str] | None,
) -> str | None:
    text = outcome.error or ""
    if "BROWSER_UNAVAILABLE" in text:
        return (
            "install what the error names (Playwright for Python: `pip install 'preflight-sdk[browser]'`; "
            "Chromium: `apt-get install chromium`), then run again"
        )
    if request is not None and request.status >= 500 and logged is not None:
        return (
            f"`{logged[0]}` failed while handling {request.method} {_path(request.url)} ({_short(logged[1], 80)}): "
            "fix that code path (or what the page sends it: failure.browser.failedRequests), then run again"
        )
    if request is not None and request.status >= 400:
        return (
            f"the page's {request.method} {_path(request.url)} got {request.status}: check what the page sends "
            "(the trace has the request) against what the service expects"
        )
    if "no element matches" in text or any("no element matches" in a.message for a in failed):
        selector = evidence.selector or "the selector"
        return (
            f"nothing on {_path(evidence.url) or 'the page'} matches `{selector}`: compare it with the page "
            "(failure.browser.dom, the screenshot) and fix the selector or the page"
        )
    error = _first_error(evidence)
    if error is not None:
        return f"the page's script failed ({_short(error, 80)}): see failure.browser.console and the trace"
    return None


def _expected(result: AssertionResult) -> str:
    if result.path == "text":
        return f"expected the page to show {json_text(result.expected)}"
    if result.operator == "count":
        return f"expected {result.path} {result.expected}, got {result.actual}"
    return result.message


def _first_error(evidence: BrowserEvidence) -> str | None:
    """The page's most telling error: an uncaught one or its own, before the browser's `Failed to load`."""
    errors = [m.text for m in evidence.console if m.type in ("error", "pageerror")]
    own = [text for text in errors if not text.startswith("Failed to load resource")]
    return next(iter(own or errors), None)


def _worst_request(requests: list[FailedRequest]) -> FailedRequest | None:
    """The request that most likely explains the failure: a 5xx, else no answer, else a 4xx."""
    shown = [r for r in requests if not r.url.endswith("/favicon.ico")]
    return (
        next((r for r in shown if r.status >= 500), None)
        or next((r for r in shown if r.status == 0), None)
        or next((r for r in shown if r.status >= 400), None)
    )


def _logged(diagnostics: DiagnosticReport | None, target: str | None) -> tuple[str, str] | None:
    if diagnostics is None:
        return None
    for logs in sorted(diagnostics.container_logs, key=lambda c: c.container_name == target):
        line = error_line(logs.lines)
        if line:
            return logs.container_name, line
    return None


def _path(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return url


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
