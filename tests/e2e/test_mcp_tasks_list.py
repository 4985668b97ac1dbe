"""`tasks/list` (2025-11-25) on a server started without `--project`, through the official
TypeScript requester: the tasks this server made are listed, whatever their project."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from support.cli import BIN
from support.node import require_node_tools

CONFIG = 'project: {name: %s}\ntests:\n  suites:\n    - {id: quick, runner: shell, command: ["true"]}\n'


def test_a_server_without_a_default_project_lists_the_tasks_it_made(tmp_path: Path) -> None:
    node_dir = require_node_tools()
    projects = []
    for name in ("first", "second"):
        root = tmp_path / name
        root.mkdir()
        (root / "e2e.yaml").write_text(CONFIG % name, encoding="utf-8")
        projects.append(str(root))
    done = subprocess.run(
        ["node", str(node_dir / "tasks-client.mjs"), "list", str(BIN / "preflight-mcp"), *projects],
        cwd=node_dir,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PREFLIGHT_WARM_PYTEST": "0"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["protocolVersion"] == "2025-11-25" and report["outcome"] == "completed"
    first, second = report["taskIds"]
    listed = {task["taskId"]: task for task in report["listed"]}
    assert [task["taskId"] for task in report["listed"]] == [second, first]  # newest first
    assert listed[first]["status"] == listed[second]["status"] == "completed"
