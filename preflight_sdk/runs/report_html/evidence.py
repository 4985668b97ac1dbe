"""One failing case in full: summary, fix, assertions, history, request and response, logs, mock calls.

Every value is escaped here (`html.escape`), so a case name, a body or a log line holding markup
is shown as text and never runs.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.results.run import CaseHistory, CaseResult, DiagnosticReport, Failure, MockRequestInfo

from .page_evidence import browser_panel

__all__ = ["anchor", "case_article", "esc", "human_ms", "json_text", "log_lines"]

_BAD_WORDS = ("error", "exception", "traceback", "fatal", "panic", "critical")
# An HTTP access line (Common Log Format and its kin): `"GET /health HTTP/1.1" 404 -`.
_ACCESS = re.compile(r'"[A-Z]+ \S+ HTTP/[0-9.]+" (\d{3})\b')


def esc(value: object) -> str:
    """Text as HTML (quotes escaped too, so it is safe inside attributes)."""
    return html.escape(str(value), quote=True)


def anchor(case_id: str) -> str:
    """The element id of a case's failure article."""
    return "pfr-case-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in case_id)


def human_ms(ms: int) -> str:
    """`9 ms`, `1.2 s`, `2 m 5 s`."""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} m {ms % 60_000 // 1000} s"


def json_text(value: Any, limit: int = 4000) -> str:
    """A value as indented JSON text (strings as they are), cut at `limit` characters."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = msgspec.json.format(msgspec.json.encode(value, enc_hook=str), indent=2).decode()
        except (TypeError, msgspec.EncodeError):
            text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _pre(text: str, cls: str = "") -> str:
    return f'<pre class="{cls}">{esc(text)}</pre>' if cls else f"<pre>{esc(text)}</pre>"


def _assertions(failure: Failure) -> str:
    if not failure.assertions:
        return f'<p class="pfr-empty">no assertion recorded</p>{_pre(failure.error)}'
    rows = []
    for a in sorted(failure.assertions, key=lambda a: a.passed):
        state = "passed" if a.passed else "failed"
        actual = "<missing>" if a.actual is None and not a.passed else _value(a, a.actual)
        rows.append(
            f'<tr class="pfr-assert-{state}"><td><span class="pfr-badge pfr-b-{state}">'
            f"{'✓' if a.passed else '✗'}</span></td><td><code>{esc(a.path)}</code></td>"
            f"<td>{_check(a)}</td><td>{esc(_value(a, a.expected))}</td>"
            f'<td class="pfr-actual">{esc(actual)}</td></tr>'
        )
    return (
        '<table class="pfr-assertions"><thead><tr><th></th><th>path</th><th>check</th><th>expected</th>'
        f"<th>actual</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _value(a: AssertionResult, value: Any) -> str:
    """An assertion's expected or actual value; a string quoted where its type is what broke a contract
    (the string "2" where the schema asks for an integer)."""
    if a.operator == "contract" and a.rule == "type" and isinstance(value, str):
        return msgspec.json.encode(value).decode()[:600]
    return json_text(value, 600)


def _check(a: AssertionResult) -> str:
    """The check column: the operator; for a contract, its rule and the document's line too."""
    if a.operator != "contract" or a.rule is None:
        return esc(a.operator)
    where = f"<br><small>{esc(a.document)}</small>" if a.document else ""
    return f"contract <code>{esc(a.rule)}</code>{where}"


def _history(history: CaseHistory | None, run_id: str) -> str:
    if history is None:
        return '<p class="pfr-empty">no earlier runs recorded</p>'
    last = history.last_passed_run_id
    since = history.failing_since_run_id
    since_text = "this run" if since == run_id else (since or "?")
    boxes = "".join(f'<i class="pfr-{esc(c)}" title="{esc(c)}"></i>' for c in history.recent)
    flaky = '<span class="pfr-badge pfr-b-flaky">flaky</span>' if history.flaky else "not flaky"
    return (
        '<div class="pfr-history">'
        f"<span>last passed: <code>{esc(last) if last else 'never'}</code></span>"
        f"<span>failing since: <code>{esc(since_text)}</code></span>"
        f"<span>{flaky}</span>"
        f'<span>recent (oldest first): <span class="pfr-recent">{boxes}</span> <code>{esc(history.recent)}</code></span>'
        "</div>"
    )


def _exchange(failure: Failure) -> str:
    if failure.request is None and failure.response is None:
        return ""
    parts = []
    if failure.request is not None:
        req = failure.request
        head = "".join(f"\n{k}: {v}" for k, v in req.headers.items())
        body = "" if req.body is None else "\n\n" + json_text(req.body)
        cut = " (cut)" if req.body_truncated else ""
        parts.append(
            f'<div class="pfr-panel"><h4>Request</h4>{_pre(f"{req.method} {req.url}{head}{body}{cut}", "pfr-request")}</div>'
        )
    if failure.response is not None:
        res = failure.response
        head = "".join(f"\n{k}: {v}" for k, v in res.headers.items())
        body = "" if res.body is None else "\n\n" + json_text(res.body)
        cut = " (cut)" if res.body_truncated else ""
        text = f"{res.status}  ({human_ms(res.duration)}){head}{body}{cut}"
        parts.append(f'<div class="pfr-panel"><h4>Response</h4>{_pre(text, "pfr-response")}</div>')
    return f'<div class="pfr-grid">{"".join(parts)}</div>'


def log_lines(lines: Iterable[str]) -> str:
    """Container log lines as the markup of a `pre.pfr-log` (the lines that say something is wrong marked)."""
    out = []
    for line in lines:
        out.append(f'<span class="pfr-err">{esc(line)}</span>' if _says_wrong(line) else esc(line))
    return "\n".join(out)


def _says_wrong(line: str) -> bool:
    """Whether a log line says something went wrong: an access line by its status (5xx), any other
    by its words. Being on stderr says nothing: Werkzeug, Python's logging and many servers write
    every line there."""
    access = _ACCESS.search(line)
    if access is not None:
        return access.group(1).startswith("5")
    return any(word in line.lower() for word in _BAD_WORDS)


def _logs(diag: DiagnosticReport | None) -> str:
    if diag is None or not diag.container_logs:
        return '<p class="pfr-empty">no container log lines in the case\'s window</p>'
    parts = []
    for log in diag.container_logs:
        cut = f", {log.line_count - len(log.lines)} earlier cut" if log.truncated else ""
        parts.append(
            f'<div class="pfr-logname">{esc(log.container_name)} <small>({log.line_count} lines{cut})</small></div>'
            f'<pre class="pfr-log">{log_lines(log.lines)}</pre>'
        )
    states = " · ".join(
        f"{esc(h.container_name)} {esc(h.status)}"
        + (f" (exit {h.exit_code})" if h.exit_code is not None else "")
        for h in diag.container_health
    )
    if states:
        parts.append(f'<p class="pfr-note">containers then: {states}</p>')
    return "".join(parts)


def _mock_row(mock: str, r: MockRequestInfo) -> str:
    status = f"fault: {r.fault}" if r.fault else str(r.status)
    state = "passed" if r.status and r.status < 400 and not r.fault else "failed"
    route = esc(r.matched_route) if r.matched_route else "<i>no route matched</i>"
    if r.route_recorded:
        route += (
            f' <small class="pfr-recorded">recorded {esc(r.route_recorded[:16].replace("T", " "))}</small>'
        )
    if r.closest_routes:
        closest = r.closest_routes[0]
        route += f"<br><small>closest: {esc(closest.route)}: {esc('; '.join(closest.why))}</small>"
    detail = ""
    if r.body is not None or r.response is not None:
        answer = "" if r.response is None else json_text(r.response.body, 1500)
        detail = (
            f"<details><summary>bodies</summary>{_pre('sent: ' + json_text(r.body, 1500))}"
            f"{_pre('answered: ' + answer) if answer else ''}</details>"
        )
    return (
        f'<tr class="pfr-mockcall"><td class="pfr-mono">{esc(r.timestamp[11:23])}</td><td>{esc(mock)}</td>'
        f"<td><code>{esc(r.method)} {esc(r.path)}</code>{detail}</td>"
        f'<td><span class="pfr-badge pfr-b-{state}">{esc(status)}</span></td><td>{route}</td></tr>'
    )


def _mocks(diag: DiagnosticReport | None) -> str:
    if diag is None or not diag.mock_requests:
        return '<p class="pfr-empty">no mock calls in the case\'s window</p>'
    rows = "".join(_mock_row(t.mock_name, r) for t in diag.mock_requests for r in t.requests)
    return (
        '<table class="pfr-mockcalls"><thead><tr><th>time</th><th>mock</th><th>request</th><th>status</th>'
        f"<th>route</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def case_article(
    case: CaseResult, run_id: str, *, artifact_href: str | None, files: Mapping[str, str] | None = None
) -> str:
    """The `<article>` of one failed case, its id from `anchor(case.id)`.

    `files` maps the run's artifact names to their paths: a browser failure's screenshot is read
    from there to be shown inline.
    """
    failure = case.failure or Failure(error="failed without a recorded reason", summary="failed")
    where = f" · on {esc(case.engine)}" if case.engine else ""
    retried = f" · {len(case.attempts)} attempts" if case.attempts else ""
    parts = [
        f'<article class="pfr-failure" id="{anchor(case.id)}" tabindex="-1" data-case="{esc(case.id)}">',
        f'<h3><span class="pfr-badge pfr-b-failed">✗ failed</span> {esc(case.name)} '
        f"<small>{esc(case.suite)} · {human_ms(case.duration)}{retried}{where} · <code>{esc(case.id)}</code></small></h3>",
        f'<p class="pfr-summary">{esc(failure.summary or failure.error)}</p>',
    ]
    if failure.suggested_fix:
        parts.append(f'<p class="pfr-fix"><b>Suggested fix:</b> {esc(failure.suggested_fix)}</p>')
    if failure.browser is not None:
        parts.append(browser_panel(failure.browser, files or {}))
    parts.append(
        f'<div class="pfr-grid"><div class="pfr-panel"><h4>Assertions</h4>{_assertions(failure)}</div>'
        f'<div class="pfr-panel"><h4>History</h4>{_history(case.history, run_id)}</div></div>'
    )
    parts.append(_exchange(failure))
    parts.append(
        f'<div class="pfr-grid"><div class="pfr-panel pfr-logs"><h4>Container logs</h4>{_logs(failure.diagnostics)}</div>'
        f'<div class="pfr-panel pfr-mocks"><h4>Mock calls</h4>{_mocks(failure.diagnostics)}</div></div>'
    )
    if failure.output:
        # A process's output is the evidence of a pytest or shell case: shown open when it has no exchange.
        opened = " open" if failure.request is None and failure.response is None else ""
        parts.append(
            f"<details{opened}><summary>output</summary>{_pre(json_text(failure.output, 8000))}</details>"
        )
    if artifact_href:
        parts.append(
            f'<p class="pfr-note">full record: <a href="{esc(artifact_href)}">{esc(artifact_href)}</a></p>'
        )
    parts.append("</article>")
    return "".join(parts)
