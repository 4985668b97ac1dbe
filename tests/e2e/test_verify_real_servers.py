"""`preflight verify --call-readonly` at its defaults against the official reference MCP server
(`@modelcontextprotocol/server-everything`, installed by scripts/ensure-node-tools).

Its `trigger-long-running-operation` is read-only and closed-world, answers after 10 s and reports
progress every 2 s: the call must get its own limit, extended by progress, not the start-up one.
In CI (CI=true) a missing Node package fails the test; elsewhere it is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PREFLIGHT = str(Path(sys.executable).parent / "preflight")
NODE_TOOLS = Path(__file__).resolve().parents[1] / "node"
EVERYTHING = NODE_TOOLS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def _everything() -> list[str]:
    node = shutil.which("node")
    if node is None or not EVERYTHING.is_file():
        message = "the official everything server is not installed: run scripts/ensure-node-tools"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return [node, str(EVERYTHING), "stdio"]


def test_the_everything_server_passes_call_readonly_at_the_defaults(tmp_path: Path) -> None:
    command = " ".join(_everything())
    done = subprocess.run(
        [PREFLIGHT, "verify", "--command", command, "--call-readonly", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
        check=False,
    )

    envelope = json.loads(done.stdout)
    data = envelope["data"]
    findings = [*data["findings"], *(f for t in data["tools"] for f in t.get("findings", []))]
    assert data["status"] == "passed", findings
    assert done.returncode == 0
    calls = {c["tool"]: c for c in data["calls"]}
    long_running = calls["trigger-long-running-operation"]
    assert long_running["outcome"] == "answered"
    assert long_running["duration"] >= 10_000  # longer than the 10 s start-up limit
    # The coherent hints of its read-only tools (destructiveHint: false beside readOnlyHint: true)
    # earn no warning.
    assert not any(f["code"] == "ANNOTATIONS_INCOHERENT" for f in findings)
    # Tools that are not read-only are listed as skipped, never called.
    assert calls["toggle-simulated-logging"]["outcome"] == "skipped"
    assert "readOnlyHint" in calls["toggle-simulated-logging"]["reason"]
    assert calls["gzip-file-as-resource"]["outcome"] == "skipped"
