"""`python -m preflight_sdk.faces.mcp [--project PATH] …`: serve the MCP tools over stdio."""

from __future__ import annotations

from .launcher import main

if __name__ == "__main__":
    main(prog_name="python -m preflight_sdk.faces.mcp")
