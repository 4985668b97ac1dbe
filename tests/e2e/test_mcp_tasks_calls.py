"""A tool that records no run (`verify`) as a task: kept in the project's `.preflight/tasks/`, so a
new server answers for it too, and a task whose server died reads as `failed`."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from support.raw_mcp import TASKS, RawMcp, modern_meta

REPO = Path(__file__).resolve().parents[2]
DECLARED = modern_meta(extensions={TASKS: {}})


def get(server: RawMcp, task_id: str) -> dict[str, Any]:
    reply = server.request("tasks/get", {"taskId": task_id, "_meta": DECLARED})
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def verify_task(server: RawMcp) -> str:
    arguments = {"selfCheck": True, "timeout": "60s"}
    reply = server.request("tools/call", {"name": "preflight_verify", "arguments": arguments, "_meta": DECLARED})
    assert reply["result"]["resultType"] == "task" and reply["result"]["status"] == "working", reply
    task_id: str = reply["result"]["taskId"]
    return task_id


def test_a_verify_task_is_answered_by_a_later_server_and_reads_failed_when_its_server_died(tmp_path: Path) -> None:
    project = tmp_path / "slow-shell"
    shutil.copytree(REPO / "tests" / "fixtures" / "projects" / "slow-shell", project)
    log = tmp_path / "server.log"
    server = RawMcp(project, log)
    try:
        finished = verify_task(server)
        assert (project / ".preflight" / "tasks" / f"{finished}.json").is_file()  # written before the answer
        deadline = time.monotonic() + 120
        while (view := get(server, finished))["status"] == "working" and time.monotonic() < deadline:
            time.sleep(1)
        assert view["status"] == "completed" and view["result"]["structuredContent"]["data"]["status"] == "passed"
        server.close()

        server = RawMcp(project, log)
        again = get(server, finished)
        assert again["status"] == "completed" and again["result"] == view["result"]
        doomed = verify_task(server)
        server.kill()

        server = RawMcp(project, log)
        died = get(server, doomed)
        assert died["status"] == "failed" and died["error"]["code"] == -32603
        assert "interrupted" in died["statusMessage"]
        unknown = server.request("tasks/get", {"taskId": "../../etc/passwd", "_meta": DECLARED})
        assert unknown["error"]["code"] == -32602
    finally:
        server.close()
