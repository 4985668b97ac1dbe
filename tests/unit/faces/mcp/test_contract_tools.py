"""The `contracts` tool group: opt-in over MCP, and its tools answer through the official client."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import Client

from preflight_sdk.faces.mcp.server import OPT_IN_GROUPS, PreflightMcp

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


REPO = Path(__file__).resolve().parents[4]


async def test_an_agent_is_told_how_to_get_the_opt_in_tools_and_the_default_list_leaves_them_out() -> None:
    assert OPT_IN_GROUPS == {"contracts"}  # the tool list's budget holds only with them left out
    async with Client(PreflightMcp(default_project="/srv/p").server) as client:
        told = client.instructions or ""  # what a server without them says of them
    assert "only when --tools names their group: contracts (preflight_check_response" in told
    async with Client(PreflightMcp(default_project="/srv/p", groups=sorted(OPT_IN_GROUPS)).server) as client:
        served = (await client.list_tools()).tools
    assert {tool.name for tool in served} == {"preflight_check_response", "preflight_generate_cases"}
    for tool in served:  # each says, where an agent or a human reads it, how it is served
        words = " ".join((tool.description or "").split())
        assert "opt-in group `contracts`: `preflight-mcp --tools environment,runs,contracts`" in words, (
            tool.name
        )
    reference = (REPO / "docs" / "mcp.md").read_text()
    assert "| `contracts` | only when named: `--tools …,contracts` |" in reference
    [row] = [line for line in reference.splitlines() if line.startswith("| `--tools GROUPS` |")]
    assert "every group but the opt-in ones (`contracts`)" in row
    assert "| `environment` | by default |" in reference
