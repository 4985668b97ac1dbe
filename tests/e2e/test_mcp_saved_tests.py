"""Saved tests over real stdio: an agent keeps three tests on the shop example (one failing on purpose),
lists them by tag, runs one by id and reads it back, runs them as a saved suite, overwrites and
deletes, exports the suite and runs the file as an ordinary suite; every bad input gets its code.
Every reply is validated against the tool's outputSchema."""

from __future__ import annotations

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

pytestmark = [pytest.mark.anyio, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

HEALTH = {
    "request": {"path": "/health", "service": "orders"},
    "expect": {"status": 200, "body": {"status": "ok"}},
}
REFUND = {
    "request": {"method": "POST", "url": "{{mocks.payments.url}}/refunds", "json": {"charge": "ch_7"}},
    "expect": {"status": 201, "body": {"charge": "ch_7"}},
}
BROKEN = {  # fails on purpose: the orders API answers 200
    "request": {"path": "/health", "service": "orders"},
    "expect": {"status": 418},
}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(REPO / "docs" / "examples" / "shop", root)
    return root


async def test_an_agent_keeps_runs_and_exports_its_tests(shop: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(shop)], env=dict(os.environ), cwd=tmp_path
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
                    assert reply.is_error is (not envelope["success"]), name
                    assert json.loads(reply.content[0].text) == envelope  # type: ignore[union-attr]
                    return envelope

                async def refused(name: str, arguments: dict[str, Any], code: str) -> dict[str, Any]:
                    reply = await call(name, arguments)
                    assert reply["success"] is False and reply["error"]["code"] == code, reply
                    error: dict[str, Any] = reply["error"]
                    return error

                for name in ("get_test", "get_latest_run"):
                    annotations = tools[f"preflight_{name}"].annotations
                    assert annotations is not None and annotations.read_only_hint is True
                deleting = tools["preflight_delete_test"].annotations
                assert deleting is not None and (deleting.destructive_hint, deleting.idempotent_hint) == (
                    True,
                    True,
                )

                # a test naming a service needs the environment
                await call(
                    "save_test",
                    {"id": "health", "name": "orders is healthy", "test": HEALTH, "tags": ["smoke"]},
                )
                error = await refused("run_test", {"testId": "health"}, "NOT_RUNNING")
                assert "setup" in error["hint"]

                for step, arguments in (("build", {}), ("setup", {"timeout": "120s"})):
                    reply = await call(step, arguments)
                    assert reply["success"], reply
                    assert not reply["data"].get("pending"), "the shop builds and starts within the budget"

                await call(
                    "save_test",
                    {
                        "id": "refund",
                        "name": "a refund is created",
                        "test": REFUND,
                        "tags": ["smoke", "payments"],
                    },
                )
                await call(
                    "save_test",
                    {"id": "broken", "name": "teapot on purpose", "test": BROKEN, "tags": ["wip"]},
                )
                smoke = (await call("list_tests", {"tag": "smoke"}))["data"]["tests"]
                assert [t["id"] for t in smoke] == ["health", "refund"]

                # run one by id, read it back
                ran = await call("run_test", {"testId": "broken"})
                assert (
                    ran["success"] is True and ran["data"]["status"] == "failed"
                )  # a failing verdict is data
                case = ran["data"]["suites"][0]["cases"][0]
                failure = case["failure"]
                assert failure["request"]["url"].endswith("/health") and failure["response"]["status"] == 200
                assert any(a["expected"] == 418 and a["actual"] == 200 for a in failure["assertions"])
                assert failure["summary"] and case["history"]["recent"] == "F"
                latest = await call("get_latest_run", {"testId": "broken"})
                assert (
                    latest["data"]["runId"] == ran["data"]["runId"] and latest["data"]["status"] == "failed"
                )
                lines = {t["id"]: t for t in (await call("list_tests", {}))["data"]["tests"]}
                assert lines["broken"]["lastRunStatus"] == "failed" and "lastRunStatus" not in lines["health"]
                # another process sees the same store
                assert [t["id"] for t in preflight_json(shop, "list-tests")["data"]["tests"]] == [
                    "broken",
                    "health",
                    "refund",
                ]

                # the three as a saved suite, run like any suite, in their order
                await call(
                    "save_suite",
                    {"id": "smoke-saved", "name": "smoke", "testIds": ["refund", "broken", "health"]},
                )
                suite = await call("run_suite", {"suiteId": "smoke-saved"})
                cases = suite["data"]["suites"][0]["cases"]
                assert [c["name"] for c in cases] == [
                    "a refund is created",
                    "teapot on purpose",
                    "orders is healthy",
                ]
                assert [c["status"] for c in cases] == ["passed", "failed", "passed"]
                assert suite["data"]["totals"] == {"passed": 2, "failed": 1, "skipped": 0, "total": 3}

                # overwrite moves updatedAt, keeps createdAt
                before = (await call("get_test", {"id": "health"}))["data"]
                await anyio.sleep(0.01)
                after = await call(
                    "save_test",
                    {"id": "health", "name": "orders is healthy", "test": HEALTH, "overwrite": True},
                )
                assert after["data"]["createdAt"] == before["createdAt"]
                assert after["data"]["updatedAt"] > before["updatedAt"] and after["data"]["tags"] == []

                # delete one: its runs go with it
                deleted = await call("delete_test", {"id": "broken"})
                assert deleted["data"] == {"deleted": True, "runsDeleted": 1}
                assert (await call("list_runs", {"testId": "broken"}))["data"]["runs"] == []
                assert (await call("get_latest_run", {"testId": "broken"}))["data"] is None
                await refused("get_run", {"runId": ran["data"]["runId"]}, "RUN_NOT_FOUND")
                assert (await call("delete_test", {"id": "broken"}))["data"] == {"deleted": False}
                gone = await refused("run_suite", {"suiteId": "smoke-saved"}, "TEST_NOT_FOUND")
                assert gone["details"]["missing"] == ["broken"]

                # export the suite and run the file as an ordinary suite of e2e.yaml
                await call(
                    "save_suite",
                    {
                        "id": "smoke-saved",
                        "name": "smoke",
                        "testIds": ["refund", "health"],
                        "overwrite": True,
                    },
                )
                await refused(
                    "export_tests", {"path": "../outside.yaml", "suiteId": "smoke-saved"}, "INVALID_INPUT"
                )
                exported = (
                    await call("export_tests", {"path": "tests/smoke.yaml", "suiteId": "smoke-saved"})
                )["data"]
                assert exported["suiteEntry"]["file"] == "tests/smoke.yaml"
                assert yaml.safe_load(exported["suiteEntryYaml"]) == {
                    "tests": {"suites": [exported["suiteEntry"]]}
                }
                await call("delete_suite", {"id": "smoke-saved"})
                config = yaml.safe_load((shop / "e2e.yaml").read_text())
                config["tests"]["suites"].append(exported["suiteEntry"])
                (shop / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
                ordinary = (await call("run_suite", {"suiteId": "smoke-saved"}))["data"]
                assert ordinary["status"] == "passed" and ordinary["totals"]["total"] == 2

                # every bad input, with its code
                bad_test = await refused(
                    "save_test",
                    {"id": "x", "name": "x", "test": {"request": {"path": "/"}, "expekt": {}}},
                    "INVALID_INPUT",
                )
                assert {
                    "path": "$.test.expekt",
                    "message": "unknown key `expekt`",
                    "suggestion": "expect",
                } in bad_test["details"]["problems"]
                await refused("save_test", {"id": "Bad Id", "name": "x", "test": HEALTH}, "INVALID_INPUT")
                taken = await refused(
                    "save_test", {"id": "health", "name": "x", "test": HEALTH}, "INVALID_INPUT"
                )
                assert "already exists" in taken["message"]
                await refused("run_test", {}, "INVALID_INPUT")
                await refused("run_test", {"testId": "health", "test": HEALTH}, "INVALID_INPUT")
                unknown = await refused("run_test", {"testId": "helth"}, "TEST_NOT_FOUND")
                assert unknown["details"]["closest"] == {"helth": ["health"]}
                clash = await refused(
                    "save_suite", {"id": "orders", "name": "x", "testIds": ["health"]}, "INVALID_INPUT"
                )
                assert "orders" in clash["message"] and clash["details"]["clash"] == "orders"
                missing = await refused(
                    "save_suite", {"id": "s", "name": "x", "testIds": ["a", "health", "b"]}, "TEST_NOT_FOUND"
                )
                assert missing["details"]["missing"] == ["a", "b"]
                nothing = await call("get_test", {"id": "nothing-here"})
                assert nothing["success"] is True and "data" in nothing and nothing["data"] is None
                await call("clean", {})
    finally:
        force_clean(shop)
