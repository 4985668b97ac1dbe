"""`preflight_import_file` over MCP (the official client, in memory): the same operation, its envelope."""

from __future__ import annotations

import shutil
from pathlib import Path

import jsonschema
import pytest
from mcp import Client

from preflight_sdk.faces.mcp.server import PreflightMcp

pytestmark = pytest.mark.anyio

HURL = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "hurl" / "assert_status_code.hurl"


async def test_an_agent_imports_a_hurl_file_and_reads_what_did_not_convert(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: shop}\n"
        "services:\n"
        "  api: {build: {image: preflight-base/python}, container: {ports: ['0:8000']}}\n"
    )
    shutil.copy(HURL, tmp_path / "status.hurl")
    (tmp_path / "odd.hurl").write_text(
        'GET http://localhost:8000/x\nHTTP 200\n[Asserts]\nxpath "//p" count == 2\n'
    )
    app = PreflightMcp(default_project=str(tmp_path))
    async with Client(app.server, raise_exceptions=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("preflight_import_file", {"source": "status.hurl"})
        envelope = result.structured_content
        assert envelope is not None and envelope["success"] is True and not result.is_error
        jsonschema.Draft202012Validator(tools["preflight_import_file"].output_schema).validate(envelope)
        data = envelope["data"]
        assert (data["cases"], data["suiteEntry"]) == (4, {"id": "status", "file": "tests/status.yaml"})
        assert data["hosts"] == [
            {"found": "http://localhost:8000", "target": "service api", "how": "by port 8000", "requests": 4}
        ]
        odd = (
            await client.call_tool("preflight_import_file", {"source": "odd.hurl", "dryRun": True})
        ).structured_content
        assert odd is not None
        assert odd["data"]["notConverted"] == [
            {
                "place": "odd.hurl:4",
                "source": 'xpath "//p" count == 2',
                "reason": "the `xpath` query has no equivalent",
            }
        ]
        assert odd["data"]["written"] is False and not (tmp_path / "tests" / "odd.yaml").exists()
        again = await client.call_tool("preflight_import_file", {"source": "status.hurl"})
        assert again.is_error and again.structured_content is not None
        assert again.structured_content["error"]["code"] == "INVALID_INPUT"
