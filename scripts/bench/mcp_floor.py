#!/usr/bin/env python3
"""The floor for scripts/bench/mcp.py: the smallest low-level `mcp` server, with one no-op tool.

Run it with `python -P` (this directory holds `mcp.py`, which would shadow the package). It does
what any stdio server built on the official SDK must do (import `mcp`, construct a
`Server`, serve stdio) and nothing else, so the difference to `preflight-mcp` is what preflight
itself costs.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

TOOLS = types.ListToolsResult(
    tools=[
        types.Tool(
            name="noop",
            description="Do nothing.",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        )
    ]
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return TOOLS


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={})


async def main() -> None:
    server: Server[Any] = Server("floor", version="0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
