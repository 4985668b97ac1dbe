"""The result of `verify`: tools found, missing and extra, findings by severity, and renderings.

`VerifyResult.status` is one of:

- `passed`: every declared tool is served and no finding is an error;
- `failed`: a declared tool is missing, or a check found an error (a broken schema, stdout
  pollution, a schema that differs from the declared one, an extra tool under `strict`);
- `error`: the verification itself could not finish: the server did not start
  (`SERVER_START_FAILED`), did not answer in time (`SERVER_TIMEOUT`), exited mid-session
  (`SERVER_EXITED`) or broke the protocol (`PROTOCOL_ERROR`);
- `skipped`: there is no command to start the server (a warning, not a failure).
"""

from __future__ import annotations

import html
from typing import Literal

import msgspec

from ..display import renders
from ..results.base import Result

__all__ = [
    "ERROR_CODES",
    "CliReport",
    "Finding",
    "SchemaDiff",
    "ServerInfo",
    "Severity",
    "ToolReport",
    "ToolStatus",
    "VerifyResult",
    "VerifyStatus",
    "VerifySummary",
    "render_html",
    "render_text",
]

Severity = Literal["error", "warning", "info"]
ToolStatus = Literal["found", "missing", "extra"]
VerifyStatus = Literal["passed", "failed", "error", "skipped"]

ERROR_CODES = frozenset({"SERVER_START_FAILED", "SERVER_TIMEOUT", "SERVER_EXITED", "PROTOCOL_ERROR"})
"""Finding codes meaning the verification itself could not finish: they make the status `error`."""


class _Part(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A member of a verify result."""


class Finding(_Part, frozen=True):
    """One thing `verify` noticed.

    Attributes:
        severity: `error` fails the verification, `warning` and `info` do not.
        code: stable identifier (`TOOL_MISSING`, `SCHEMA_MISMATCH`, `DESCRIPTION_MISSING`…), listed
            in docs/verify.md.
        message: what is wrong and, where it helps, what to do about it.
        tool: the tool concerned, when there is one.
        path: where in the tool definition (`inputSchema.properties.limit`), when it helps.
    """

    severity: Severity
    code: str
    message: str
    tool: str | None = None
    path: str | None = None


class SchemaDiff(_Part, frozen=True):
    """How a served `inputSchema` differs from the declared one.

    Hashes are sha256 of the canonical JSON (sorted keys, no whitespace). Property names are the
    top-level `properties` keys.
    """

    declared_hash: str
    served_hash: str
    added: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    changed: list[str] = msgspec.field(default_factory=list)
    required_added: list[str] = msgspec.field(default_factory=list)
    required_removed: list[str] = msgspec.field(default_factory=list)
    other_keys: list[str] = msgspec.field(default_factory=list)


class ToolReport(_Part, frozen=True):
    """One tool: declared and/or served, and what was found about it."""

    name: str
    status: ToolStatus
    declared: bool
    in_server: bool
    findings: list[Finding] = msgspec.field(default_factory=list)
    schema_diff: SchemaDiff | None = None


class CliReport(_Part, frozen=True):
    """One command-line contract of a manifest (`provides.cli`): run, exit status, output checked."""

    command: str
    status: Literal["passed", "failed"]
    duration: int
    exit_code: int | None = None
    findings: list[Finding] = msgspec.field(default_factory=list)


class ServerInfo(_Part, frozen=True):
    """The server under test: how it was started and what it said about itself."""

    command: list[str]
    name: str | None = None
    version: str | None = None
    protocol_version: str | None = None
    cwd: str | None = None


class VerifySummary(_Part, frozen=True):
    """Counts over the whole result."""

    # No defaults: zero counts are written out, not omitted.
    found: int
    missing: int
    extra: int
    errors: int
    warnings: int
    infos: int


class VerifyResult(Result, frozen=True):
    """What `verify` found about an MCP server, against what was declared for it.

    Attributes:
        status: `passed`, `failed`, `error` or `skipped` (see the module docstring).
        server: command, name, version and negotiated protocol version (None when skipped).
        tools: one entry per declared or served tool, declared ones first, in declaration order.
        findings: server-level findings (start, timeout, protocol, stdout pollution, pagination).
        summary: counts of tools by status and of findings by severity (tool findings included).
        duration: milliseconds, spawn to shutdown.
        stderr_tail: the last lines the server wrote to stderr, when the verification did not pass.
    """

    status: VerifyStatus
    summary: VerifySummary
    duration: int
    server: ServerInfo | None = None
    tools: list[ToolReport] = msgspec.field(default_factory=list)
    findings: list[Finding] = msgspec.field(default_factory=list)
    stderr_tail: list[str] = msgspec.field(default_factory=list)
    cli: list[CliReport] = msgspec.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """False when a declared tool is missing or any finding is an error (extra tools alone pass)."""
        return self.summary.missing == 0 and self.summary.errors == 0

    def all_findings(self) -> list[Finding]:
        """Return the server-level findings followed by every tool's findings."""
        return [
            *self.findings,
            *(f for tool in self.tools for f in tool.findings),
            *(f for check in self.cli for f in check.findings),
        ]


def summarise(
    tools: list[ToolReport], findings: list[Finding], cli: list[CliReport] | None = None
) -> VerifySummary:
    """Count tools by status and findings (server, tool and command-line level) by severity."""
    every = [
        *findings,
        *(f for tool in tools for f in tool.findings),
        *(f for c in cli or [] for f in c.findings),
    ]
    return VerifySummary(
        found=sum(t.status == "found" for t in tools),
        missing=sum(t.status == "missing" for t in tools),
        extra=sum(t.status == "extra" for t in tools),
        errors=sum(f.severity == "error" for f in every),
        warnings=sum(f.severity == "warning" for f in every),
        infos=sum(f.severity == "info" for f in every),
    )


def decide_status(summary: VerifySummary, findings: list[Finding], *, skipped: bool) -> VerifyStatus:
    """Return the overall status from the counts and the server-level findings."""
    if skipped:
        return "skipped"
    if any(f.code in ERROR_CODES and f.severity == "error" for f in findings):
        return "error"
    return "passed" if summary.missing == 0 and summary.errors == 0 else "failed"


# -- rendering --------------------------------------------------------------------------------

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


def render_text(result: VerifyResult) -> str:
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


_COLOURS = {"passed": "#1a7f37", "failed": "#cf222e", "error": "#cf222e", "skipped": "#9a6700"}
_SEVERITY_COLOURS = {"error": "#cf222e", "warning": "#9a6700", "info": "#57606a"}


def render_html(result: VerifyResult) -> str:
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
        rows = "".join(
            f"<tr><td>{_TOOL_LINE[t.status][0]}</td><td><code>{e(t.name)}</code></td>"
            f"<td>{e(_TOOL_LINE[t.status][1])}</td><td>{len(t.findings)}</td></tr>"
            for t in result.tools
        )
        parts.append(
            '<table style="border-collapse:collapse;margin:6px 0"><tr><th></th><th align="left">tool</th>'
            f'<th align="left">status</th><th align="left">findings</th></tr>{rows}</table>'
        )
    if result.cli:
        rows = "".join(
            f"<tr><td>{'&#10003;' if c.status == 'passed' else '&#10007;'}</td><td><code>{e(c.command)}</code></td>"
            f"<td>{c.exit_code if c.exit_code is not None else '-'}</td></tr>"
            for c in result.cli
        )
        parts.append(
            '<table style="border-collapse:collapse;margin:6px 0"><tr><th></th>'
            f'<th align="left">command</th><th align="left">exit</th></tr>{rows}</table>'
        )
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
    return render_text(result), render_html(result)
