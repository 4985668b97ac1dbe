"""Opt-in checks that call the server: chosen tools, an unknown tool, a wrongly typed argument.

A tool is called when it is annotated `readOnlyHint: true`, with the smallest arguments its
schema accepts (see `synth`; a tool whose required arguments cannot be built is skipped with an
info finding), or when its declaration gives `example_arguments`, with exactly those, read-only
or not: declaring them is the caller's statement that the call is safe. The official client
validates `structuredContent` against `outputSchema` and raises `RuntimeError` when it does not
conform; that becomes a finding here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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

Outcome = types.CallToolResult | MCPError | RuntimeError | ValidationError | TimeoutError


async def call_checks(
    client: Client,
    tools: list[dict[str, Any]],
    *,
    limit: float,
    examples: Mapping[str, dict[str, Any]] | None = None,
) -> list[Finding]:
    """Call the read-only tools and those with example arguments, then probe an unknown tool and
    a wrongly typed argument.

    Args:
        client: a connected client whose listing is complete.
        tools: the served tool definitions (wire form), called in server order.
        limit: seconds allowed for each call.
        examples: declared example arguments by tool name; such a tool is called with them
            instead of synthesised ones, even when it is not annotated read-only.
    """
    chosen = examples or {}
    findings: list[Finding] = []
    named = [t for t in tools if isinstance(t.get("name"), str)]
    for tool in named:
        if tool["name"] in chosen:
            findings.extend(await _call_tool(client, tool["name"], chosen[tool["name"]], limit, example=True))
        elif _read_only(tool):
            findings.extend(await _call_readonly(client, tool, limit))
    readonly = [t for t in named if _read_only(t)]
    findings.extend(await _unknown_tool(client, {t.get("name") for t in tools}, limit))
    # Only read-only tools get the wrong-typed probe: a tool that skips validation could act on it.
    findings.extend(await _wrong_type(client, readonly, limit))
    return findings


def _read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


async def _call(client: Client, name: str, arguments: dict[str, Any], limit: float) -> Outcome:
    """Call a tool; return its result or the failure (as a value, to keep the callers flat)."""
    try:
        with anyio.fail_after(limit):
            return await client.call_tool(name, arguments)
    except (MCPError, RuntimeError, ValidationError, TimeoutError) as exc:
        return exc


async def _call_readonly(client: Client, tool: dict[str, Any], limit: float) -> list[Finding]:
    """Call a read-only tool with arguments synthesised from its inputSchema."""
    arguments = valid_arguments(tool.get("inputSchema"))
    if arguments is None:
        return [
            Finding(
                severity="info",
                code="CALL_SKIPPED",
                message="not called: no valid arguments can be built from its inputSchema "
                "(declare `exampleArguments` to have it called)",
                tool=tool["name"],
            )
        ]
    return await _call_tool(client, tool["name"], arguments, limit, example=False)


async def _call_tool(
    client: Client, name: str, arguments: dict[str, Any], limit: float, *, example: bool
) -> list[Finding]:
    """Call `name` with `arguments` and judge the answer.

    `example` says the arguments were declared as working: an isError answer is then an error,
    where for synthesised arguments it can be legitimate (an info).
    """
    outcome = await _call(client, name, arguments, limit)
    return _judge(outcome, name, json.dumps(arguments), limit, example=example)


def _judge(outcome: Outcome, name: str, shown: str, limit: float, *, example: bool) -> list[Finding]:
    def finding(severity: Severity, code: str, message: str) -> Finding:
        return Finding(severity=severity, code=code, message=message, tool=name)

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
        return _is_error(texts, name, shown, example=example)
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


def _is_error(texts: list[str], name: str, shown: str, *, example: bool) -> list[Finding]:
    """Findings for an isError answer: `CALL_IS_ERROR`, plus `ERROR_TEXT_MISSING` without text."""
    said = " ".join(texts)[:200]
    # Example arguments were declared as working, so refusing them is a broken promise; refusing
    # synthesised ones can be legitimate (a lookup of an id that does not exist).
    severity: Severity = "error" if example else "info"
    what = f"its example arguments {shown}" if example else shown
    out = [
        Finding(
            severity=severity,
            code="CALL_IS_ERROR",
            message=f"returned isError for {what}: {said!r}",
            tool=name,
        )
    ]
    if not any(t.strip() for t in texts):
        out.append(
            Finding(
                severity="warning",
                code="ERROR_TEXT_MISSING",
                message="an isError result without text the model could act on",
                tool=name,
            )
        )
    return out


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
