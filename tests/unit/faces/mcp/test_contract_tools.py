"""The `contracts` tool group: opt-in over MCP, and its tools answer through the official client."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import Client

from preflight_sdk.faces.mcp.server import PreflightMcp

pytestmark = pytest.mark.anyio

SHOP = Path(__file__).resolve().parents[4] / "docs" / "examples" / "shop"


async def test_the_contract_tools_are_served_only_when_their_group_is_named(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root, ignore=shutil.ignore_patterns(".preflight"))
    async with Client(PreflightMcp(default_project=str(root)).server) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "preflight_run" in names and not names & {"preflight_check_response", "preflight_generate_cases"}

    server = PreflightMcp(default_project=str(root), groups=["contracts", "runs"])
    async with Client(server.server) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"preflight_check_response", "preflight_generate_cases", "preflight_run"} <= names
        reply = await client.call_tool(
            "preflight_check_response",
            {"service": "orders", "method": "GET", "path": "/orders/7", "status": 200, "body": '{"id": 7}'},
        )
        assert reply.is_error is False
        data = json.loads(reply.content[0].text)["data"]  # type: ignore[union-attr]
        assert data["operation"] == "GET /orders/{id}"
        assert ("body.id", "type", "contracts/schemas.yaml", 13) in {
            (v["path"], v["rule"], v["file"], v["line"]) for v in data["violations"]
        }
        written = await client.call_tool("preflight_generate_cases", {"service": "orders"})
        data = json.loads(written.content[0].text)["data"]  # type: ignore[union-attr]
        assert data["file"] == "tests/generated/orders.yaml" and (root / data["file"]).is_file()
