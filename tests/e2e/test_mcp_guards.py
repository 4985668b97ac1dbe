"""What a model can make the real `preflight-mcp` do over stdio: only what the project declares,
no writes outside a project, no call that poisons the ones after it."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.anyio

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text("project:\n  name: guarded\n", encoding="utf-8")
    return root


@asynccontextmanager
async def _client(tmp_path: Path, *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=LAUNCHER, args=list(args), env=dict(os.environ), cwd=tmp_path)
    with anyio.fail_after(60), (tmp_path / "server.log").open("a", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            yield client


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = await client.call_tool(tool, arguments)
    assert reply.structured_content is not None
    return reply.structured_content


async def test_verify_is_not_annotated_read_only_and_refuses_an_undeclared_command(
    project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    async with _client(tmp_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        hints = tools["preflight_verify"].annotations
        assert hints is not None and hints.read_only_hint is False and hints.open_world_hint is True
        refused = await _call(
            client, "preflight_verify", {"projectPath": str(project), "command": f"touch {marker}"}
        )
        outside = tmp_path / "elsewhere.json"
        outside.write_text("{}", encoding="utf-8")
        by_manifest = await _call(
            client, "preflight_verify", {"projectPath": str(project), "manifest": "../elsewhere.json"}
        )
    assert refused["success"] is False and refused["error"]["code"] == "INVALID_INPUT"
    assert "--allow-verify-command" in refused["error"]["hint"]
    assert by_manifest["error"]["code"] == "INVALID_INPUT" and "outside" in by_manifest["error"]["message"]
    assert not marker.exists()


async def test_verify_runs_a_command_when_the_launcher_allows_it(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    async with _client(tmp_path, "--allow-verify-command") as client:
        await _call(
            client,
            "preflight_verify",
            {"projectPath": str(project), "command": f"touch {marker}", "timeout": "3s"},
        )
    assert marker.exists()


@pytest.mark.docker
async def test_clean_of_a_directory_without_a_project_file_writes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    async with _client(tmp_path) as client:
        for path in (str(empty), "/etc"):
            reply = await _call(client, "preflight_clean", {"projectPath": path})
            assert reply["success"] is True, reply
            assert reply["data"].get("containers", []) == []
    assert list(empty.iterdir()) == []
    assert not Path("/etc/.preflight").exists()


async def test_a_failed_init_with_a_bad_config_file_leaves_no_trace(project: Path, tmp_path: Path) -> None:
    (project / "broken.yaml").write_text("project: [not, a, mapping]\n", encoding="utf-8")
    async with _client(tmp_path, "--project", str(project)) as client:
        bad = await _call(client, "preflight_init", {"configFile": "broken.yaml"})
        after = await _call(client, "preflight_init", {})
        long = await _call(client, "preflight_init", {"configFile": "x" * 5000})
        deep = await _call(client, "preflight_status", {"projectPath": "/" + "a" * 5000})
        still = await _call(client, "preflight_init", {})
    assert bad["success"] is False and bad["error"]["code"] == "CONFIG_INVALID"
    assert after["success"] is True and after["data"]["projectName"] == "guarded"
    assert long["error"]["code"] == "INVALID_INPUT" and long["error"]["details"]["field"] == "configFile"
    assert deep["error"]["code"] == "INVALID_INPUT" and deep["error"]["details"]["field"] == "projectPath"
    assert still["success"] is True


async def test_project_path_is_confined_to_the_launchers_project(project: Path, tmp_path: Path) -> None:
    (project / "sub").mkdir()
    (project / "sub" / "e2e.yaml").write_text("project:\n  name: sub\n", encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    (other / "e2e.yaml").write_text("project:\n  name: other\n", encoding="utf-8")
    async with _client(tmp_path, "--project", str(project)) as client:
        inside = await _call(client, "preflight_status", {"projectPath": str(project / "sub")})
        outside = await _call(client, "preflight_init", {"projectPath": str(other)})
        system = await _call(client, "preflight_status", {"projectPath": "/etc"})
        config = await _call(client, "preflight_init", {"configFile": "/etc/passwd"})
    assert inside["success"] is True, inside
    for refused, field in ((outside, "projectPath"), (system, "projectPath"), (config, "configFile")):
        assert refused["success"] is False and refused["error"]["code"] == "PROJECT_NOT_ALLOWED", refused
        assert refused["error"]["details"]["field"] == field
        assert "--allow-any-project" in refused["error"]["hint"]
    assert not (other / ".preflight").exists()
    async with _client(tmp_path, "--project", str(project), "--allow-any-project") as client:
        allowed = await _call(client, "preflight_init", {"projectPath": str(other)})
    assert allowed["success"] is True and allowed["data"]["projectName"] == "other"
