"""Interactive result views: `view(result)` returns an ipywidgets widget to display in a cell.

- `RunResult`: the summary line, the suites with pass/fail badges, then each failed case with
  its summary and suggested fix above tabs: Assertions (expected and actual side by side),
  Request / response, Logs, Mock requests (and Output for pytest and shell cases).
- `StatusResult`: services with their state, health and clickable URLs, and the mocks.
- `LogsResult`: the lines coloured by level (error, warning, info), stderr marked, with a filter.
- `VerifyResult`: the tool table, then the findings grouped by severity in an accordion.
- `BuildResult`: one bar per image, its length the build duration.
- `ClarifyResult`: `needs_clarification` is a form (radio buttons, checkboxes, text boxes) whose
  Submit continues the session; `completed` lists the files written, with links.

Anything else is shown as its static HTML. The static renderings (`_repr_mimebundle_`) need no
kernel and survive in saved notebooks; these views need a live kernel (or saved widget state).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from preflight_sdk.clarify.results import ClarifyResult
from preflight_sdk.core.results.grouping import group_failures
from preflight_sdk.core.results.lifecycle import BuildResult, LogsResult, StatusResult
from preflight_sdk.core.results.run import CaseResult, RunResult

from .kit import badge, block, esc, human_ms, plural, row, table
from .static import render_html, render_text
from .static.environment_view import environment_html
from .static.lifecycle_view import logs_lines_html
from .static.run_view import (
    artifact_path,
    assertions_html,
    diagnostics_html,
    exchange_html,
    headline,
    logs_html,
    mocks_html,
    same_cause_text,
    suites_html,
)

__all__ = [
    "build_view",
    "clarify_view",
    "failure_view",
    "logs_view",
    "run_view",
    "status_view",
    "verify_view",
    "view",
]


class _PlainText:
    """Mixin: what renderers without widgets show (GitHub, nbconvert) is the result's text form."""

    plain_text = ""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        data = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(data, dict):
            data["text/plain"] = self.plain_text
        return data


class ResultView(_PlainText, w.VBox):  # type: ignore[misc]
    """The view of a result: a VBox whose plain-text form is the result's text rendering."""


class ResultHTML(_PlainText, w.HTML):  # type: ignore[misc]
    """A result shown as its static HTML, with the result's text rendering as plain text."""


LOG_FILTERS = {
    "all": None,
    "warnings and errors": frozenset({"error", "warning"}),
    "errors": frozenset({"error"}),
}


def failure_view(result: RunResult, case: CaseResult) -> Any:
    """One failed case: a header (summary, fix, artifact) above tabs with its evidence."""
    failure = case.failure
    head = f"{badge('failed', '✗')} <b>{esc(case.suite)} / {esc(case.name)}</b> <small>{esc(human_ms(case.duration))}</small>"
    if failure is None:
        return w.HTML(head)
    lines = [head, f"<div><b>{esc(failure.summary or failure.error)}</b></div>"]
    if failure.suggested_fix:
        lines.append(f"<div><b>Suggested fix:</b> {esc(failure.suggested_fix)}</div>")
    if failure.same_cause is not None:
        lines.append(f'<div class="pf-same-cause"><b>{esc(same_cause_text(failure))}</b></div>')
    path = artifact_path(result, failure)
    if path:
        lines.append(f'<div style="color:#57606a">full record: <code>{esc(path)}</code></div>')
    pages = [
        ("Assertions", assertions_html(failure)),
        ("Request / response", exchange_html(failure)),
        ("Logs", logs_html(failure.diagnostics) + diagnostics_html(failure.diagnostics)),
        ("Mock requests", mocks_html(failure.diagnostics)),
    ]
    if failure.output:
        pages.append(("Output", block(failure.output)))
    tabs = w.Tab(children=[w.HTML(body) for _, body in pages], titles=tuple(t for t, _ in pages))
    return w.VBox([w.HTML("".join(lines)), tabs], layout={"margin": "6px 0 10px 0"})


def run_view(result: RunResult) -> Any:
    """A run: summary line, the suites table, each failed case with its evidence in tabs (a cause
    that failed several cases once, with their count and names)."""
    result = group_failures(result)
    rest = headline(result).split(" · ", 1)[1]
    summary = w.HTML(f"{badge(result.status, result.status.upper())} {esc(rest)}")
    table = w.HTML(suites_html(result, details=False, id_prefix="pf-run-view-"))
    failures = [failure_view(result, case) for case in result.failures()]
    parts = [summary, table]
    if result.setup is not None and result.setup.network is not None:
        parts.append(w.HTML(environment_html(result.setup)))
    if failures:
        parts.append(w.HTML(f"<b>{plural(len(failures), 'failure')}</b>"))
    return ResultView([*parts, *failures])


def status_view(result: StatusResult) -> Any:
    """The environment now: services (state, health, clickable URL, ports, uptime) and mocks."""
    return ResultView([w.HTML(render_html(result))])


def logs_view(result: LogsResult) -> Any:
    """A container's lines coloured by level, with a filter (all / warnings and errors / errors)."""
    head = w.HTML(
        f"{badge(result.container_status)} <b>{esc(result.container)}</b> {esc(plural(result.line_count, 'line'))}"
    )
    lines = w.HTML(logs_lines_html(result))
    choose = w.ToggleButtons(options=list(LOG_FILTERS), value="all", style={"button_width": "auto"})

    def refilter(change: dict[str, Any]) -> None:
        lines.value = logs_lines_html(result, only=LOG_FILTERS[change["new"]])

    choose.observe(refilter, names="value")
    return ResultView([head, choose, lines])


_TOOL_MARKS = {"found": ("✓", "passed", "found in server"), "missing": ("✗", "failed", "not found in server")}


def _verify_head(result: Any) -> str:
    server = result.server
    name = "MCP server"
    if server is not None and server.name:
        name = f"{server.name} {server.version or ''}".strip()
    protocol = f" (protocol {server.protocol_version})" if server and server.protocol_version else ""
    parts = [f"<div>{badge(result.status)} <b>verify {esc(name)}</b>{esc(protocol)}</div>"]
    if server is not None:
        parts.append(f"<div><code>{esc(' '.join(server.command))}</code></div>")
    rows = []
    for tool in result.tools:
        mark, status, text = _TOOL_MARKS.get(tool.status, ("+", "skipped", "extra (not declared)"))
        rows.append(
            row([badge(status, mark), f"<code>{esc(tool.name)}</code>", esc(text), str(len(tool.findings))])
        )
    if rows:
        parts.append(table(["", "tool", "status", "findings"], rows, cls="pf-verify-tools"))
    s = result.summary
    parts.append(
        f"<div>{s.found} found, {s.missing} missing, {s.extra} extra; {plural(s.errors, 'error')}, "
        f"{plural(s.warnings, 'warning')}, {plural(s.infos, 'info')} · {esc(human_ms(result.duration))}</div>"
    )
    return "".join(parts)


def verify_view(result: Any) -> Any:
    """A verification: the headline and tool table, then findings by severity in an accordion."""
    every = result.all_findings()
    groups = []
    for severity, title in (("error", "Errors"), ("warning", "Warnings"), ("info", "Info")):
        found = [f for f in every if f.severity == severity]
        items = "".join(
            f"<li>{f'<code>{esc(f.tool)}</code> ' if f.tool else ''}<b>{esc(f.code)}</b> {esc(f.message)}"
            + (f" <small>at <code>{esc(f.path)}</code></small>" if f.path else "")
            + "</li>"
            for f in found
        )
        groups.append((f"{title} ({len(found)})", w.HTML(f"<ul>{items}</ul>" if items else "<i>none</i>")))
    if result.stderr_tail:
        groups.append(
            (f"stderr ({len(result.stderr_tail)} lines)", w.HTML(block("\n".join(result.stderr_tail))))
        )
    first = 0 if result.summary.errors else (1 if result.summary.warnings else None)
    accordion = w.Accordion(
        children=[g for _, g in groups], titles=tuple(t for t, _ in groups), selected_index=first
    )
    return ResultView([w.HTML(_verify_head(result)), accordion])


def build_view(result: BuildResult) -> Any:
    """A build: one bar per image (its length the duration), failed ones red with their last lines."""
    longest = max((s.duration for s in result.services), default=0) or 1
    failed = [s for s in result.services if s.status == "failed"]
    head = w.HTML(
        f"<b>{'build failed' if failed else 'built'}: {plural(len(result.services), 'image')} in "
        f"{esc(human_ms(result.total_duration))}</b>"
    )
    rows = []
    for s in result.services:
        bar = w.IntProgress(
            value=s.duration,
            min=0,
            max=longest,
            description=s.name,
            bar_style="danger" if s.status == "failed" else "success",
            style={"description_width": "initial"},
            layout={"width": "360px"},
        )
        label = w.HTML(f"{esc(human_ms(s.duration))} · {esc(s.source)} · <code>{esc(s.image)}</code>")
        rows.append(w.HBox([bar, label]))
    parts: list[Any] = [head, *rows]
    if failed:
        parts.append(
            w.Accordion(
                children=[
                    w.HTML(f"<div>{esc(s.error or '')}</div>" + block("\n".join(s.log_tail or [])))
                    for s in failed
                ],
                titles=tuple(f"{s.name}: last build lines" for s in failed),
                selected_index=0,
            )
        )
    return ResultView(parts)


def clarify_view(result: ClarifyResult) -> Any:
    """A clarification: the form of a `needs_clarification` result, else its static HTML.

    The form is the one `result` displays as in a kernel (the same object on every call), so
    filling it here fills the form shown in the cell above; its Submit continues the session and
    then lists the files written. A completed result, or one decoded from JSON (whose session
    this process cannot continue), shows the static HTML: the questions, or the files with links.
    """
    from .clarify_form import form_for

    form = form_for(result)
    if form is not None:
        return form
    shown = ResultHTML(render_html(result))
    shown.plain_text = render_text(result)
    return shown


def _views() -> dict[type, Callable[[Any], Any]]:
    from preflight_sdk.verify.result import VerifyResult

    return {
        RunResult: run_view,
        StatusResult: status_view,
        LogsResult: logs_view,
        VerifyResult: verify_view,
        BuildResult: build_view,
    }


def view(result: Any) -> Any:
    """Return an interactive widget for a result (display it, or make it a cell's last line).

    Run, status, logs, verify and build results get a dedicated view, a clarification its form
    (`clarify_view`); any other result is shown as its static HTML.
    """
    if isinstance(result, ClarifyResult):
        return clarify_view(result)  # the form, not a copy: it must stay the one on screen
    make = _views().get(type(result))
    shown: Any
    if make is not None:
        shown = make(result)
    elif hasattr(result, "_repr_mimebundle_"):
        shown = ResultHTML(render_html(result))
    else:
        shown = ResultHTML(html.escape(repr(result)))
    shown.plain_text = render_text(result) if hasattr(result, "_repr_mimebundle_") else repr(result)
    return shown
