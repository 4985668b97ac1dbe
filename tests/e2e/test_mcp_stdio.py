"""The real `preflight-mcp` console script over stdio, driven by the official MCP client and raw JSON-RPC."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.anyio

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose e2e.yaml declares no services (valid, needs no Docker for init)."""
    root = tmp_path / "demo"
    root.mkdir()
    (root / "e2e.yaml").write_text("project:\n  name: stdio-demo\n", encoding="utf-8")
    return root


class _StrayLines(logging.Handler):
    """Counts stdout lines the client could not parse as JSON-RPC."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "Failed to parse" in record.getMessage():
            self.count += 1


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_launcher_serves_init_with_valid_structured_content_and_a_clean_stdout(
    project: Path, tmp_path: Path, mode: str
) -> None:
    stray = _StrayLines()
    logging.getLogger("mcp.client.stdio").addHandler(stray)
    params = StdioServerParameters(
        command=LAUNCHER, args=["--log-level", "info"], env=dict(os.environ), cwd=tmp_path
    )
    errlog = tmp_path / "server.log"
    try:
        with anyio.fail_after(30), errlog.open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), mode=mode) as client:  # type: ignore[arg-type]
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert "preflight_init" in tools and "preflight_setup" in tools
                assert "projectPath" in tools["preflight_init"].input_schema["required"]
                replies = [
                    await client.call_tool("preflight_init", {"projectPath": str(project)}),
                    await client.call_tool("preflight_init", {"projectPath": "demo"}),  # relative to the cwd
                    await client.call_tool("preflight_init", {"projectPath": str(tmp_path / "missing")}),
                    await client.call_tool("preflight_init", {"projectPath": str(project), "bogus": 1}),
                ]
    finally:
        logging.getLogger("mcp.client.stdio").removeHandler(stray)
    for reply in replies:
        assert reply.structured_content is not None
        jsonschema.Draft202012Validator(tools["preflight_init"].output_schema or {}).validate(
            reply.structured_content
        )
    first, relative, missing, bogus = (r.structured_content or {} for r in replies)
    assert first["success"] is True and first["data"]["projectName"] == "stdio-demo"
    assert relative["data"]["sessionId"] == first["data"]["sessionId"]  # the same project object
    assert (missing["success"], missing["error"]["code"]) == (False, "CONFIG_NOT_FOUND")
    assert bogus["error"]["code"] == "INVALID_INPUT" and bogus["error"]["details"]["field"] == "bogus"
    assert stray.count == 0
    assert "stdin closed: shutting down" in errlog.read_text(encoding="utf-8")


async def _request(process: Any, lines: list[str], message: dict[str, Any]) -> dict[str, Any] | None:
    """Send one JSON-RPC message; for a request, read stdout lines until its response arrives."""
    await process.stdin.send((json.dumps(message) + "\n").encode())
    if "id" not in message:
        return None
    buffer = b""
    async for chunk in process.stdout:
        buffer += chunk
        *complete, rest = buffer.split(b"\n")
        buffer = rest
        for raw in complete:
            lines.append(raw.decode())
            decoded = json.loads(raw)
            if decoded.get("id") == message["id"]:
                return dict(decoded)
    raise AssertionError("the server closed stdout before answering")


async def _handshake(process: Any, lines: list[str]) -> dict[str, Any]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    answer = await _request(process, lines, init)
    assert answer is not None
    await _request(process, lines, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


async def test_every_stdout_line_is_a_protocol_message_until_exit_on_stdin_eof(project: Path) -> None:
    lines: list[str] = []
    with anyio.fail_after(30):
        async with await anyio.open_process(
            [LAUNCHER, "--project", str(project)], env=dict(os.environ)
        ) as process:
            answer = await _handshake(process, lines)
            assert answer["result"]["serverInfo"]["name"] == "preflight"
            listed = await _request(process, lines, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            assert listed is not None
            assert "projectPath" not in listed["result"]["tools"][0]["inputSchema"].get("required", [])
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "preflight_init"}}
            reply = await _request(process, lines, call)
            assert reply is not None and reply["result"]["structuredContent"]["success"] is True
            await process.stdin.aclose()
            rest = b"".join([chunk async for chunk in process.stdout])
            lines.extend(line.decode() for line in rest.splitlines() if line)
            assert await process.wait() == 0
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line


async def test_sigterm_shuts_the_server_down_promptly(project: Path) -> None:
    lines: list[str] = []
    with anyio.fail_after(30):
        async with await anyio.open_process(
            [LAUNCHER, "--log-level", "info"], env=dict(os.environ)
        ) as process:
            await _handshake(process, lines)
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(10):
                code = await process.wait()
            stderr = b"".join([chunk async for chunk in process.stderr]).decode()
    assert code == 0
    assert "SIGTERM received: shutting down" in stderr


async def test_the_module_entry_point_prints_its_version() -> None:
    done = await anyio.run_process(
        [sys.executable, "-m", "preflight_sdk.faces.mcp", "--version"], env=dict(os.environ)
    )
    assert done.stdout.decode().startswith("preflight-mcp, version ")


async def test_an_edited_e2e_yaml_is_seen_by_the_next_call_and_every_call_is_logged(project: Path) -> None:
    from preflight_sdk.store import RunStore

    params = StdioServerParameters(
        command=LAUNCHER, args=["--project", str(project)], env=dict(os.environ), cwd=project
    )
    with anyio.fail_after(30):
        async with Client(stdio_client(params)) as client:
            first = (await client.call_tool("preflight_init", {})).structured_content or {}
            again = (await client.call_tool("preflight_init", {})).structured_content or {}
            (project / "e2e.yaml").write_text("project:\n  name: renamed\n", encoding="utf-8")
            edited = (await client.call_tool("preflight_init", {})).structured_content or {}
    assert first["data"]["projectName"] == again["data"]["projectName"] == "stdio-demo"
    assert again["data"]["sessionId"] == first["data"]["sessionId"] and not again["data"].get("reloaded")
    assert edited["data"]["projectName"] == "renamed" and edited["data"]["reloaded"] is True
    assert edited["data"]["sessionId"] != first["data"]["sessionId"]
    # The server has exited: every call is in the operation log, none lost in its writer's queue.
    calls = RunStore(project, create=False).operations()
    assert [(c.operation, c.outcome) for c in calls] == [("init", "ok")] * 3
