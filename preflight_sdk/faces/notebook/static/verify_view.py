"""How a `VerifyResult` reads: tool lines, findings grouped by severity, the summary line."""

from __future__ import annotations

import html
import json

from preflight_sdk.verify.result import VerifyResult

from ..kit import row, table
from . import renders

__all__ = ["verify_html", "verify_text"]

_TOOL_LINE = {
    "found": ("✓", "Found in server"),
    "missing": ("✗", "Not found in server"),
    "extra": ("+", "Extra (not declared)"),
}
_SEVERITY_MARK = {"error": "✗", "warning": "!", "info": "i"}
_SEVERITY_TITLE = {"error": "Errors", "warning": "Warnings", "info": "Info"}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _headline(result: VerifyResult, *, status: bool = True) -> str:
    server = result.server
    name = "MCP server"
    if server is not None and server.name:
        name = f"{server.name} {server.version}".strip() if server.version else server.name
    protocol = f" (protocol {server.protocol_version})" if server and server.protocol_version else ""
    return f"verify {name}{protocol}" + (f": {result.status}" if status else "")


def _summary_line(result: VerifyResult) -> str:
    s = result.summary
    return (
        f"Results: {s.found} found, {s.missing} missing, {s.extra} extra; "
        f"{_plural(s.errors, 'error')}, {_plural(s.warnings, 'warning')}, {_plural(s.infos, 'info')}; "
        f"{result.duration} ms"
    )


def verify_text(result: VerifyResult) -> str:
    """Return the human form: tool lines, findings grouped by severity, then the summary line."""
    lines = [_headline(result)]
    if result.server is not None:
        lines.append(f"  command: {' '.join(result.server.command)}")
    if result.tools:
        lines.append("")
        width = max(len(t.name) for t in result.tools)
        for tool in result.tools:
            mark, text = _TOOL_LINE[tool.status]
            lines.append(f"  {mark} {tool.name.ljust(width)}  {text}")
    if result.cli:
        lines.append("")
        lines.append("Command-line contracts:")
        for check in result.cli:
            mark = "✓" if check.status == "passed" else "✗"
            lines.append(
                f"  {mark} {check.command}  exit {check.exit_code if check.exit_code is not None else '-'}"
            )
    if result.calls:
        lines.append("")
        lines.extend(_call_lines(result))
    every = result.all_findings()
    for severity in ("error", "warning", "info"):
        group = [f for f in every if f.severity == severity]
        if not group:
            continue
        lines.append("")
        lines.append(f"{_SEVERITY_TITLE[severity]} ({len(group)}):")
        for f in group:
            where = f"{f.tool}: " if f.tool else ""
            lines.append(f"  {_SEVERITY_MARK[severity]} {where}{f.code}  {f.message}")
    if result.stderr_tail:
        lines.append("")
        lines.append(f"stderr (last {len(result.stderr_tail)} lines):")
        lines.extend(f"  | {line}" for line in result.stderr_tail)
    lines.append("")
    lines.append(_summary_line(result))
    return "\n".join(lines)


def _call_lines(result: VerifyResult) -> list[str]:
    """One line per tool `call_readonly` considered: outcome, arguments and time, or why skipped."""
    skipped = sum(c.outcome == "skipped" for c in result.calls)
    lines = [f"Calls ({len(result.calls) - skipped} called, {skipped} skipped):"]
    width = max(len(c.tool) for c in result.calls)
    for call in result.calls:
        name = call.tool.ljust(width)
        if call.outcome == "skipped":
            lines.append(f"  - {name}  skipped: {call.reason}")
            continue
        mark = "✓" if call.outcome == "answered" else "✗" if call.outcome in ("failed", "timed_out") else "i"
        source = " (example)" if call.arguments_from == "example" else ""
        arguments = json.dumps(call.arguments)
        if len(arguments) > 80:
            arguments = arguments[:77] + "..."
        lines.append(f"  {mark} {name}  {call.outcome}  {arguments}{source}  {call.duration} ms")
    return lines


_COLOURS = {"passed": "#1a7f37", "failed": "#cf222e", "error": "#cf222e", "skipped": "#9a6700"}
_SEVERITY_COLOURS = {"error": "#cf222e", "warning": "#9a6700", "info": "#57606a"}


def verify_html(result: VerifyResult) -> str:
    """Return self-contained HTML: a header, the tool table, findings grouped by severity, stderr."""
    e = html.escape
    parts = [
        '<div class="pf-result pf-verify" style="font-family:sans-serif;font-size:13px">',
        f'<div><b>{e(_headline(result, status=False))}</b> <span style="color:{_COLOURS[result.status]}">'
        f"&#9679; {e(result.status)}</span></div>",
    ]
    if result.server is not None:
        parts.append(f"<div><code>{e(' '.join(result.server.command))}</code></div>")
    if result.tools:
        rows = [
            row(
                [
                    _TOOL_LINE[t.status][0],
                    f"<code>{e(t.name)}</code>",
                    e(_TOOL_LINE[t.status][1]),
                    str(len(t.findings)),
                ]
            )
            for t in result.tools
        ]
        parts.append(table(["", "tool", "status", "findings"], rows))
    if result.cli:
        rows = [
            row(
                [
                    "&#10003;" if c.status == "passed" else "&#10007;",
                    f"<code>{e(c.command)}</code>",
                    "-" if c.exit_code is None else str(c.exit_code),
                ]
            )
            for c in result.cli
        ]
        parts.append(table(["", "command", "exit"], rows))
    if result.calls:
        rows = [
            row(
                [
                    f"<code>{e(c.tool)}</code>",
                    e(c.outcome),
                    "" if c.arguments is None else f"<code>{e(json.dumps(c.arguments))}</code>",
                    "" if c.duration is None else str(c.duration),
                    e(c.reason or ""),
                ]
            )
            for c in result.calls
        ]
        parts.append(table(["tool called", "outcome", "arguments", "ms", "why"], rows))
    every = result.all_findings()
    for severity in ("error", "warning", "info"):
        group = [f for f in every if f.severity == severity]
        if not group:
            continue
        items = "".join(
            f"<li>{f'<code>{e(f.tool)}</code> ' if f.tool else ''}<b>{e(f.code)}</b> {e(f.message)}</li>"
            for f in group
        )
        parts.append(
            f'<details open><summary style="color:{_SEVERITY_COLOURS[severity]}">'
            f"{_SEVERITY_TITLE[severity]} ({len(group)})</summary><ul>{items}</ul></details>"
        )
    if result.stderr_tail:
        parts.append(
            f"<details><summary>stderr (last {len(result.stderr_tail)} lines)</summary>"
            f"<pre>{e(chr(10).join(result.stderr_tail))}</pre></details>"
        )
    parts.append(f"<div>{e(_summary_line(result))}</div></div>")
    return "".join(parts)


@renders(VerifyResult)
def _render(result: VerifyResult) -> tuple[str, str]:
    return verify_text(result), verify_html(result)
