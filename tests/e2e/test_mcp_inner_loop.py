"""The inner loop an agent runs over real stdio: edit, `preflight_run`, read the verdict, again.

On a copy of the shop example, with the pytest suite kept warm: the first run builds and starts
everything; after an edit of orders/app.py the next rebuilds and replaces orders alone and runs
the pytest suite in the interpreter kept warm since, with the same verdict; a run with nothing
changed reuses everything; clean stops the warm interpreter.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.docker import force_clean
from support.procs import children, server_pid

pytestmark = [pytest.mark.anyio, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")


def _actions(reply: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {s["name"]: (s["action"], s["reason"]) for s in reply["data"]["setup"]["services"]}


def _cases(reply: dict[str, Any], suite: str) -> list[tuple[str, str]]:
    [found] = [s for s in reply["data"]["suites"] if s["id"] == suite]
    return [(c["name"], c["status"]) for c in found["cases"]]


def _warm_servers(pid: int) -> list[str]:
    return [line for line in children(pid) if "warm_pytest_server" in line]


async def test_edit_run_verdict_over_stdio_rebuilds_one_service_and_runs_pytest_warm(tmp_path: Path) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(REPO / "docs" / "examples" / "shop", shop, ignore=shutil.ignore_patterns(".preflight"))
    tag = f"preflight-test/loop-{uuid.uuid4().hex[:8]}-"
    config = shop / "e2e.yaml"
    config.write_text(config.read_text().replace("preflight-example/", tag))
    env = {**os.environ, "PREFLIGHT_WARM_PYTEST": "1"}
    params = StdioServerParameters(command=LAUNCHER, args=["--project", str(shop)], env=env, cwd=tmp_path)
    messages: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    try:
        with anyio.fail_after(240), (tmp_path / "server.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]

                async def run() -> dict[str, Any]:
                    reply = await client.call_tool("preflight_run", {}, progress_callback=progress)
                    assert reply.structured_content is not None
                    assert reply.structured_content["data"]["status"] == "passed", reply.structured_content
                    return reply.structured_content

                first = await run()
                assert {a for a, _ in _actions(first).values()} <= {"started", "rebuilt"}
                server = server_pid(shop)
                deadline = time.monotonic() + 90
                while not _warm_servers(server):  # started in the background after the kept run
                    assert time.monotonic() < deadline, "no warm pytest interpreter was started"
                    await anyio.sleep(0.2)
                await anyio.sleep(0.5)
                ready = time.monotonic() + 60
                while True:
                    with (shop / "orders" / "app.py").open("a") as source:
                        source.write("# edited\n")
                    messages.clear()
                    edited = await run()
                    if any("pytest ran warm" in m for m in messages) or time.monotonic() > ready:
                        break  # the interpreter was still warming up: the suite ran cold, try again
                assert any("suite contract: pytest ran warm" in m for m in messages), messages
                # The shop's services hold nothing a suite changes (`reset: none`): only orders,
                # edited, is rebuilt; the rest is reused as it is.
                assert {name: action for name, (action, _) in _actions(edited).items()} == {
                    "inventory": "reused",
                    "seed": "reused",
                    "orders": "rebuilt",
                }
                assert _actions(edited)["orders"] == ("rebuilt", "app.py changed")
                assert _cases(edited, "contract") == _cases(first, "contract")
                recorded = await client.call_tool("preflight_get_run", {"runId": edited["runId"]})
                assert recorded.structured_content is not None
                assert _actions(recorded.structured_content) == _actions(edited), "kept with the run"
                assert _cases(edited, "orders") == _cases(first, "orders")

                again = await run()  # nothing changed: every service is reused, nothing reset
                assert {a for a, _ in _actions(again).values()} == {"reused"}
                environment = again["data"]["setup"]["environment"]
                assert "reset" not in environment
                assert environment["runsServed"] == edited["data"]["setup"]["environment"]["runsServed"] + 1
                assert len(_warm_servers(server)) == 1

                cleaned = await client.call_tool("preflight_clean", {})
                assert cleaned.structured_content is not None and cleaned.structured_content["success"]
                deadline = time.monotonic() + 10
                while _warm_servers(server):
                    assert time.monotonic() < deadline, "clean left the warm interpreter running"
                    await anyio.sleep(0.1)
    finally:
        force_clean(shop)
        for name in ("inventory", "orders"):
            os.system(f"docker image rm -f {tag}{name}:latest >/dev/null 2>&1")
