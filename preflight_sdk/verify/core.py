"""`verify`: check an MCP server against what it promises, over real stdio."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from preflight_sdk.config.model import McpConfig
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import InputError

from .result import CallReport, Finding, ServerInfo, ToolReport, VerifyResult, decide_status, summarise
from .spec import ExpectedTool, ServerSpec, resolve_spec

__all__ = ["verify"]


async def verify(
    *,
    root: Path | None,
    mcp: McpConfig | None = None,
    command: str | Sequence[str] | None = None,
    manifest: str | os.PathLike[str] | None = None,
    timeout: str | int = "10s",
    call_timeout: str | int = "30s",
    call_readonly: bool = False,
    call_open_world: bool = False,
    strict: bool = False,
    expected_tools: Sequence[ExpectedTool] | None = None,
    env: Mapping[str, str] | None = None,
    mcp_only: bool = False,
) -> VerifyResult:
    """Start an MCP server on stdio, list its tools and check them against their declarations.

    The server comes from `command` or `manifest` (not both), else from `mcp`; the declared
    tools from `expected_tools`, else from that same source. See docs/verify.md for every check.

    Args:
        root: the directory relative paths are taken from (manifest, `mcp.cwd`, schema files);
            also the server's working directory for a bare `command`. None: the current directory.
        mcp: the `mcp:` block of e2e.yaml (start, cwd, env, tools with optional schemas).
        command: the start command: an argv list, or a string split like a shell would (no shell
            runs it).
        manifest: path of a pai-deps style manifest (`mcp_start` + `provides.mcp` list, or
            `provides.mcp.start` + `tools`).
        timeout: one deadline for spawn + handshake + the whole tools/list walk (`"10s"`, `"500ms"`
            or milliseconds); also the limit of each command-line contract.
        call_timeout: the limit of each call made with `call_readonly`, counted again from each
            progress notification the server sends (up to ten times this in all).
        call_readonly: also call each `readOnlyHint: true` tool whose `openWorldHint` is false with
            arguments built from its schema, each declared tool with `example_arguments` with
            those (read-only or not), an unknown tool, and a read-only tool with a wrongly typed
            argument.
        call_open_world: with `call_readonly`, also call read-only tools whose `openWorldHint`
            is true or unset (they may reach systems outside the environment).
        strict: tools served but not declared are errors (else warnings), and a missing start
            command is an error (else the result is `skipped`).
        expected_tools: declarations that replace those of the source.
        env: variables added to the server's environment (over the inherited one and `mcp.env`).
        mcp_only: skip the command-line contracts a manifest declares (`provides.cli`).

    Returns:
        The result; it is returned whenever the verification could run, also when the server
        failed to start, timed out or broke the protocol (`status: "error"`).

    Raises:
        InputError: `INVALID_INPUT` for a bad timeout or command string, or both `command` and
            `manifest`.
        ConfigError: `MANIFEST_INVALID` for a bad manifest, `CONFIG_INVALID` for a bad schema file.
    """
    started = anyio.current_time()
    seconds = parse_duration(timeout, field="timeout")
    if seconds <= 0:
        raise InputError(f"timeout must be positive, got {timeout!r}", hint='use e.g. "10s" or 10000 (ms)')
    per_call = parse_duration(call_timeout, field="call_timeout")
    if per_call <= 0:
        raise InputError(
            f"call_timeout must be positive, got {call_timeout!r}", hint='use e.g. "30s" or 30000 (ms)'
        )
    spec = await anyio.to_thread.run_sync(
        partial(
            resolve_spec,
            root=root,
            mcp=mcp,
            command=command,
            manifest=manifest,
            expected_tools=expected_tools,
            env=env,
        )
    )
    cli = []
    if spec.cli and not mcp_only:
        from .cli_checks import check_cli

        cli = await check_cli(spec.cli, cwd=spec.cwd, env={**os.environ, **spec.env}, limit=seconds)
    if spec.argv is None:
        skipped = _skipped(spec, strict=strict, started=started)
        if not cli:
            return skipped
        summary = summarise([], skipped.findings, cli)
        return msgspec.structs.replace(
            skipped, cli=cli, summary=summary, status="failed" if summary.errors else "skipped"
        )

    from .compare import compare_tools  # these pull in mcp and jsonschema: only when verifying
    from .dynamic import call_checks
    from .session import run_session

    calls: list[CallReport] = []
    after_listing = None
    if call_readonly:
        after_listing = partial(
            call_checks, limit=per_call, examples=_examples(spec), open_world=call_open_world, record=calls
        )
    outcome = await run_session(spec, limit=seconds, after_listing=after_listing)
    findings = [f for f in outcome.findings if f.tool is None]
    by_tool = [f for f in outcome.findings if f.tool is not None]
    tools: list[ToolReport] = []
    if outcome.tools is not None:
        tools = compare_tools(spec.declared, outcome.tools, strict=strict)
        tools = _attach(tools, by_tool)
        if not spec.declared:
            findings.append(
                Finding(
                    severity="info",
                    code="NO_DECLARATIONS",
                    message="no tools are declared, so nothing was compared; "
                    "the served tools were checked on their own",
                )
            )
    summary = summarise(tools, findings, cli)
    status = decide_status(summary, findings, skipped=False)
    server = ServerInfo(
        command=spec.argv,
        cwd=str(spec.cwd) if spec.cwd is not None else None,
        name=outcome.name,
        version=outcome.version,
        protocol_version=outcome.protocol_version,
    )
    return VerifyResult(
        status=status,
        server=server,
        tools=tools,
        findings=findings,
        summary=summary,
        duration=_elapsed(started),
        stderr_tail=outcome.stderr_tail if status in ("error", "failed") else [],
        cli=cli,
        calls=calls,
    )


def _examples(spec: ServerSpec) -> dict[str, dict[str, Any]]:
    """The declared example arguments by tool name (those tools are called with `call_readonly`)."""
    return {t.name: t.example_arguments for t in spec.declared if t.example_arguments is not None}


def _attach(tools: list[ToolReport], findings: list[Finding]) -> list[ToolReport]:
    """Move each tool-level finding from the calls into its tool's report."""
    out = []
    for report in tools:
        mine = [f for f in findings if f.tool == report.name]
        out.append(msgspec.structs.replace(report, findings=[*report.findings, *mine]) if mine else report)
    return out


def _skipped(spec: ServerSpec, *, strict: bool, started: float) -> VerifyResult:
    names = [t.name for t in spec.declared]
    unchecked = f"; {len(names)} declared tools were not checked: {names}" if names else ""
    finding = Finding(
        severity="error" if strict else "warning",
        code="NO_START_COMMAND",
        message=f"there is no command to start the MCP server{unchecked} (set `mcp_start` in the manifest, "
        "`mcp.start` in e2e.yaml, or pass `command`)",
    )
    summary = summarise([], [finding])
    return VerifyResult(
        status="skipped",
        findings=[finding],
        summary=summary,
        duration=_elapsed(started),
    )


def _elapsed(started: float) -> int:
    return round((anyio.current_time() - started) * 1000)
