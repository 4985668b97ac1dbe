"""Turn a failure into one sentence, and a suggested fix when a rule knows one.

POST /orders returned 500, expected 201; api logged "KeyError: 'price'"
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from preflight_sdk.core.assertions import AssertionResult, json_text
from preflight_sdk.core.results.mocks import ClosestRoute
from preflight_sdk.core.results.run import DiagnosticReport, MockRequestInfo

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
        summary = _error_summary(what, outcome)
    elif outcome is not None and outcome.status is not None:
        summary = f"{what} returned {outcome.status}"
        if failed:
            summary += ", " + _expected(failed[0])
        if error:  # a poll that gave up or stopped: say so
            summary += f"; {_short(error, 120)}"
    elif outcome is not None and outcome.exit_code is not None:
        summary = f"{what} exited with {outcome.exit_code}"
        if failed:
            summary += ", " + _expected(failed[0])
    elif failed:
        summary = f"{what}: " + _expected(failed[0]) if what else _expected(failed[0])
    else:
        summary = _short(error or "the case failed", 160)
    unmatched = _unmatched_mock_request(diagnostics)
    if unmatched is not None:
        # The mock's 404 is the cause; the service's log line only repeats it.
        mock, request = unmatched
        summary += f"; mock {mock} had no route for {request.method} {request.path}"
        closest = _closest(request)
        if closest is not None:
            summary += f" (closest: {closest.route}, {_short('; '.join(closest.why), 100)})"
    elif logged is not None:
        summary += f'; {logged[0]} logged "{_short(logged[1], 100)}"'
    return summary, _fix(outcome, failed, error, diagnostics, target, logged)


def _error_summary(what: str, outcome: StepOutcome) -> str:
    error = outcome.error or ""
    if outcome.request is not None:
        # Request errors start with "METHOD URL": the summary names the path once.
        prefix = f"{outcome.request.method} {outcome.request.url} "
        if error.startswith(prefix):
            return f"{what} {_short(error[len(prefix) :], 140)}"
    return f"{what} failed: {_short(error, 140)}" if what else _short(error, 160)


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
        if isinstance(expected, dict) and "in" in expected:
            expected = expected["in"]
        wanted = " or ".join(map(str, expected)) if isinstance(expected, list) else expected
        return f"expected {wanted}"
    if result.operator in ("equals", "eq"):
        return f"expected {result.path} = {_value(expected)}, got {_value(actual)}"
    if result.operator == "expr":
        # The message goes on with the parts that are false and the values they read.
        reasons = result.message.removeprefix(f"expr: `{expected}` is false; ")
        return f"expected `{expected}` to hold" + (f" ({reasons})" if reasons != result.message else "")
    if result.operator == "contract":
        # "…, which its contract forbids: body.id: 3 is not of type 'string' (orders.yaml:23)"
        where = f" ({result.document})" if result.document else ""
        return f"which its contract forbids: {_short(result.message, 140)}{where}"
    if result.operator == "count" and result.path.startswith("mock."):
        # The check's own message already reads well ("expected 1 POST /charges request(s), got 0");
        # the list of received requests after it belongs to the assertion, not the sentence.
        return result.message.split(";", 1)[0]
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
    earlier = re.search(r"(case `[^`]*`), which should have saved", text)
    if "unknown variable" in text and earlier is not None:
        return (
            f"fix {earlier.group(1)} first: this case failed only because that one did not provide its value"
        )
    if "unknown variable" in text:
        name = re.search(r"\{\{([^}]*)\}\}", text)
        shown = name.group(1) if name else "it"
        kind = shown.split(".", 1)[0]
        if kind in ("services", "mocks") and "." in shown:
            what = "service" if kind == "services" else "mock"
            return (
                f"`{{{{{shown}}}}}` names a {what} this project does not run: check the name against "
                f"e2e.yaml's `{kind}` (a project without services and mocks runs in test-only mode: "
                "use `url:` or BASE_URL)"
            )
        return f"define `{shown}` in the suite's `variables`, or `save` it from an earlier case"
    if outcome is not None and outcome.error_kind == "connection" and outcome.request is not None:
        parts = urlsplit(outcome.request.url)
        if "closed the connection" in text:
            return _closed_fix(parts.hostname, parts.port, target, logged)
        if "refused" in text and target is None:
            return (
                f"nothing accepts connections at {parts.hostname}:{parts.port}: start the server the request "
                "targets, or point the step's `url` (or BASE_URL) at the right host and port"
            )
        if "refused" in text:
            return (
                f"nothing accepts connections at {parts.hostname}:{parts.port}: check that service `{target}` "
                "is running (status), listens on 0.0.0.0 inside its container, and that `ports` publishes "
                "that container port"
            )
        return f"the request could not reach {parts.hostname}:{parts.port} ({_short(text, 80)}); check the URL and the service"
    if outcome is not None and outcome.error_kind == "timeout":
        return (
            "the request did not finish in time: look at the service's logs for a slow or stuck handler, "
            "or raise `request.timeout`"
        )
    unmatched = _unmatched_mock_request(diagnostics)
    if unmatched is not None:
        return _mock_fix(*unmatched)
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
    broken = next((a for a in failed if a.operator == "contract"), None)
    if broken is not None and all(a.operator == "contract" for a in failed):
        where = f" ({broken.document})" if broken.document else ""
        return (
            f"the answer breaks `{target or 'the service'}`'s contract at {broken.path} (rule `{broken.rule}`"
            f"{where}): fix the service so it answers as documented, or the document if it is the one "
            "that is wrong; `contract: false` on the case skips the check"
        )
    return None


def _closed_fix(
    host: str | None, port: int | None, target: str | None, logged: tuple[str, str] | None
) -> str:
    """The fix for a request the server received but never answered: it was reached, then crashed."""
    who = f"service `{target}`" if target else f"the server at {host}:{port}"
    said = f"; it logged {_short(logged[1], 100)!r}" if logged is not None else ""
    where = (
        f"its log lines around this request (this failure's diagnostics.containerLogs, or the logs of `{target}`)"
        if target
        else "its log around this request"
    )
    return (
        f"{who} was reached but closed the connection without answering, as it does when its handler "
        f"or process crashes on the request{said}: read {where} and fix that code path"
    )


def _mock_fix(mock: str, request: MockRequestInfo) -> str:
    """The fix for a mock's 404: name the closest route and why it missed, so the agent can pick a side."""
    what = f"mock `{mock}` had no route for {request.method} {request.path} (it answered 404)"
    closest = _closest(request)
    if closest is None:
        return f"{what} and declares no routes: add one under mocks.{mock}.routes"
    where = f"mocks.{mock}.routes[{closest.index}]"
    label = f"`{closest.name}` ({closest.route}, {where})" if closest.name else f"`{closest.route}` ({where})"
    missed = _short("; ".join(closest.why), 200)
    return (
        f"{what}: add or fix the route in mocks.{mock}.routes, or fix the request the service sends; "
        f"the closest route, {label}, did not match: {missed}"
    )


def _unmatched_mock_request(diagnostics: DiagnosticReport | None) -> tuple[str, MockRequestInfo] | None:
    """Return the first request of the case that a mock answered with its no-route 404."""
    if diagnostics is None:
        return None
    for traffic in diagnostics.mock_requests:
        for request in traffic.requests:
            if request.closest_routes is not None:
                return traffic.mock_name, request
    return None


def _closest(request: MockRequestInfo) -> ClosestRoute | None:
    routes = request.closest_routes
    return routes[0] if routes else None


def _value(value: Any) -> str:
    return _short(json_text(value), 60)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
