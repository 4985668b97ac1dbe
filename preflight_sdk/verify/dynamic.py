"""Opt-in checks that call the server: read-only tools, an unknown tool, a wrongly typed argument.

Only tools annotated `readOnlyHint: true` are ever called, with the smallest arguments their
schema accepts (see `synth`); a tool whose required arguments cannot be built is skipped with
an info finding. The official client validates `structuredContent` against `outputSchema` and
raises `RuntimeError` when it does not conform; that becomes a finding here.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, MCPError
from pydantic import ValidationError

from .result import Finding, Severity
from .synth import valid_arguments, wrong_typed_arguments

__all__ = ["UNKNOWN_TOOL", "call_checks"]

UNKNOWN_TOOL = "preflight_verify_no_such_tool"
"""The name called to check that unknown tools are rejected (suffixed if a server serves it)."""


async def call_checks(client: Client, tools: list[dict[str, Any]], *, limit: float) -> list[Finding]:
    """Call every read-only tool, then probe an unknown tool and a wrongly typed argument.

    Args:
        client: a connected client whose listing is complete.
        tools: the served tool definitions (wire form).
        limit: seconds allowed for each call.
    """
    findings: list[Finding] = []
    readonly = [t for t in tools if isinstance(t.get("name"), str) and _read_only(t)]
    for tool in readonly:
        findings.extend(await _call_readonly(client, tool, limit))
    findings.extend(await _unknown_tool(client, {t.get("name") for t in tools}, limit))
    findings.extend(await _wrong_type(client, readonly, limit))
    return findings


def _read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


async def _call(
    client: Client, name: str, arguments: dict[str, Any], limit: float
) -> types.CallToolResult | MCPError | RuntimeError | ValidationError | TimeoutError:
    """Call a tool; return its result or the failure (as a value, to keep the callers flat)."""
    try:
        with anyio.fail_after(limit):
            return await client.call_tool(name, arguments)
    except (MCPError, RuntimeError, ValidationError, TimeoutError) as exc:
        return exc


async def _call_readonly(client: Client, tool: dict[str, Any], limit: float) -> list[Finding]:
    name = tool["name"]

    def finding(severity: Severity, code: str, message: str) -> Finding:
        return Finding(severity=severity, code=code, message=message, tool=name)

    arguments = valid_arguments(tool.get("inputSchema"))
    if arguments is None:
        return [
            finding(
                "info", "CALL_SKIPPED", "not called: no valid arguments can be built from its inputSchema"
            )
        ]
    outcome = await _call(client, name, arguments, limit)
    shown = json.dumps(arguments)
    if isinstance(outcome, TimeoutError):
        return [finding("error", "CALL_FAILED", f"no answer within {limit:g} s to a call with {shown}")]
    if isinstance(outcome, MCPError):
        return [
            finding(
                "error",
                "CALL_FAILED",
                f"call with {shown} failed: JSON-RPC error {outcome.code}: {outcome.message}",
            )
        ]
    if isinstance(outcome, ValidationError):
        return [
            finding(
                "error",
                "PROTOCOL_ERROR",
                f"tools/call result does not conform to MCP: {_first_error(outcome)}",
            )
        ]
    if isinstance(outcome, RuntimeError):
        # jsonschema's message spans lines (schema and instance dumps); the first one says it all.
        return [finding("error", "STRUCTURED_CONTENT_INVALID", str(outcome).splitlines()[0])]
    texts = [block.text for block in outcome.content if isinstance(block, types.TextContent)]
    if outcome.is_error:
        out = [finding("info", "CALL_IS_ERROR", f"returned isError for {shown}: {' '.join(texts)[:200]!r}")]
        if not any(t.strip() for t in texts):
            out.append(
                finding(
                    "warning", "ERROR_TEXT_MISSING", "an isError result without text the model could act on"
                )
            )
        return out
    if outcome.structured_content is not None and not any(
        _mirrors(t, outcome.structured_content) for t in texts
    ):
        return [
            finding(
                "warning",
                "TEXT_MIRROR_MISSING",
                "structuredContent is not mirrored as JSON in a TextContent block "
                "(older clients read only content)",
            )
        ]
    return []


def _mirrors(text: str, structured: Any) -> bool:
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False


async def _unknown_tool(client: Client, served: set[Any], limit: float) -> list[Finding]:
    name = UNKNOWN_TOOL
    while name in served:
        name += "_"
    outcome = await _call(client, name, {}, limit)
    if isinstance(outcome, MCPError):
        if outcome.code == types.INVALID_PARAMS:
            return []
        return [
            Finding(
                severity="warning",
                code="UNKNOWN_TOOL_HANDLING",
                message=f"calling unknown tool {name!r} gave JSON-RPC error {outcome.code}, "
                "not -32602 (invalid params)",
            )
        ]
    if isinstance(outcome, types.CallToolResult):
        if outcome.is_error:
            return [
                Finding(
                    severity="warning",
                    code="UNKNOWN_TOOL_HANDLING",
                    message=f"calling unknown tool {name!r} gave an isError result; "
                    "the spec asks for JSON-RPC error -32602",
                )
            ]
        return [
            Finding(
                severity="error",
                code="UNKNOWN_TOOL_ACCEPTED",
                message=f"calling unknown tool {name!r} succeeded; "
                "it must be rejected with JSON-RPC error -32602",
            )
        ]
    return [
        Finding(
            severity="error",
            code="CALL_FAILED",
            message=f"calling unknown tool {name!r} failed: {_describe(outcome, limit)}",
        )
    ]


async def _wrong_type(client: Client, readonly: list[dict[str, Any]], limit: float) -> list[Finding]:
    for tool in readonly:
        probe = wrong_typed_arguments(tool.get("inputSchema"))
        if probe is None:
            continue
        prop, arguments = probe
        name = tool["name"]
        outcome = await _call(client, name, arguments, limit)
        if isinstance(outcome, types.CallToolResult) and outcome.is_error:
            return []
        if isinstance(outcome, types.CallToolResult):
            what = "accepted it without an error"
        elif isinstance(outcome, MCPError):
            what = f"answered JSON-RPC error {outcome.code} ({outcome.message})"
        else:
            what = f"failed: {_describe(outcome, limit)}"
        return [
            Finding(
                severity="warning",
                code="BAD_ARGUMENT_HANDLING",
                message=f"a wrongly typed {prop!r} ({json.dumps(arguments)}) {what}; "
                "invalid arguments should give "
                "an isError result the model can correct",
                tool=name,
            )
        ]
    return [
        Finding(
            severity="info",
            code="BAD_ARGUMENT_NOT_CHECKED",
            message="no read-only tool has a typed argument to send a wrong value to",
        )
    ]


def _describe(outcome: RuntimeError | ValidationError | TimeoutError | MCPError, limit: float) -> str:
    if isinstance(outcome, TimeoutError):
        return f"no answer within {limit:g} s"
    if isinstance(outcome, ValidationError):
        return f"result does not conform to MCP: {_first_error(outcome)}"
    return str(outcome)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
