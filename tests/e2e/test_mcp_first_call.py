"""The first tool call of a session does not pay for what the server can prepare while the host
connects: right after the handshake, `preflight-mcp` builds its tool specs and loads the Docker
and HTTP clients in the background, and a tools/list that comes at once (the Inspector CLI, the
SDK clients) is answered when that is done, so the call after it finds everything ready
(scripts/bench/mcp.py times the first call, with no pause and after one, against a later one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.e2e

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


def test_the_server_warms_up_after_the_handshake_before_any_call(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: warm}\n", encoding="utf-8")
    lines: list[str] = []
    with subprocess.Popen(
        [LAUNCHER, "--project", str(tmp_path), "--log-level", "debug"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        errors = server.stderr
        reader = threading.Thread(target=lambda: lines.extend(iter(errors.readline, "")), daemon=True)
        reader.start()
        try:
            server.stdin.write(json.dumps(INIT) + "\n")
            server.stdin.flush()
            answer = json.loads(server.stdout.readline())
            assert answer["id"] == 0 and "result" in answer
            # Nothing but the handshake: no tools/list, no call.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any("warmed up in" in line for line in lines):
                time.sleep(0.1)
        finally:
            server.stdin.close()
            server.wait(timeout=60)
            reader.join(10)
    assert any("warmed up in" in line for line in lines), lines[-10:]


@pytest.mark.anyio
async def test_a_list_right_after_the_handshake_is_answered_once_the_server_is_warm(tmp_path: Path) -> None:
    config = "project: {name: warm}\nservices:\n  api:\n    build: {image: preflight-base/busybox}\n"
    (tmp_path / "e2e.yaml").write_text(config, encoding="utf-8")
    params = StdioServerParameters(
        command=LAUNCHER, args=["--project", str(tmp_path), "--log-level", "debug"], env=dict(os.environ)
    )
    log = tmp_path / "server.log"
    with anyio.fail_after(120), log.open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            tools = await client.list_tools()  # at once, as the Inspector CLI does
            said = log.read_text(encoding="utf-8")
            status = await client.call_tool("preflight_status", {})  # the first call: it asks Docker
    assert len(tools.tools) > 20 and status.is_error is False, status
    # The list was answered after the warm-up ended: the call after it found specs, HTTP client,
    # engine and the config's types ready, and did not build or import them beside the warm-up.
    assert "warmed up in" in said, said[-2000:]
