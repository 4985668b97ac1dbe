"""Tasks (2025-11-25) through the official TypeScript requester, on projects without services:
`tasks/list` on a server started without `--project` lists the tasks this server made, whatever
their project; a server whose client closes its stdin mid-task records the run, and so the task,
as interrupted by the shutdown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from support.cli import BIN
from support.node import require_node_tools

CONFIG = 'project: {name: %s}\ntests:\n  suites:\n    - {id: quick, runner: shell, command: ["true"]}\n'


def tasks_client(scenario: str, *arguments: str) -> dict[str, Any]:
    node_dir = require_node_tools()
    done = subprocess.run(
        ["node", str(node_dir / "tasks-client.mjs"), scenario, str(BIN / "preflight-mcp"), *arguments],
        cwd=node_dir,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PREFLIGHT_WARM_PYTEST": "0"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["protocolVersion"] == "2025-11-25"
    return report


def project(root: Path, config: str = CONFIG) -> str:
    root.mkdir()
    (root / "e2e.yaml").write_text(config % root.name, encoding="utf-8")
    return str(root)


def test_a_server_without_a_default_project_lists_the_tasks_it_made(tmp_path: Path) -> None:
    projects = [project(tmp_path / "first"), project(tmp_path / "second")]
    report = tasks_client("list", *projects)
    assert report["outcome"] == "completed"
    first, second = report["taskIds"]
    listed = {task["taskId"]: task for task in report["listed"]}
    assert [task["taskId"] for task in report["listed"]] == [second, first]  # newest first
    assert listed[first]["status"] == listed[second]["status"] == "completed"


SLOW = (
    "project: {name: %s}\ntests:\n  suites:\n"
    '    - {id: slow, runner: shell, command: [sh, -c, "echo started; sleep 600"]}\n'
)


def test_a_client_closing_stdin_mid_task_leaves_the_run_and_task_interrupted_by_the_shutdown(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "slow", SLOW)
    report = tasks_client("shutdown", root, "slow")
    run = report["run"]
    assert run["status"] == "interrupted", run
    assert "shut down" in run["summary"] and "stdin" in run["summary"], run["summary"]
    task = report["afterShutdown"]
    assert task["status"] == "failed" and "shut down" in task["statusMessage"], task
    assert report["outcome"] == "failed" and "shut down" in report["error"], report
    assert "resume_run" not in task["statusMessage"].replace("preflight_resume_run", "")  # MCP words
    # The suite's process went with the run. (The reason recorded is the first one: stdin's close,
    # even when a loaded machine takes past the SDK's 2 s and the server gets its SIGTERM too.)
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _sleeping_in(p, Path(root))]


def _sleeping_in(proc: Path, root: Path) -> bool:
    try:
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        return argv[:2] == [b"sleep", b"600"] and Path(os.readlink(proc / "cwd")).is_relative_to(root)
    except OSError:
        return False
