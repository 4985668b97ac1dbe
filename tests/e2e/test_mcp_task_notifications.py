"""Task status pushed by a spawned `preflight-mcp`, in raw JSON-RPC, on a project without services.

A 2026-07-28 client that opens `subscriptions/listen` naming its task gets the ack, then
`notifications/tasks` up to `completed` with the same result `tasks/get` gives; a task nobody
listens to sends nothing. A 2025-11-25 session that asked for a task gets
`notifications/tasks/status` when it completes; a plain call gets no task notification.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import BIN
from support.raw_mcp import TASKS, RawMcp, modern_meta

DECLARED = modern_meta(extensions={TASKS: {}})
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
PROJECT = """\
version: "1"
project: {name: notify}
tests:
  suites:
    - id: pause
      runner: shell
      command: ["sh", "-c", "sleep 2; echo paused"]
      timeout: 60s
      expect: {exitCode: 0, stdout: "paused"}
"""


@pytest.fixture
def project(tmp_path: Path) -> Any:
    """A project whose one shell suite takes about two seconds."""
    root = tmp_path / "notify"
    root.mkdir()
    (root / "e2e.yaml").write_text(PROJECT)
    try:
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=120)


def task_notifications(messages: list[dict[str, Any]], task_id: str | None = None) -> list[dict[str, Any]]:
    """The task notifications of either generation among `messages` (about `task_id`, when given)."""
    return [
        message
        for message in messages
        if message.get("method") in ("notifications/tasks", "notifications/tasks/status")
        and (task_id is None or message["params"]["taskId"] == task_id)
    ]


def timeless(result: dict[str, Any]) -> dict[str, Any]:
    """A tool reply without its envelope's timestamp (the time it was written out)."""
    texts = [json.loads(item["text"]) for item in result["content"]]
    return {
        "isError": result["isError"],
        "structuredContent": {**result["structuredContent"], "timestamp": 0},
        "content": [{**text, "timestamp": 0} for text in texts],
    }


def wait_for(server: RawMcp, found: Any, limit: float = 120) -> list[dict[str, Any]]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        messages = server.drain(0.5)
        if found(messages):
            return messages
    raise AssertionError(f"never came: {server.notifications}")


def run_task(server: RawMcp) -> dict[str, Any]:
    reply = server.request("tools/call", {"name": "preflight_run", "arguments": {}, "_meta": DECLARED})
    started: dict[str, Any] = reply["result"]
    assert started["resultType"] == "task" and started["status"] == "working", started
    return started


def test_a_2026_listener_gets_its_task_to_completed_and_others_get_nothing(
    project: Path, tmp_path: Path
) -> None:
    server = RawMcp(project, tmp_path / "server.log")
    try:
        started = run_task(server)
        task_id = started["taskId"]
        listen = server.send(
            "subscriptions/listen",
            {
                "notifications": {"taskIds": [task_id], "toolsListChanged": True, "promptsListChanged": True},
                "_meta": DECLARED,
            },
        )
        messages = wait_for(
            server,
            lambda got: any(n["params"]["status"] != "working" for n in task_notifications(got, task_id)),
        )
        ack = next(m for m in messages if m.get("method") == "notifications/subscriptions/acknowledged")
        assert ack["params"]["notifications"] == {"taskIds": [task_id], "toolsListChanged": True}
        assert ack["params"]["_meta"][SUBSCRIPTION_ID] == listen
        pushed = task_notifications(messages, task_id)
        assert messages.index(ack) < messages.index(pushed[0])  # the ack is the stream's first frame
        assert all(n["params"]["_meta"][SUBSCRIPTION_ID] == listen for n in pushed)
        assert all(n["method"] == "notifications/tasks" for n in pushed)
        last = pushed[-1]["params"]
        assert last["status"] == "completed" and [n["params"]["status"] for n in pushed[:-1]] == [
            "working"
        ] * (len(pushed) - 1)
        got = server.request("tasks/get", {"taskId": task_id, "_meta": DECLARED})["result"]
        assert timeless(last["result"]) == timeless(got["result"])
        assert last["result"]["structuredContent"]["data"]["status"] == "passed"
        assert {key: last[key] for key in ("taskId", "createdAt", "ttlMs", "pollIntervalMs")} == {
            key: got[key] for key in ("taskId", "createdAt", "ttlMs", "pollIntervalMs")
        }

        unheard = run_task(server)  # a task nobody listens to
        deadline = time.monotonic() + 120
        while (
            server.request("tasks/get", {"taskId": unheard["taskId"], "_meta": DECLARED})["result"]["status"]
            == "working"
        ):
            assert time.monotonic() < deadline
            time.sleep(0.5)
        assert task_notifications(server.drain(2.5), unheard["taskId"]) == []
    finally:
        server.close()


def test_a_2025_session_gets_task_status_when_its_task_completes(project: Path, tmp_path: Path) -> None:
    server = RawMcp(project, tmp_path / "server.log")
    try:
        hello = server.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {"requests": {}}},
                "clientInfo": {"name": "raw-tests", "version": "1.0.0"},
            },
        )
        assert hello["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
        server.notify("notifications/initialized", {})

        plain = server.request("tools/call", {"name": "preflight_run", "arguments": {"wait": "60s"}})
        assert plain["result"]["structuredContent"]["data"]["status"] == "passed"
        assert task_notifications(server.drain(1.5)) == []  # no task asked for: nothing new

        reply = server.request(
            "tools/call", {"name": "preflight_run", "arguments": {}, "task": {"ttl": 60_000}}
        )
        task_id = reply["result"]["task"]["taskId"]
        messages = wait_for(
            server, lambda got: any(n["params"]["status"] == "completed" for n in task_notifications(got))
        )
        pushed = task_notifications(messages)
        assert {n["method"] for n in pushed} == {"notifications/tasks/status"}
        assert {n["params"]["taskId"] for n in pushed} == {task_id}
        completed = pushed[-1]["params"]
        assert completed["status"] == "completed" and completed["ttl"] > 0
        got = server.request("tasks/get", {"taskId": task_id})["result"]
        assert got["status"] == "completed" and got["lastUpdatedAt"] == completed["lastUpdatedAt"]
    finally:
        server.close()
