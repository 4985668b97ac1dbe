"""A tool reply (`CallToolResult`) from an envelope: the JSON text and the same data structured."""

from __future__ import annotations

from typing import Any

import msgspec
from mcp import types

__all__ = ["tool_reply"]


def tool_reply(envelope: Any, *, is_error: bool) -> types.CallToolResult:
    """`content[0].text` is the envelope's JSON, `structuredContent` the same data, `isError` as given."""
    raw = msgspec.json.encode(envelope)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=raw.decode())],
        structured_content=msgspec.json.decode(raw),
        is_error=is_error,
    )
