"""The result of `verify`: tools found, missing and extra, and findings by severity.

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

from typing import Any, Literal

import msgspec

from preflight_sdk.core.results.base import Part, Result

__all__ = [
    "ERROR_CODES",
    "CallOutcome",
    "CallReport",
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
]

Severity = Literal["error", "warning", "info"]
ToolStatus = Literal["found", "missing", "extra"]
VerifyStatus = Literal["passed", "failed", "error", "skipped"]
CallOutcome = Literal["answered", "is_error", "failed", "timed_out", "skipped"]

ERROR_CODES = frozenset({"SERVER_START_FAILED", "SERVER_TIMEOUT", "SERVER_EXITED", "PROTOCOL_ERROR"})
"""Finding codes meaning the verification itself could not finish: they make the status `error`."""


class Finding(Part, frozen=True):
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


class SchemaDiff(Part, frozen=True):
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


class ToolReport(Part, frozen=True):
    """One tool: declared and/or served, and what was found about it."""

    name: str
    status: ToolStatus
    declared: bool
    in_server: bool
    findings: list[Finding] = msgspec.field(default_factory=list)
    schema_diff: SchemaDiff | None = None


class CliReport(Part, frozen=True):
    """One command-line contract of a manifest (`provides.cli`): run, exit status, output checked."""

    command: str
    status: Literal["passed", "failed"]
    duration: int
    exit_code: int | None = None
    findings: list[Finding] = msgspec.field(default_factory=list)


class CallReport(Part, frozen=True):
    """One tool `call_readonly` called, or chose not to call, and why.

    Attributes:
        tool: the tool's name.
        outcome: `answered` (a result that is not isError), `is_error`, `failed` (a JSON-RPC
            error or a result the client rejected), `timed_out`, or `skipped` (not called).
        arguments: what was sent (None when skipped).
        arguments_from: `example` (declared as working) or `invented` (built from inputSchema).
        duration: milliseconds the call took (None when skipped).
        reason: why it was skipped, or what the outcome means for the checks of its answer.
    """

    tool: str
    outcome: CallOutcome
    arguments: dict[str, Any] | None = None
    arguments_from: Literal["example", "invented"] | None = None
    duration: int | None = None
    reason: str | None = None


class ServerInfo(Part, frozen=True):
    """The server under test: how it was started and what it said about itself."""

    command: list[str]
    name: str | None = None
    version: str | None = None
    protocol_version: str | None = None
    cwd: str | None = None


class VerifySummary(Part, frozen=True):
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
        calls: with `call_readonly`, each tool called (arguments, outcome, time) or skipped (why),
            in server order.
    """

    status: VerifyStatus
    summary: VerifySummary
    duration: int
    server: ServerInfo | None = None
    tools: list[ToolReport] = msgspec.field(default_factory=list)
    findings: list[Finding] = msgspec.field(default_factory=list)
    stderr_tail: list[str] = msgspec.field(default_factory=list)
    cli: list[CliReport] = msgspec.field(default_factory=list)
    calls: list[CallReport] = msgspec.field(default_factory=list)

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
