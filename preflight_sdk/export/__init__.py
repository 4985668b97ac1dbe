"""The generated faces of `Project`: the operation registry, the MCP server and the CLI.

`registry` reflects the public coroutine methods of `Project` once; `mcp_server` turns them into
MCP tools and `cli` into Click commands. Nothing here is imported by `import preflight_sdk`, and
this package imports none of its modules on its own: import the one you need.
"""

from __future__ import annotations
