"""The envelope on the wire of a real `preflight-mcp`: a failing verdict is a successful call.

A run with failing tests and a verify with a missing tool did their job: `isError` is false,
`success` true, and the verdict is `data.status`. Only an operation that could not do its job is
an error reply, and then `error` carries code, message, retryable and hint.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from support.results import check_whole_data

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")
SERVERS = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_servers"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """No services (no Docker needed): one shell suite that fails, and an MCP server missing a tool."""
    (tmp_path / "e2e.yaml").write_text(
        textwrap.dedent(
            f"""\
            project: {{name: verdicts}}
            tests:
              suites:
                - {{id: smoke, runner: shell, command: [{json.dumps(sys.executable)}, -c, "exit 3"]}}
            mcp:
              start: [{json.dumps(sys.executable)}, drift.py]
              cwd: {json.dumps(str(SERVERS))}
              tools:
                - name: search_books
                - name: get_stats
            """
        ),
        encoding="utf-8",
    )
    return tmp_path


def _checked(reply: types.CallToolResult, tool: types.Tool) -> dict[str, Any]:
    envelope = reply.structured_content
    assert envelope is not None
    jsonschema.Draft202012Validator(tool.output_schema or {}).validate(envelope)
    check_whole_data(envelope, tool.output_schema)
    return envelope


async def test_failing_verdicts_are_successful_calls_and_errors_always_explain(project: Path) -> None:
    params = StdioServerParameters(command=LAUNCHER, args=["--project", str(project)], env=dict(os.environ))
    with anyio.fail_after(90), (project / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}
            run = await client.call_tool("preflight_run", {})
            verify = await client.call_tool("preflight_verify", {"timeout": "30s"})
            missing = await client.call_tool("preflight_run_suite", {"suiteId": "nope"})

    ran = _checked(run, tools["preflight_run"])
    assert (run.is_error, ran["success"], ran["data"]["status"]) == (False, True, "failed"), ran
    assert ran["runId"] == ran["data"]["runId"] and "error" not in ran

    verified = _checked(verify, tools["preflight_verify"])
    assert (verify.is_error, verified["success"], verified["data"]["status"]) == (False, True, "failed")
    statuses = {t["name"]: t["status"] for t in verified["data"]["tools"]}
    assert statuses["get_stats"] == "missing"

    refused = _checked(missing, tools["preflight_run_suite"])
    assert (missing.is_error, refused["success"], "data" in refused) == (True, False, False)
    error = refused["error"]
    assert error["code"] == "SUITE_NOT_FOUND"
    assert isinstance(error["retryable"], bool) and error["message"] and error["hint"]
