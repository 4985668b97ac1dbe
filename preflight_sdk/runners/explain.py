"""Turn a failure into one sentence, and a suggested fix when a rule knows one.

POST /orders returned 500, expected 201; api logged "KeyError: 'price'"
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ..assertions import AssertionResult
from ..results.run import DiagnosticReport
from .outcome import StepOutcome

__all__ = ["error_line", "explain"]

_ERRORISH = re.compile(r"(Traceback|Error\b|Exception\b|error|exception|fatal|FATAL|panic|failed|refused)")
_EXCEPTION = re.compile(r"^(?:stderr: )?[\w.]+(?:Error|Exception|Exit)\b.*")


def error_line(lines: list[str]) -> str | None:
    """Return the most telling error line (an exception line, else the last error-looking line)."""
    for line in reversed(lines):
        if _EXCEPTION.match(line.strip()):
            return line.strip().removeprefix("stderr: ")
    for line in reversed(lines):
        if _ERRORISH.search(line) and not line.strip().startswith("Traceback"):
            return line.strip().removeprefix("stderr: ")
    return None


def explain(
    *,
    outcome: StepOutcome | None,
    assertions: list[AssertionResult],
    error: str | None,
    diagnostics: DiagnosticReport | None,
    target: str | None,
    command: str | None = None,
) -> tuple[str, str | None]:
    """Return `(summary, suggested_fix)` for a failed case."""
    failed = [a for a in assertions if not a.passed]
    logged = _logged(diagnostics, target)
    what = _what(outcome, command)
    if outcome is not None and outcome.error:
        summary = f"{what} failed: {_short(outcome.error.split(': ', 1)[-1] if what in outcome.error else outcome.error, 140)}"
    elif outcome is not None and outcome.status is not None:
        summary = f"{what} returned {outcome.status}"
        if failed:
            summary += ", " + _expected(failed[0])
    elif outcome is not None and outcome.exit_code is not None:
        summary = f"{what} exited with {outcome.exit_code}"
        if failed:
            summary += ", " + _expected(failed[0])
    elif failed:
        summary = f"{what}: " + _expected(failed[0]) if what else _expected(failed[0])
    else:
        summary = _short(error or "the case failed", 160)
    if logged is not None:
        summary += f'; {logged[0]} logged "{_short(logged[1], 100)}"'
    return summary, _fix(outcome, failed, error, diagnostics, target, logged)


def _what(outcome: StepOutcome | None, command: str | None) -> str:
    if outcome is not None and outcome.request is not None:
        parts = urlsplit(outcome.request.url)
        return f"{outcome.request.method} {parts.path or '/'}"
    if command:
        return f"`{_short(command, 60)}`"
    return ""


def _expected(result: AssertionResult) -> str:
    expected, actual = result.expected, result.actual
    if result.path == "status":
        wanted = (
            " or ".join(map(str, expected["in"]))
            if isinstance(expected, dict) and "in" in expected
            else expected
        )
        return f"expected {wanted}"
    if result.operator in ("equals", "eq"):
        return f"expected {result.path} = {_value(expected)}, got {_value(actual)}"
    if result.operator == "expr":
        return f"expected `{expected}` to hold"
    return f"expected {result.path} {result.operator} {_value(expected)}, got {_value(actual)}"


def _logged(diagnostics: DiagnosticReport | None, target: str | None) -> tuple[str, str] | None:
    if diagnostics is None:
        return None
    ordered = sorted(diagnostics.container_logs, key=lambda c: c.container_name != target)
    for logs in ordered:
        line = error_line(logs.lines)
        if line:
            return logs.container_name, line
    return None


def _fix(
    outcome: StepOutcome | None,
    failed: list[AssertionResult],
    error: str | None,
    diagnostics: DiagnosticReport | None,
    target: str | None,
    logged: tuple[str, str] | None,
) -> str | None:
    text = (outcome.error if outcome and outcome.error else error) or ""
    if "unknown variable" in text:
        name = re.search(r"\{\{([^}]*)\}\}", text)
        shown = name.group(1) if name else "it"
        return f"define `{shown}` in the suite's `variables`, or `save` it from an earlier case"
    if outcome is not None and outcome.error_kind == "connection" and outcome.request is not None:
        parts = urlsplit(outcome.request.url)
        service = f"service `{target}`" if target else "the service"
        if "refused" in text:
            return (
                f"nothing accepts connections at {parts.hostname}:{parts.port}: check that {service} is running "
                "(status), listens on 0.0.0.0 inside its container, and that `ports` publishes that container port"
            )
        return f"the request could not reach {parts.hostname}:{parts.port} ({_short(text, 80)}); check the URL and the service"
    if outcome is not None and outcome.error_kind == "timeout":
        return (
            "the request did not finish in time: look at the service's logs for a slow or stuck handler, "
            "or raise `request.timeout`"
        )
    unmatched = _unmatched_mock_request(diagnostics)
    if unmatched is not None:
        mock, method, path = unmatched
        return (
            f"mock `{mock}` had no route for {method} {path} (it answered 404): add or fix the route in "
            f"mocks.{mock}.routes, or fix the request the service sends (mock_requests shows it; "
            "the 404 body lists the closest routes)"
        )
    status = outcome.status if outcome is not None else None
    if status is not None and status >= 500 and logged is not None:
        return (
            f"`{logged[0]}` failed while handling the request ({_short(logged[1], 80)}): "
            "fix that code path, then run the suite again"
        )
    if status == 404 and any(a.path == "status" for a in failed):
        path = urlsplit(outcome.request.url).path if outcome and outcome.request else "the path"
        where = f"`{target}`" if target else "the service"
        return f"{path} does not exist on {where}: check the path and the service's routes"
    if status in (401, 403):
        return "the service refused the credentials: check the auth headers the request sends (failure.request.headers)"
    if "CONTAINER_NOT_FOUND" in text or "no running container" in text:
        return "name one of the project's services in the step's `container`"
    return None


def _unmatched_mock_request(diagnostics: DiagnosticReport | None) -> tuple[str, str, str] | None:
    if diagnostics is None:
        return None
    for traffic in diagnostics.mock_requests:
        for request in traffic.requests:
            if request.status == 404 and request.matched_route is None:
                return traffic.mock_name, request.method, request.path
    return None


def _value(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return _short(text, 60)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
