"""MCP Tasks (2025-11-25) driven by the official TypeScript requester on the shop example.

`@modelcontextprotocol/ext-tasks` over the TypeScript SDK's client on stdio (tests/node/
tasks-client.mjs) calls `preflight_run` as a task: it is polled to `completed` with the plain
call's reply; a cancelled task ends `cancelled` with the environment as `cancel_run` leaves it;
a server killed mid-task is replaced by a new one that still answers for both of its tasks.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import BIN, preflight_json
from support.docker import labelled
from support.node import require_node_tools
from support.task_runs import shop_with_shell_suites, stable

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# Fields that differ between two runs of the same thing (or two replies about one run).


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Path]:
    """A copy of the shop example with a quick and a slow shell suite added."""
    with shop_with_shell_suites(tmp_path) as root:
        yield root


def tasks_client(scenario: str, project: Path, suite: str) -> dict[str, Any]:
    node_dir = require_node_tools()
    done = subprocess.run(
        [
            "node",
            str(node_dir / "tasks-client.mjs"),
            scenario,
            str(BIN / "preflight-mcp"),
            str(project),
            suite,
        ],
        cwd=node_dir,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PREFLIGHT_WARM_PYTEST": "0"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["protocolVersion"] == "2025-11-25"
    assert report["capabilities"]["execution"] and report["capabilities"]["cancellation"]
    return report


def suite_processes(project: Path) -> list[int]:
    """The live `sleep 60` processes of the slow suite: those working in `project`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if argv[:2] == [b"sleep", b"60"] and cwd.is_relative_to(project):
            found.append(int(entry.name))
    return found


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths where `a` and `b` differ, each with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r:.120} != {b!r:.120}"]


def test_a_run_becomes_a_task_polled_to_completed_with_the_plain_calls_result(shop: Path) -> None:
    report = tasks_client("run", shop, "orders")
    assert report["kind"] == "task" and report["outcome"] == "completed"
    task_id = report["taskId"]
    assert [s["status"] for s in report["seen"]][-1] == "completed"
    assert all(s["taskId"] == task_id for s in report["seen"])
    assert report["last"]["ttl"] > 0 and report["last"]["pollInterval"] > 0
    result, plain = report["result"], report["plain"]
    assert result["structuredContent"]["runId"] == task_id  # the task id is the run id
    assert result["structuredContent"]["data"]["status"] == "passed"
    assert result["isError"] is False and plain["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert not differences(stable(result["structuredContent"]), stable(plain["structuredContent"]))
    # the run is in the store like any other: the CLI (another process) reads it
    shown = preflight_json(shop, "runs", "show", task_id)
    assert shown["data"]["status"] == "passed"


def test_a_cancelled_task_ends_cancelled_and_leaves_the_environment_as_cancel_run_does(shop: Path) -> None:
    report = tasks_client("cancel", shop, "slow")
    assert report["kind"] == "task" and report["outcome"] == "cancelled"
    assert any("suites" in (s["statusMessage"] or "") for s in report["seen"])
    assert report["snapshot"]["status"] == "cancelled"
    shown = preflight_json(shop, "runs", "show", report["taskId"])
    assert shown["data"]["status"] == "cancelled"
    # cancel_run stops the run, not the environment a run keeps: its services still run
    status = preflight_json(shop, "status")
    assert status["success"] and {s["name"] for s in status["data"]["services"]} >= {"inventory", "orders"}
    assert all(s["status"] == "running" for s in status["data"]["services"] if s["name"] != "seed")
    containers, _ = labelled(shop)
    assert containers  # still there, as a cancelled run leaves them
    assert suite_processes(shop) == []  # the cancelled suite's process is gone


def test_a_task_outlives_the_server_that_started_it(shop: Path) -> None:
    report = tasks_client("restart", shop, "slow")
    assert report["killedPid"] != report["secondPid"]
    # the finished task, read by the new server: the same reply (bar the envelope's timestamp)
    first, again = report["finishedResult"], report["finishedAgain"]
    assert first is not None and isinstance(again, dict)
    assert {**again["structuredContent"], "timestamp": 0} == {**first["structuredContent"], "timestamp": 0}
    # the task whose server died mid-run: the run is interrupted, the task failed, and says so
    after = report["afterRestart"]
    assert after["taskId"] == report["taskId"] and after["status"] == "failed"
    assert (
        "interrupted" in after["statusMessage"] and f"resume_run {report['taskId']}" in after["statusMessage"]
    )
    assert report["outcome"] == "failed" and "interrupted" in report["error"]
    listed = {t["taskId"]: t["status"] for t in report["listed"]}
    assert listed[report["taskId"]] == "failed" and listed[report["finishedId"]] == "completed"
    shown = preflight_json(shop, "runs", "show", report["taskId"])
    assert shown["data"]["status"] == "interrupted"
