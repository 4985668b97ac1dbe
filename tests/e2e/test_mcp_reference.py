"""docs/mcp.md and the INVALID_INPUT replies say of each tool what a real `preflight-mcp` serves.

The reference's hints column names `idempotent` exactly for the tools served with
`idempotentHint: true`; an optional argument is described by its plain type (the type its schema
lists), never "string or null", in the reference and in an INVALID_INPUT error alike.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from support.cli import BIN

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
ROW = re.compile(r"^\| \[`(?P<tool>[a-z_]+)`\]\(#[a-z_]+\) \| [a-z]+ \| [^|]+ \| (?P<hints>[^|]+) \|$")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "e2e.yaml").write_text(
        'project: {name: reference}\ntests:\n  suites:\n    - {id: ok, runner: shell, command: ["true"]}\n',
        encoding="utf-8",
    )
    return tmp_path


async def _served(project: Path) -> tuple[dict[str, types.Tool], dict[str, Any]]:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(project)], env=dict(os.environ)
    )
    with anyio.fail_after(60), (project / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            refused = await client.call_tool("preflight_logs", {"container": "api", "lines": "50"})
    assert refused.is_error and refused.structured_content is not None
    return tools, refused.structured_content["error"]


async def test_the_reference_names_the_hints_each_tool_is_served_with(project: Path) -> None:
    tools, _ = await _served(project)
    rows = {m["tool"]: m["hints"].strip() for line in REFERENCE.read_text().splitlines() if (m := ROW.match(line))}
    assert set(tools) <= set(rows)  # the reference also names the tools of opt-in groups
    for name, tool in tools.items():
        hints = rows[name]
        served = tool.annotations
        assert served is not None
        said = set(hints.split(", ")) - {"–"}
        expected = {
            flag
            for flag, on in (
                ("read-only", served.read_only_hint),
                ("destructive", served.destructive_hint),
                ("idempotent", served.idempotent_hint),
                ("open-world", served.open_world_hint),
            )
            if on
        }
        assert said == expected, (name, hints)


async def test_optional_arguments_read_as_their_plain_type_in_the_reference_and_in_errors(project: Path) -> None:
    tools, error = await _served(project)
    text = REFERENCE.read_text()
    rows = [line for line in text.split("<!-- BEGIN GENERATED: tools -->")[1].splitlines() if line.startswith("| `")]
    assert len(rows) > 50 and [row for row in rows if "or null" in row] == []
    # preflight_logs: `lines` is an optional integer, `since` an optional string.
    assert tools["preflight_logs"].input_schema["properties"]["lines"]["type"] == "integer"
    assert error["code"] == "INVALID_INPUT" and error["details"]["expected"] == "integer"
    assert error["details"]["arguments"]["since"] == "string (optional)"
    assert "null" not in str(error["details"]["arguments"]) and "null" not in error["hint"], error
    assert "| `since` | string | no |" in text
