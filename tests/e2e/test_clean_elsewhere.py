"""A clean from another process ends what this process serves: the MCP server's mocks stop
listening and `preflight up` stops waiting (real console scripts; a mocks-only project)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = Path(sys.executable).parent
CONFIG = """\
project: {name: elsewhere}
mocks:
  api:
    port: 0
    routes: [{path: /ping, response: {body: pong}}]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    return root


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _clean(project: Path) -> None:
    done = subprocess.run(
        [str(BIN / "preflight"), "clean", "-C", str(project)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.anyio
async def test_the_mcp_servers_mocks_stop_when_another_process_cleans(project: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(project)],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(60), (tmp_path / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            setup = await client.call_tool("preflight_setup", {})
            assert setup.structured_content is not None
            port = setup.structured_content["data"]["mocks"][0]["port"]
            assert _listens(port)
            await anyio.to_thread.run_sync(_clean, project)
            deadline = time.monotonic() + 10
            while _listens(port) and time.monotonic() < deadline:
                await anyio.sleep(0.2)
            assert not _listens(port), "the mock still listens after a clean from another process"
            status = await client.call_tool("preflight_status", {})
    assert status.structured_content is not None
    assert status.structured_content["data"]["mocks"][0]["status"] == "stopped"


def test_up_stops_waiting_when_another_process_cleans(project: Path) -> None:
    up = subprocess.Popen(
        [str(BIN / "preflight"), "up", "-C", str(project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert up.stdout is not None
        seen = ""
        while "Press Ctrl-C" not in seen:
            line = up.stdout.readline()
            assert line, seen
            seen += line
        _clean(project)
        assert up.wait(timeout=15) == 0
        rest = up.stdout.read()
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        if up.stdout is not None:
            up.stdout.close()
    assert "removed by another process" in rest
