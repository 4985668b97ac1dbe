"""Malformed JSON-RPC written as raw bytes to a spawned `preflight-mcp`: every line gets an answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def _line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _spawn(project: Path, *, stderr: int) -> subprocess.Popen[bytes]:
    """`preflight-mcp --project project`, spoken to over pipes."""
    server = subprocess.Popen(
        [LAUNCHER, "--project", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(os.environ),
        cwd=project,
    )
    assert server.stdin is not None and server.stdout is not None
    return server


SURROGATE = (
    b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"preflight_status",'
    b'"arguments":{"projectPath":"\\ud800"}}}\n'
)
DEEP = (
    b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"preflight_status","arguments":{"x":'
    + b"[" * 5000
    + b"]" * 5000
    + b"}}}\n"
)


# Each line, and the error it must get: (code, id). The id is the request's when it can be read.
MALFORMED = [
    (b"{not json\n", (-32700, None)),
    (b"[]\n", (-32600, None)),
    (SURROGATE, (-32700, 11)),
    (DEEP, (-32700, 12)),
]


def test_each_malformed_line_gets_a_json_rpc_error_and_a_log_line(tmp_path: Path) -> None:
    raw = b"".join(line for line, _ in MALFORMED)
    ping = _line({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    notified = _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server = _spawn(tmp_path, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    replies: list[dict[str, object]] = []
    try:
        server.stdin.write(_line(INIT) + notified + raw + ping)
        server.stdin.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(r.get("id") == 99 for r in replies):
            line = server.stdout.readline()
            if not line:
                break
            replies.append(json.loads(line))
        server.stdin.close()
        server.wait(timeout=30)
        stderr = server.stderr.read() if server.stderr else b""
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    errors = [r for r in replies if "error" in r]
    assert [(e["error"]["code"], e["id"]) for e in errors] == [want for _, want in MALFORMED], replies  # type: ignore[index]
    assert any(r.get("id") == 99 and "result" in r for r in replies), "the server still answers after it"
    assert stderr.count(b"answered a malformed message") == len(MALFORMED)


def test_tools_list_is_one_ascii_line_the_same_for_every_request(tmp_path: Path) -> None:
    from preflight_sdk.faces.mcp.server import PreflightMcp

    (tmp_path / "e2e.yaml").write_text("project:\n  name: raw\n", encoding="utf-8")
    requests = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        _line({"jsonrpc": "2.0", "id": "second", "method": "tools/list"}),
        _line({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "x"}}),
    ]
    server = _spawn(tmp_path, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(_line(INIT) + _line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        server.stdin.write(b"".join(requests))
        server.stdin.flush()
        lines = [server.stdout.readline() for _ in range(4)][1:]
        server.stdin.close()
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
    first, second, refused = (json.loads(line) for line in lines)
    assert (first["id"], second["id"], refused["id"]) == (1, "second", 3)
    assert first["result"] == second["result"]
    assert lines[0].isascii() and lines[1].isascii()  # escaped: clients decode it as narrow text
    assert [tool["name"] for tool in first["result"]["tools"]] == list(
        PreflightMcp(default_project=".").tools
    )
    assert refused["error"]["code"] == -32602  # a cursor still reaches the handler, which refuses it
