"""MCP Tasks with the 2026-07-28 extension `io.modelcontextprotocol/tasks`, in raw JSON-RPC on the shop.

A client that declares the extension gets `resultType: "task"` for `preflight_run`, polls
`tasks/get` to `completed` and finds the plain call's reply in it; `tasks/cancel` ends a task
`cancelled`; a server killed mid-task is replaced by one that answers `tasks/get` for it
(`failed`: the run was interrupted) and for the finished one. A client that does not declare it
gets the plain reply, exactly as before.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import BIN, preflight_json
from support.docker import force_clean
from support.raw_mcp import TASKS, RawMcp, modern_meta

pytestmark = [pytest.mark.docker]

REPO = Path(__file__).resolve().parents[2]
DECLARED = modern_meta(extensions={TASKS: {}})
PLAIN = modern_meta()
VOLATILE = {
    "runId",
    "timestamp",
    "duration",
    "startedAt",
    "finishedAt",
    "totalDuration",
    "traceId",
    "artifacts",
}


@pytest.fixture
def shop(tmp_path: Path) -> Any:
    """A copy of the shop example with a quick and a slow shell suite added."""
    root = tmp_path / "shop"
    shutil.copytree(REPO / "docs" / "examples" / "shop", root)
    config = yaml.safe_load((root / "e2e.yaml").read_text())
    config["tests"]["suites"] += [
        {"id": "quick", "runner": "shell", "command": ["sh", "-c", "echo quick ok"]},
        {"id": "slow", "runner": "shell", "command": ["sh", "-c", "sleep 60"], "timeout": "120s"},
    ]
    (root / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=180)
        force_clean(root)


def stable(value: Any) -> Any:
    """`value` without what differs between two runs (see test_mcp_tasks_ts.stable)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE | {"setup", "history", "_meta"}}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def call(server: RawMcp, arguments: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    reply = server.request(
        "tools/call", {"name": "preflight_run", "arguments": arguments, "_meta": meta}, timeout=400
    )
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def task(server: RawMcp, method: str, task_id: str, **extra: Any) -> dict[str, Any]:
    reply = server.request(method, {"taskId": task_id, "_meta": DECLARED, **extra})
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def until(server: RawMcp, task_id: str, done: Any, limit: float = 400) -> dict[str, Any]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = task(server, "tasks/get", task_id)
        if done(got):
            return got
        time.sleep(got["pollIntervalMs"] / 1000)
    raise AssertionError(f"task {task_id} never reached the state waited for")


def test_the_2026_tasks_extension_runs_cancels_and_outlives_its_server(shop: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    server = RawMcp(shop, log)
    try:
        discovered = server.request("server/discover", {"_meta": DECLARED})["result"]
        assert discovered["capabilities"]["extensions"][TASKS] == {}

        started = call(server, {"filter": "orders"}, DECLARED)
        assert started["resultType"] == "task" and started["status"] == "working"
        assert started["ttlMs"] > 0 and started["pollIntervalMs"] > 0
        task_id = started["taskId"]
        done = until(server, task_id, lambda t: t["status"] != "working")
        assert done["resultType"] == "complete" and done["status"] == "completed", done
        assert done["createdAt"] == started["createdAt"]
        result = done["result"]
        assert result["structuredContent"]["runId"] == task_id and result["isError"] is False
        assert result["structuredContent"]["data"]["status"] == "passed"

        plain = call(server, {"filter": "orders"}, PLAIN)  # no extension declared: today's reply
        assert "taskId" not in plain and plain["structuredContent"]["data"]["status"] == "passed"
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        assert stable(result["structuredContent"]) == stable(plain["structuredContent"])
        assert result["isError"] is plain["isError"] is False

        assert (
            server.request("tasks/list", {"_meta": DECLARED})["error"]["code"] == -32601
        )  # not in this generation
        assert task(server, "tasks/update", task_id, inputResponses={})["resultType"] == "complete"
        unknown = server.request("tasks/get", {"taskId": "01JDQ8ZK5X7N3V9G2H4M6P8R0T", "_meta": DECLARED})
        assert unknown["error"]["code"] == -32602

        slow = call(server, {"filter": "slow"}, DECLARED)
        until(server, slow["taskId"], lambda t: "suites" in (t.get("statusMessage") or ""))
        ack = task(server, "tasks/cancel", slow["taskId"])
        assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}
        cancelled = until(server, slow["taskId"], lambda t: t["status"] != "working", limit=60)
        assert cancelled["status"] == "cancelled" and "result" not in cancelled
        assert preflight_json(shop, "runs", "show", slow["taskId"])["data"]["status"] == "cancelled"

        doomed = call(server, {"filter": "slow"}, DECLARED)
        until(server, doomed["taskId"], lambda t: "suites" in (t.get("statusMessage") or ""))
        server.kill()  # mid-task, without any clean-up

        server = RawMcp(shop, log)
        again = task(server, "tasks/get", task_id)  # the finished task, from the new server
        assert again["status"] == "completed"
        assert {**again["result"]["structuredContent"], "timestamp": 0} == {
            **result["structuredContent"],
            "timestamp": 0,
        }
        died = task(server, "tasks/get", doomed["taskId"])
        assert died["status"] == "failed" and died["error"]["code"] == -32603
        assert died["error"]["data"] == {"runId": doomed["taskId"], "status": "interrupted"}
        assert "interrupted" in died["statusMessage"]
        assert task(server, "tasks/get", slow["taskId"])["status"] == "cancelled"
    finally:
        server.close()
