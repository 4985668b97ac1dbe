"""The generated faces of `Project`: the operation registry, the MCP server and the CLI.

`registry` reflects the public coroutine methods of `Project` once; `mcp_server` turns them into
MCP tools and `cli` into Click commands. Nothing here is imported by `import preflight_sdk`, and
this package imports none of its modules on its own: import the one you need.

Layer: a face (the top). Owns reflection into CLI commands and MCP tools, the envelope, exit
codes, reply budgets, tool groups and the `preflights` aliases. May import anything below;
nothing below imports it (the package root plugs `selfcheck` into `plugs`).
"""

from __future__ import annotations
