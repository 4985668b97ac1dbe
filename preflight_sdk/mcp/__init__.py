"""`python -m preflight_sdk.mcp`: the `preflight-mcp` stdio server (see `preflight_sdk.export`)."""

from __future__ import annotations
