"""`python -m preflight_sdk.faces.mcp`: the `preflight-mcp` stdio server (see `preflight_sdk.faces`)."""

from __future__ import annotations
