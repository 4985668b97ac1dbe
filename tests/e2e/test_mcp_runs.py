"""Durable runs over real stdio: an agent starts runs on the shop-broken example with `wait: "0s"`,
polls them, has one cancelled from the CLI (another process) while it runs, resumes the failed
cases, diffs the two runs and checks the event log's hash chain through get_artifact."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN, preflight_json
from support.docker import force_clean
from support.results import check_whole_data

pytestmark = [pytest.mark.anyio, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """shop-broken (with the shop it builds from) plus a slow shell suite to cancel."""
    shutil.copytree(REPO / "docs" / "examples" / "shop", tmp_path / "shop")
    root = tmp_path / "shop-broken"
    shutil.copytree(REPO / "docs" / "examples" / "shop-broken", root)
    config = yaml.safe_load((root / "e2e.yaml").read_text())
    config["tests"]["suites"].append(
        {"id": "slow", "runner": "shell", "command": ["sh", "-c", "sleep 30"], "timeout": "60s"}
    )
    (root / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


async def test_an_agent_follows_cancels_resumes_and_diffs_runs(broken: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(broken), "--call-budget", "20"],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    try:
        with anyio.fail_after(400), (tmp_path / "server.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
                tools = {t.name: t for t in (await client.list_tools()).tools}

                async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                    reply = await client.call_tool(f"preflight_{name}", arguments)
                    envelope = reply.structured_content
                    assert envelope is not None, name
                    jsonschema.Draft202012Validator(tools[f"preflight_{name}"].output_schema or {}).validate(
                        envelope
                    )
                    check_whole_data(envelope, tools[f"preflight_{name}"].output_schema)
                    assert reply.is_error is (not envelope["success"]), name
                    return envelope

                async def finished(run_id: str) -> dict[str, Any]:
                    for _ in range(30):  # each poll waits at most the 20 s budget
                        data = (await call("get_run", {"runId": run_id, "wait": "20s"}))["data"]
                        if data["status"] not in ("queued", "running"):
                            return data
                    raise AssertionError(f"{run_id} never finished")

                # build and setup within the budget, or followed as runs when they outlast it
                for step, arguments in (("build", {}), ("setup", {"timeout": "120s"})):
                    reply = await call(step, arguments)
                    assert reply["success"], reply
                    if reply["data"].get("pending"):
                        assert (await finished(reply["data"]["runId"]))["status"] == "passed"

                started = await call("run", {"filter": "orders", "wait": "0s"})
                assert started["success"] and started["data"]["status"] in ("queued", "running")
                first = await finished(started["data"]["runId"])
                assert first["status"] == "failed"  # a failing verdict is data, not an error
                failed = sorted(
                    c["id"] for s in first["suites"] for c in s["cases"] if c["status"] == "failed"
                )
                passed = sorted(
                    c["id"] for s in first["suites"] for c in s["cases"] if c["status"] == "passed"
                )
                assert len(failed) == 2 and passed
                assert all(
                    c["history"]["recent"] == "F"
                    for s in first["suites"]
                    for c in s["cases"]
                    if c["status"] == "failed"
                )
                # the CLI (another process) reads the run the server owns
                shown = preflight_json(broken, "runs", "show", first["runId"])
                assert shown["data"]["runId"] == first["runId"] and shown["data"]["status"] == "failed"

                slow = await call("run", {"filter": "slow", "wait": "0s"})
                slow_id = slow["data"]["runId"]
                await anyio.sleep(1.5)
                cancelled = preflight_json(broken, "runs", "cancel", slow_id)
                assert cancelled["success"] and cancelled["data"]["cancelled"] is True
                assert (await call("get_run", {"runId": slow_id}))["data"]["status"] == "cancelled"

                resumed = await call("resume_run", {"runId": first["runId"], "wait": "20s"})
                data = (
                    resumed["data"]
                    if resumed["data"]["status"] not in ("queued", "running")
                    else await finished(resumed["data"]["runId"])
                )
                assert data["resumedFrom"] == first["runId"]
                ran = [c for s in data["suites"] for c in s["cases"] if c["status"] != "carried"]
                assert sorted(c["id"] for c in ran) == failed
                carried = [c for s in data["suites"] for c in s["cases"] if c["status"] == "carried"]
                assert sorted(c["id"] for c in carried) == passed  # the resume carries the passes
                assert {c["carried"]["runId"] for c in carried} == {first["runId"]}
                assert sorted(data["resume"]["stillFailing"]) == failed
                assert all(c["history"]["recent"] == "FF" for c in ran)

                diff = (await call("diff_runs", {"base": first["runId"], "head": data["runId"]}))["data"]
                assert sorted(c["id"] for c in diff["stillFailing"]) == failed
                assert diff["removed"] == [] and sorted(diff["notRerun"]) == passed
                assert diff["unchanged"] == len(passed)
                assert diff["newlyFailing"] == [] and diff["fixed"] == []

                events = (await call("get_artifact", {"runId": first["runId"], "name": "events.ndjson"}))[
                    "data"
                ]
                previous = "0" * 64
                for line in events["content"].splitlines():
                    event = json.loads(line)
                    body = {k: v for k, v in event.items() if k != "hash"}
                    digest = hashlib.sha256(
                        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
                    ).hexdigest()
                    assert event["prevHash"] == previous and event["hash"] == digest
                    previous = digest

                listed = (await call("list_runs", {"kind": "test"}))["data"]["runs"]
                assert [r["runId"] for r in listed][:3] == [data["runId"], slow_id, first["runId"]]
                bad = await call("get_run", {"runId": "../../etc/passwd"})
                assert bad["success"] is False and bad["error"]["code"] == "INVALID_INPUT"
                await call("clean", {})
    finally:
        force_clean(broken)
