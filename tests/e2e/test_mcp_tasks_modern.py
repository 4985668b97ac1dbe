"""MCP Tasks with the 2026-07-28 extension `io.modelcontextprotocol/tasks`, in raw JSON-RPC on the shop.

A client that declares the extension gets `resultType: "task"` for `preflight_run`, polls
`tasks/get` to `completed` and finds the plain call's reply in it; `tasks/cancel` ends a task
`cancelled`; a server killed mid-task is replaced by one that answers `tasks/get` for it
(`failed`: the run was interrupted) and for the finished one. A client that does not declare it
gets the plain reply, exactly as before.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import preflight_json
from support.raw_mcp import TASKS, RawMcp, modern_meta
from support.task_runs import shop_with_shell_suites, stable

pytestmark = [pytest.mark.docker]

REPO = Path(__file__).resolve().parents[2]
DECLARED = modern_meta(extensions={TASKS: {}})
PLAIN = modern_meta()


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Path]:
    """A copy of the shop example with a quick and a slow shell suite added."""
    with shop_with_shell_suites(tmp_path) as root:
        yield root


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
