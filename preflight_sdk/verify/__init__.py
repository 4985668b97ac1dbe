"""Check an MCP server against what it promises, over real stdio.

```python
from . import verify

result = await verify(root=None, command="python server.py", call_readonly=True)
print(result.status, result.summary)
```

Importing this package is cheap: the MCP client and jsonschema are loaded when `verify` runs.

Layer: an area. Owns verifying an MCP server as a client (the `mcp` client, never `mcp.server`)
and the `VerifyResult` data; how it reads is the display face's. May import the engine (its
process helpers), config and the core; never a face.
"""

from __future__ import annotations

from .core import verify
from .result import (
    Finding,
    SchemaDiff,
    ServerInfo,
    ToolReport,
    VerifyResult,
    VerifySummary,
)
from .spec import ExpectedTool

__all__ = [
    "ExpectedTool",
    "Finding",
    "SchemaDiff",
    "ServerInfo",
    "ToolReport",
    "VerifyResult",
    "VerifySummary",
    "verify",
]
