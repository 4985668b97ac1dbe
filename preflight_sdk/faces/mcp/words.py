"""The MCP face's words: an operation is the tool an agent calls (`preflight_build`)."""

from __future__ import annotations

from preflight_sdk.core.hints import Wording

__all__ = ["MCP", "TOOL_PREFIX", "tool_name"]

TOOL_PREFIX = "preflight_"


def tool_name(operation: str) -> str:
    """The tool serving an operation."""
    return f"{TOOL_PREFIX}{operation}"


MCP = Wording(operation=tool_name)
