"""Check an MCP server against what it promises, over real stdio.

```python
from preflight_sdk.verify import verify

result = await verify(root=None, command="python server.py", call_readonly=True)
print(result.status, result.summary)
```

Importing this package is cheap: the MCP client and jsonschema are loaded when `verify` runs.
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
    render_html,
    render_text,
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
    "render_html",
    "render_text",
    "verify",
]
