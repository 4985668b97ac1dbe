"""The first tool call of a session does not pay for what the server can prepare while the host
connects: right after the handshake, `preflight-mcp` builds its tool specs and loads the Docker
and HTTP clients in the background (scripts/bench/mcp.py times the first call against a later one).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

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
