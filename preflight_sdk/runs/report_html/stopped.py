"""What the page shows of a run that stopped before its suites: the failing service and its output.

A setup that fails (a crash at start, a health check that never passes, a build that breaks)
leaves no setup result, only the error: its code, message and hint, the service it names
(`details.service`) with its log tail (`details.logTail`), or each failed build's last lines
(`details.services[].logTail`). The page shows them where the environment would be, so a reader
sent to the log tail by the hint finds it.
"""

from __future__ import annotations

from typing import Any

from preflight_sdk.core.results.run import RunResult

from .evidence import esc, log_lines

__all__ = ["stopped_html"]


def _tails(details: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(service, its log lines) for each service the error names with output."""
    found: list[tuple[str, list[str]]] = []
    tail = details.get("logTail")
    if isinstance(tail, list) and tail:
        found.append((str(details.get("service") or "output"), [str(line) for line in tail]))
    for service in details.get("services") or []:
        if isinstance(service, dict) and isinstance(service.get("logTail"), list) and service["logTail"]:
            found.append((str(service.get("name", "?")), [str(line) for line in service["logTail"]]))
    return found


def stopped_html(result: RunResult) -> str:
    """The environment section of a run whose setup failed (empty when it has no error)."""
    error = result.error
    if error is None:
        return ""
    details = error.details if isinstance(error.details, dict) else {}
    service = details.get("service")
    who = f" (service <b>{esc(service)}</b>)" if service else ""
    parts = [
        f'<p class="pfr-environment-line">The environment could not be brought up{who}: '
        f"<code>{esc(error.code)}</code> {esc(error.message)}</p>"
    ]
    for name, lines in _tails(details):
        parts.append(
            f'<div class="pfr-logname">{esc(name)} <small>(its last output, {len(lines)} lines)</small></div>'
            f'<pre class="pfr-log">{log_lines(lines)}</pre>'
        )
    if len(parts) == 1:
        parts.append('<p class="pfr-note">the error carries no output of a container</p>')
    return "".join(parts)
