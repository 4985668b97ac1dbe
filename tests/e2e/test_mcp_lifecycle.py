"""An agent's whole session over real stdio: the shop example from init to clean, and a cancelled setup."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.docker import force_clean, labelled
from support.procs import children, server_pid

pytestmark = [pytest.mark.anyio, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")


class _StrayLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "Failed to parse" in record.getMessage():
            self.count += 1


def _server(project: Path, cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=LAUNCHER, args=["--project", str(project)], env=dict(os.environ), cwd=cwd
    )


async def test_an_agent_drives_the_shop_example_from_init_to_clean(tmp_path: Path) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(REPO / "docs" / "examples" / "shop", shop)
    stray = _StrayLines()
    logging.getLogger("mcp.client.stdio").addHandler(stray)
    progress: dict[str, list[tuple[float, str | None]]] = {"build": [], "setup": [], "run": []}

    def recorder(name: str) -> Any:
        async def record(value: float, total: float | None, message: str | None) -> None:
            progress[name].append((value, message))

        return record

    replies: dict[str, Any] = {}
    try:
        with anyio.fail_after(300), (tmp_path / "server.log").open("w") as errlog:
            async with Client(stdio_client(_server(shop, tmp_path), errlog=errlog)) as client:  # type: ignore[arg-type]
                tools = {t.name: t for t in (await client.list_tools()).tools}

                async def call(name: str, arguments: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
                    reply = await client.call_tool(f"preflight_{name}", arguments, **kwargs)
                    assert reply.structured_content is not None, name
                    jsonschema.Draft202012Validator(tools[f"preflight_{name}"].output_schema or {}).validate(
                        reply.structured_content
                    )
                    replies[name] = reply.structured_content
                    return reply.structured_content

                assert (await call("init", {}))["data"]["projectName"] == "shop"
                await call("build", {}, progress_callback=recorder("build"))
                await call("setup", {"timeout": "120s"}, progress_callback=recorder("setup"))
                await call("run", {}, progress_callback=recorder("run"))
                await call("status", {})
                await call("logs", {"container": "orders", "lines": 20})
                await call("mock_requests", {"mockName": "payments"})
                await call("clean", {})
    finally:
        logging.getLogger("mcp.client.stdio").removeHandler(stray)
        force_clean(shop)

    assert all(reply["success"] for name, reply in replies.items()), {
        n: r.get("error") for n, r in replies.items()
    }
    run = replies["run"]["data"]
    assert run["status"] == "passed" and run["totals"]["total"] == 11
    assert replies["run"]["runId"] == run["runId"]
    assert replies["status"]["data"]["state"] == "running"
    assert {s["name"]: s["status"] for s in replies["status"]["data"]["services"]}["orders"] == "running"
    assert any(
        "orders listening on 8000" in line for line in (x["text"] for x in replies["logs"]["data"]["lines"])
    )
    charges = [r for r in replies["mock_requests"]["data"]["mocks"][0]["requests"] if r["path"] == "/charges"]
    assert [r["status"] for r in charges][:2] == [503, 201]
    assert charges[0]["body"] == {"amount": 25, "sku": "book"}
    assert {c["action"] for c in replies["clean"]["data"]["containers"]} <= {"removed", "force_removed"}
    assert labelled(shop) == ([], [])
    # Progress: build log lines, setup steps and finished cases, with increasing values.
    for name in ("build", "setup", "run"):
        values = [value for value, _ in progress[name]]
        assert values, f"no progress notification during {name}"
        assert values == sorted(values) and len(set(values)) == len(values), name
    assert any("Step" in (message or "") for _, message in progress["build"])
    assert any("passed" in (message or "") for _, message in progress["run"])
    assert stray.count == 0


async def test_cancelling_a_setup_over_stdio_removes_everything_it_started(tmp_path: Path) -> None:
    project = tmp_path / "slow"
    project.mkdir()
    (project / "e2e.yaml").write_text(
        "project: {name: slow}\n"
        "services:\n"
        "  web:\n"
        "    build: {image: preflight-base/busybox}\n"
        "    container:\n"
        "      ports: ['0:8080']\n"
        "      command: [sh, -c, 'sleep 3600']\n"
        "      healthcheck: {path: /health}\n"
    )
    try:
        with anyio.fail_after(120), (tmp_path / "server.log").open("w") as errlog:
            async with Client(stdio_client(_server(project, tmp_path), errlog=errlog)) as client:  # type: ignore[arg-type]
                with anyio.move_on_after(3):
                    await client.call_tool("preflight_setup", {"timeout": "60s"})
                    pytest.fail("setup of a never-healthy service returned")
                deadline = time.monotonic() + 30
                while labelled(project) != ([], []):
                    assert time.monotonic() < deadline, f"left behind after cancel: {labelled(project)}"
                    await anyio.sleep(0.2)
                # No child process (docker run, a log follower, the exit watcher) outlives the call.
                server = server_pid(project)
                while children(server):
                    assert time.monotonic() < deadline, f"left running after cancel: {children(server)}"
                    await anyio.sleep(0.2)
                # The server is still there and answers.
                status = await client.call_tool("preflight_status", {})
                assert status.structured_content is not None and status.structured_content["success"] is True
    finally:
        force_clean(project)
    assert labelled(project) == ([], [])


BUSYBOX = (
    "project: {{name: {name}}}\n"
    "services:\n"
    "  web:\n"
    "    build: {{image: preflight-base/busybox}}\n"
    "    container:\n"
    "      ports: ['0:8080']\n"
    "      command: [sh, -c, 'mkdir -p /w && echo ok > /w/health && httpd -f -p 8080 -h /w']\n"
    "      healthcheck: {{path: /health}}\n"
)


@pytest.mark.parametrize("how", ["stdin-eof", "sigterm"])
async def test_the_server_removes_what_it_started_when_it_exits(tmp_path: Path, how: str) -> None:
    import signal
    import subprocess

    project = tmp_path / "exits"
    project.mkdir()
    (project / "e2e.yaml").write_text(BUSYBOX.format(name=f"exits-{how}"))
    request = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"preflight_setup","arguments":{}}}\n'
    )
    try:
        with subprocess.Popen(
            [LAUNCHER, "--project", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as server:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(request)
            server.stdin.flush()
            replies = [server.stdout.readline(), server.stdout.readline()]
            assert '"success":true' in replies[1], replies
            assert len(labelled(project)[0]) == 1
            if how == "stdin-eof":
                server.stdin.close()
            else:
                server.send_signal(signal.SIGTERM)
            assert server.wait(60) == 0
        assert labelled(project) == ([], []), "the server cleans what it started on exit"
    finally:
        force_clean(project)


async def test_keep_on_exit_leaves_the_environment_running(tmp_path: Path) -> None:
    import subprocess

    project = tmp_path / "kept"
    project.mkdir()
    (project / "e2e.yaml").write_text(BUSYBOX.format(name="kept"))
    request = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"preflight_setup","arguments":{}}}\n'
    )
    try:
        with subprocess.Popen(
            [LAUNCHER, "--project", str(project), "--keep-on-exit"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as server:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(request)
            server.stdin.flush()
            replies = [server.stdout.readline(), server.stdout.readline()]
            assert '"success":true' in replies[1], replies
            server.stdin.close()
            assert server.wait(60) == 0
        assert len(labelled(project)[0]) == 1, "--keep-on-exit leaves it for a later process"
    finally:
        force_clean(project)
