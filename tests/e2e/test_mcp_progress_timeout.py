"""A host with a 10 s timeout that resets on progress gets the verdict of a 40 s run.

The TypeScript SDK 1.x client (tests/node/progress-client.mjs) calls `preflight_run` on a project
whose only suite is quiet for 40 seconds, with `timeout: 10000` and `resetTimeoutOnProgress`.
preflight-mcp sends a progress notification at least every 5 s while the work goes on, so the
client never times out (it would send `notifications/cancelled` and the run would be cancelled).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from support.cli import BIN, preflight_json
from support.node import require_node_tools

REPO = Path(__file__).resolve().parents[2]


def test_a_ten_second_timeout_reset_on_progress_completes_a_forty_second_run(tmp_path: Path) -> None:
    node_dir = require_node_tools()
    project = tmp_path / "slow-shell"
    shutil.copytree(REPO / "tests" / "fixtures" / "projects" / "slow-shell", project)
    done = subprocess.run(
        [
            "node",
            str(node_dir / "progress-client.mjs"),
            str(BIN / "preflight-mcp"),
            str(project),
            "preflight_run",
        ],
        cwd=node_dir,
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in report, report
    assert report["server"] == "preflight"
    envelope = report["result"]["structuredContent"]
    assert envelope["success"] and envelope["data"]["status"] == "passed"  # the verdict, not a runId
    assert report["elapsedMs"] >= 40_000
    assert report["longestGapMs"] < 10_000 and report["progress"] >= 8
    shown = preflight_json(project, "runs", "show", envelope["runId"])
    assert shown["data"]["status"] == "passed"  # never cancelled
