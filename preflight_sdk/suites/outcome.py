"""What one step produced, before expectations are checked, and how it is bounded for reports."""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.results.browser import BrowserEvidence
from preflight_sdk.core.results.run import RequestInfo, ResponseInfo

__all__ = ["StepOutcome", "cap_body"]


class StepOutcome(msgspec.Struct, kw_only=True):
    """The observable result of a step: an HTTP exchange, a command, or a check's own findings.

    Attributes:
        kind: the step's action.
        status/headers/body/text: the HTTP response (body parsed as JSON when it is JSON).
        exit_code/stdout/stderr: a command's result (`output` in expectations is stdout).
        duration: milliseconds the action took.
        error: a transport problem (connection refused, timeout) instead of a result.
        error_kind: `connection`, `timeout`, `variable`, `input`, `engine`.
        checks: findings of steps that check by themselves (file, process, port).
        request/response: the exchange as it will appear in a failure report.
        browser: a failing browser step's page (screenshot, trace, DOM, console, failed requests).
        pages: the URLs a browser step opened, in order.
    """

    kind: Literal["request", "exec", "file", "process", "port", "wait", "browser"]
    pages: list[str] = msgspec.field(default_factory=list)
    browser: BrowserEvidence | None = None
    status: int | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    text: str | None = None
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    error: str | None = None
    error_kind: str | None = None
    checks: list[AssertionResult] = msgspec.field(default_factory=list)
    request: RequestInfo | None = None
    response: ResponseInfo | None = None

    def context(self) -> dict[str, Any]:
        """Return what `expr` and `save` see: status, body, headers, responseTime, exitCode, output."""
        return {
            "status": self.status,
            "body": self.body,
            "headers": self.headers,
            "responseTime": round(self.duration),
            "exitCode": self.exit_code,
            "output": self.stdout,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }


def cap_body(body: Any, limit: int) -> tuple[Any, bool]:
    """Return `body` unchanged when its JSON text fits in `limit` characters, else a cut text and True."""
    if body is None:
        return None, False
    text = body if isinstance(body, str) else json.dumps(body, default=str, separators=(",", ":"))
    if len(text) <= limit:
        return body, False
    return text[:limit] + f"… [{len(text) - limit} more characters]", True
