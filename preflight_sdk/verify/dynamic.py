"""Opt-in checks that call the server: chosen tools, an unknown tool, a wrongly typed argument.

A tool is called when it is annotated `readOnlyHint: true` and `openWorldHint: false`, with the
smallest arguments its schema accepts (see `synth`; a tool whose required arguments cannot be
built is skipped with an info finding), or when its declaration gives `example_arguments`, with
exactly those, read-only or not: declaring them is the caller's statement that the call is safe.
A read-only tool whose `openWorldHint` is true or unset (the spec's default is true) may reach
systems outside the environment, so it is called only when `open_world` asks for it.

Each call has its own limit, counted again from every progress notification the server sends
(a long operation that reports progress is not cut off), up to `PROGRESS_CAP` times the limit in
all. The official client validates `structuredContent` against `outputSchema` and raises
`RuntimeError` when it does not conform; that becomes a finding here. Every tool gets a
`CallReport`: called (arguments, outcome, time) or skipped (why).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, MCPError
from pydantic import ValidationError

from .result import CallOutcome, CallReport, Finding, Severity
from .synth import valid_arguments, wrong_typed_arguments

__all__ = ["PROGRESS_CAP", "UNKNOWN_TOOL", "call_checks"]

UNKNOWN_TOOL = "preflight_verify_no_such_tool"
"""The name called to check that unknown tools are rejected (suffixed if a server serves it)."""

PROGRESS_CAP = 10
"""A call that keeps reporting progress is still stopped after this many times its limit."""

Outcome = types.CallToolResult | MCPError | RuntimeError | ValidationError | TimeoutError


async def call_checks(
    client: Client,
    tools: list[dict[str, Any]],
    *,
    limit: float,
    examples: Mapping[str, dict[str, Any]] | None = None,
    open_world: bool = False,
    record: list[CallReport] | None = None,
) -> list[Finding]:
    """Call the closed-world read-only tools and those with example arguments, then probe an
    unknown tool and a wrongly typed argument.

    Args:
        client: a connected client whose listing is complete.
        tools: the served tool definitions (wire form), called in server order.
        limit: seconds allowed for each call, counted again from each progress notification.
        examples: declared example arguments by tool name; such a tool is called with them
            instead of synthesised ones, even when it is not annotated read-only.
        open_world: also call read-only tools whose `openWorldHint` is true or unset.
        record: receives one `CallReport` per served tool, in server order.
    """
    chosen = examples or {}
    findings: list[Finding] = []
    reports = record if record is not None else []
    named = [t for t in tools if isinstance(t.get("name"), str)]
    for tool in named:
        name = tool["name"]
        if name in chosen:
            found, report = await _call_tool(client, name, chosen[name], limit, example=True)
            findings.extend(found)
            reports.append(report)
        elif (reason := _not_callable(tool, open_world=open_world)) is not None:
            reports.append(CallReport(tool=name, outcome="skipped", reason=reason))
        else:
            found, report = await _call_readonly(client, tool, limit)
            findings.extend(found)
            reports.append(report)
    callable_readonly = [t for t in named if _not_callable(t, open_world=open_world) is None]
    findings.extend(await _unknown_tool(client, {t.get("name") for t in tools}, limit))
    # Only callable read-only tools get the wrong-typed probe: a tool that skips validation could
    # act on it.
    findings.extend(await _wrong_type(client, callable_readonly, named, limit))
    return findings


def _read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def _not_callable(tool: dict[str, Any], *, open_world: bool) -> str | None:
    """Why `tool` is not called with invented arguments, or None when it may be."""
    if not _read_only(tool):
        return "not annotated readOnlyHint: true (declare exampleArguments to have it called)"
    hint = tool["annotations"].get("openWorldHint")
    if hint is False or open_world:
        return None
    said = "openWorldHint is true" if hint is True else "openWorldHint is not set (the default is true)"
    return (
        f"{said}: it may reach systems outside the environment "
        "(pass call_open_world, --call-open-world, to call it)"
    )


async def _call(client: Client, name: str, arguments: dict[str, Any], limit: float) -> Outcome:
    """Call a tool; return its result or the failure (as a value, to keep the callers flat).

    The limit counts from the request and again from each progress notification, up to
    `PROGRESS_CAP` times the limit in all.
    """
    cap = anyio.current_time() + limit * PROGRESS_CAP
    with anyio.CancelScope(deadline=anyio.current_time() + limit) as scope:

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            scope.deadline = min(cap, anyio.current_time() + limit)

        try:
            return await client.call_tool(name, arguments, progress_callback=progressed)
        except (MCPError, RuntimeError, ValidationError) as exc:
            return exc
    return TimeoutError()


async def _call_readonly(
    client: Client, tool: dict[str, Any], limit: float
) -> tuple[list[Finding], CallReport]:
    """Call a read-only tool with arguments synthesised from its inputSchema."""
    arguments = valid_arguments(tool.get("inputSchema"))
    if arguments is None:
        reason = (
            "no valid arguments can be built from its inputSchema "
            "(declare `exampleArguments` to have it called)"
        )
        finding = Finding(
            severity="info", code="CALL_SKIPPED", message=f"not called: {reason}", tool=tool["name"]
        )
        return [finding], CallReport(tool=tool["name"], outcome="skipped", reason=reason)
    return await _call_tool(client, tool["name"], arguments, limit, example=False)


async def _call_tool(
    client: Client, name: str, arguments: dict[str, Any], limit: float, *, example: bool
) -> tuple[list[Finding], CallReport]:
    """Call `name` with `arguments`, judge the answer and say what happened.

    `example` says the arguments were declared as working: an isError answer is then an error,
    where for synthesised arguments it can be legitimate (an info).
    """
    started = anyio.current_time()
    outcome = await _call(client, name, arguments, limit)
    duration = round((anyio.current_time() - started) * 1000)
    findings = _judge(outcome, name, json.dumps(arguments), limit, example=example)
    kind = _kind(outcome)
    reason = None
    if kind == "is_error" and not example:
        reason = _UNCHECKED
    elif kind != "answered":
        reason = next((f.message for f in findings if f.severity == "error"), None)
    report = CallReport(
        tool=name,
        outcome=kind,
        arguments=arguments,
        arguments_from="example" if example else "invented",
        duration=duration,
        reason=reason,
    )
    return findings, report


_UNCHECKED = (
    "the invented arguments were refused, so its answer (outputSchema, text mirror) was not checked; "
    "declare exampleArguments that work to have it checked"
)


def _kind(outcome: Outcome) -> CallOutcome:
    if isinstance(outcome, TimeoutError):
        return "timed_out"
    if isinstance(outcome, types.CallToolResult):
        return "is_error" if outcome.is_error else "answered"
    return "failed"


def _judge(outcome: Outcome, name: str, shown: str, limit: float, *, example: bool) -> list[Finding]:
    def finding(severity: Severity, code: str, message: str) -> Finding:
        return Finding(severity=severity, code=code, message=message, tool=name)

    if isinstance(outcome, TimeoutError):
        return [
            finding(
                "error",
                "CALL_FAILED",
                f"no answer within {limit:g} s (nor progress for that long) to a call with {shown}",
            )
        ]
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
    if example:
        message = f"returned isError for its example arguments {shown}: {said!r}"
    else:
        message = f"returned isError for the invented arguments {shown}: {said!r}; {_UNCHECKED}"
    out = [Finding(severity=severity, code="CALL_IS_ERROR", message=message, tool=name)]
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


async def _wrong_type(
    client: Client, readonly: list[dict[str, Any]], served: list[dict[str, Any]], limit: float
) -> list[Finding]:
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
        Finding(severity="info", code="BAD_ARGUMENT_NOT_CHECKED", message=_why_unprobed(readonly, served))
    ]


def _why_unprobed(readonly: list[dict[str, Any]], served: list[dict[str, Any]]) -> str:
    """Say why no wrongly typed argument was sent, naming the read-only tools that have one."""
    typed = [t["name"] for t in served if _read_only(t) and _has_typed_property(t)]
    if not typed:
        return "no read-only tool has a typed argument to send a wrong value to"
    callable_names = {t["name"] for t in readonly}
    shown = ", ".join(typed[:5]) + (f" and {len(typed) - 5} more" if len(typed) > 5 else "")
    if not any(name in callable_names for name in typed):
        return (
            f"the read-only tools with a typed argument ({shown}) are open-world and were not called "
            "(pass call_open_world, --call-open-world, to probe them)"
        )
    return (
        f"no wrongly typed value could be sent to the read-only tools with a typed argument ({shown}): "
        "valid values for their other arguments cannot be built, or their schema accepts any type"
    )


def _has_typed_property(tool: dict[str, Any]) -> bool:
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return False
    return any(isinstance(p, dict) and isinstance(p.get("type"), str | list) for p in properties.values())


def _describe(outcome: RuntimeError | ValidationError | TimeoutError | MCPError, limit: float) -> str:
    if isinstance(outcome, TimeoutError):
        return f"no answer within {limit:g} s"
    if isinstance(outcome, ValidationError):
        return f"result does not conform to MCP: {_first_error(outcome)}"
    return str(outcome)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
