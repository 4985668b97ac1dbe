"""The faces of `Project`, one folder each: `cli`, `mcp`, `pytest` and `notebook`.

`reflection/registry.py` reflects the public coroutine methods of `Project` once; `mcp/server.py`
turns them into MCP tools and `cli/app.py` into Click commands; `docs.py` writes their reference.
Nothing here is imported by `import preflight_sdk`, and this package imports none of its modules
on its own: import the one you need.

Layer: a face (the top). Owns reflection into CLI commands and MCP tools, the envelope, exit
codes, reply budgets, tool groups and the `preflights` aliases. May import anything below;
nothing below imports it (the core finds what it needs of a face through entry points:
`core/face_hooks.py`).
"""

from __future__ import annotations
