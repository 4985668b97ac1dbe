"""MCP Apps over a real spawned `preflight-mcp`, with the official client: the run view for hosts
that declare `io.modelcontextprotocol/ui`, and exactly the replies of before for those that do not."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.extension import advertise
from mcp.client.stdio import stdio_client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")
APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
RUN_TOOLS = {"preflight_run", "preflight_run_suite", "preflight_get_run", "preflight_resume_run",
             "preflight_run_test", "preflight_get_latest_run"}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """No services (no Docker): a shell suite that fails with a line of output, one that passes."""
    (tmp_path / "e2e.yaml").write_text(
        textwrap.dedent(
            f"""\
            project: {{name: apps}}
            tests:
              suites:
                - id: smoke
                  runner: shell
                  command: [{json.dumps(sys.executable)}, -c, "print('the <b>smoke</b> went wrong'); exit 3"]
                - {{id: fine, runner: shell, command: [{json.dumps(sys.executable)}, -c, "pass"]}}
            """
        ),
        encoding="utf-8",
    )
    return tmp_path


def _params(project: Path) -> StdioServerParameters:
    return StdioServerParameters(command=LAUNCHER, args=["--project", str(project)], env=dict(os.environ))


async def _session(project: Path, *, apps: bool) -> dict[str, Any]:
    """What one client sees: capabilities, tools, a run's reply, and its resources (or the error)."""
    seen: dict[str, Any] = {}
    with anyio.fail_after(90), (project / "server.log").open("a", encoding="utf-8") as err:
        client = Client(stdio_client(_params(project), errlog=err), extensions=[APPS] if apps else None)  # type: ignore[arg-type]
        async with client:
            seen["capabilities"] = client.server_capabilities
            seen["tools"] = (await client.list_tools()).tools
            run = await client.call_tool("preflight_run", {})
            seen["run"] = run
            run_id = (run.structured_content or {})["runId"]
            seen["run_id"] = run_id
            try:
                seen["resources"] = (await client.list_resources()).resources
                seen["view"] = await client.read_resource("ui://preflight/run")
                seen["page"] = await client.read_resource(f"ui://preflight/runs/{run_id}")
                try:
                    await client.read_resource("ui://preflight/runs/01JDQ8ZK5X7N3V9G2H4M6P8R0T")
                except MCPError as exc:
                    seen["unknown"] = exc
            except MCPError as exc:
                seen["refused"] = exc
    return seen


async def test_a_host_with_apps_gets_the_run_view_and_the_page_of_the_run(project: Path) -> None:
    seen = await _session(project, apps=True)
    capabilities = seen["capabilities"]
    assert capabilities.extensions is not None and EXTENSION_ID in capabilities.extensions
    assert capabilities.resources is not None
    tools = {t.name: t for t in seen["tools"]}
    for name, tool in tools.items():
        expected = {"ui": {"resourceUri": "ui://preflight/run"}} if name in RUN_TOOLS else None
        assert tool.meta == expected, name
    [listed] = seen["resources"]
    assert (listed.uri, listed.mime_type) == ("ui://preflight/run", APP_MIME_TYPE)

    [view] = seen["view"].contents
    assert isinstance(view, types.TextResourceContents) and view.mime_type == APP_MIME_TYPE
    assert view.text.startswith("<!DOCTYPE html>") and "ui/initialize" in view.text and ".pfr{" in view.text
    assert "ui/notifications/tool-result" in view.text and "resources/read" in view.text

    [page] = seen["page"].contents
    assert isinstance(page, types.TextResourceContents) and page.mime_type == APP_MIME_TYPE
    run_id = seen["run_id"]
    assert f'id="pfr-run-{run_id}"' in page.text and "1 of 2 cases failed" in page.text
    assert 'class="pfr-failure"' in page.text and "the &lt;b&gt;smoke&lt;/b&gt; went wrong" in page.text
    # The page served is the run's own report.html, listed with its digest.
    listed_page = Path(project / ".preflight" / "runs" / run_id / "report.html")
    assert listed_page.read_text(encoding="utf-8") == page.text
    assert seen["unknown"].error.code == -32002 and "RUN_NOT_FOUND" in seen["unknown"].error.message


async def test_a_client_without_apps_sees_no_change(project: Path) -> None:
    plain = await _session(project, apps=False)
    apps = await _session(project, apps=True)
    capabilities = plain["capabilities"]
    assert capabilities.resources is None and not (capabilities.extensions or {}).get(EXTENSION_ID)
    assert all(tool.meta is None for tool in plain["tools"])
    # The same tools, field for field, but for the apps `_meta`.
    assert [t.model_dump(exclude={"meta"}) for t in plain["tools"]] == [
        t.model_dump(exclude={"meta"}) for t in apps["tools"]
    ]
    # Resources are not there at all, as before.
    assert plain["refused"].error.code == types.METHOD_NOT_FOUND and "resources" not in plain
    # The run's reply is the envelope, and only the envelope, as text and as structured content.
    run = plain["run"]
    assert run.meta == apps["run"].meta and "ui" not in (run.meta or {}) and run.is_error is False
    [text] = run.content
    assert isinstance(text, types.TextContent) and json.loads(text.text) == run.structured_content
    assert run.structured_content["data"]["status"] == "failed"
    assert set(run.structured_content) == set(apps["run"].structured_content)


def _handshake(project: Path, capabilities: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The 2025-06-18 handshake over raw stdio: the `initialize` result and the `tools/list` tools."""
    import subprocess

    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": capabilities,
                    "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]  # fmt: skip
    replies: dict[int, dict[str, Any]] = {}
    with subprocess.Popen(
        [LAUNCHER, "--project", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ),
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
            server.stdin.flush()
            while 1 not in replies:  # the reply to tools/list comes last; stdin stays open until then
                line = server.stdout.readline()
                assert line, "the server closed its output before answering"
                reply = json.loads(line)
                if "id" in reply:
                    replies[reply["id"]] = reply
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    return replies[0]["result"], replies[1]["result"]["tools"]


def test_the_older_handshake_shows_the_extension_only_to_a_client_that_declares_it(project: Path) -> None:
    plain, plain_tools = _handshake(project, {})
    declared = {"extensions": {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}}
    apps, apps_tools = _handshake(project, declared)
    assert "resources" not in plain["capabilities"] and EXTENSION_ID not in plain["capabilities"].get(
        "extensions", {}
    )
    # (This protocol version has no `extensions` in the server's capabilities: the SDK leaves it out.)
    assert "resources" in apps["capabilities"]
    assert all("_meta" not in tool for tool in plain_tools)
    marked = {
        t["name"]
        for t in apps_tools
        if t.get("_meta", {}).get("ui", {}).get("resourceUri") == "ui://preflight/run"
    }
    assert marked == RUN_TOOLS


async def _templates(project: Path, *, apps: bool, default_project: bool = True) -> Any:
    """`resources/templates/list` as one client sees it (the error when refused)."""
    args = ["--project", str(project)] if default_project else []
    params = StdioServerParameters(command=LAUNCHER, args=args, env=dict(os.environ), cwd=str(project))
    with anyio.fail_after(60), (project / "server.log").open("a", encoding="utf-8") as err:
        client = Client(stdio_client(params, errlog=err), extensions=[APPS] if apps else None)  # type: ignore[arg-type]
        async with client:
            try:
                return (await client.list_resource_templates()).resource_templates
            except MCPError as exc:
                return exc


async def test_the_page_of_a_run_is_listed_as_a_resource_template(project: Path) -> None:
    [template] = await _templates(project, apps=True)
    assert (template.uri_template, template.mime_type) == ("ui://preflight/runs/{runId}", APP_MIME_TYPE)
    assert template.name and template.description
    # Without a default project, the page names its project (RFC 6570 form-style query).
    [elsewhere] = await _templates(project, apps=True, default_project=False)
    assert elsewhere.uri_template == "ui://preflight/runs/{runId}{?project}"
    refused = await _templates(project, apps=False)
    assert isinstance(refused, MCPError) and refused.error.code == types.METHOD_NOT_FOUND
