"""A run sharded over two real Docker daemons: one copy of the environment on each, one run.

The project has four suites that call a slow endpoint of a built service and a mock, so each
engine builds the image, starts the service and its own mocks, runs its share, and removes its
copy. The project's own environment (a fixed host port) keeps running beside the shards.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.engines import SecondEngine
from support.slow_service import DOCKERFILE, serve_py

from preflight_sdk import Project

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PREFLIGHT = str(Path(sys.executable).parent / "preflight")
SUITES = ("alpha", "beta", "gamma", "delta")

CONFIG = """
project: {{name: sharded}}
services:
  web:
    build: {{image: "preflight-test/sharded-web:latest", dockerfile: Dockerfile, context: .}}
    container:
      ports: ["{port}:8000"]
      healthcheck: {{path: /health}}
mocks:
  pay:
    port: {mock_port}
    routes:
      - {{method: GET, path: /charge, response: {{status: 200, body: {{ok: true}}}}}}
tests:
  suites:
{suites}
"""
SUITE = """
name: {name}
cases:
  - name: slow call
    request: {{method: GET, path: /slow, service: web}}
    expect: {{status: 200}}
  - name: the mock answers
    request: {{method: GET, url: "{{{{mocks.pay.url}}}}/charge"}}
    expect: {{status: 200, body: {{ok: true}}}}
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def sharded(project_dir: Callable[..., Path]) -> Path:
    suites = "\n".join(f"    - {{id: {name}, file: {name}.yaml}}" for name in SUITES)
    files = {f"{name}.yaml": SUITE.format(name=name) for name in SUITES}
    config = CONFIG.format(port=_free_port(), mock_port=_free_port(), suites=suites)
    return project_dir(
        config=config, files={**files, "Dockerfile": DOCKERFILE, "serve.py": serve_py(0.8)}, name="sharded"
    )


def _containers(root: Path, shard: str, env: dict[str, str] | None = None) -> list[str]:
    """The containers (running or not) of shard `shard` of the checkout at `root` on one daemon."""
    done = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=preflight.root={root.resolve()}#shard:{shard}"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return done.stdout.split()


def _leftovers(root: Path, env: dict[str, str] | None = None) -> list[str]:
    """Every container and network of any shard of `root` on one daemon."""
    found: list[str] = []
    for kind, name in ((["ps", "-a"], "{{.Names}}"), (["network", "ls"], "{{.Name}}")):
        listing = subprocess.run(
            ["docker", *kind, "--format", name + " {{.Labels}}"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
        found += [line for line in listing.splitlines() if f"{root.resolve()}#shard:" in line]
    return found


def _seen_on_both(root: Path, second: SecondEngine, until: Callable[[], bool]) -> tuple[bool, bool]:
    """Poll both daemons for the shards' containers until both appeared or `until()` says stop."""
    local = remote = False
    deadline = time.monotonic() + 240
    while not (local and remote) and not until() and time.monotonic() < deadline:
        local = local or bool(_containers(root, "1"))
        remote = remote or bool(_containers(root, "2", second.docker_env()))
        time.sleep(0.2)
    return local, remote


async def test_a_cli_run_sharded_over_two_daemons_is_one_run_and_leaves_nothing(
    sharded: Path, second_engine: SecondEngine
) -> None:
    project = Project.open(sharded)
    await project.build()
    await project.setup()  # the project's own environment runs through all of it
    try:
        argv = [
            PREFLIGHT,
            "run",
            "-C",
            str(sharded),
            "--json",
            "--shard-on",
            f"local,{second_engine.unix_host}",
        ]
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        local, remote = await anyio.to_thread.run_sync(
            lambda: _seen_on_both(sharded, second_engine, lambda: child.poll() is not None)
        )
        out, err = await anyio.to_thread.run_sync(lambda: child.communicate(timeout=300))
        assert child.returncode == 0, err[-3000:]
        assert local and remote, "each engine must have run a copy of the environment"
        run = json.loads(out)["data"]

        assert run["status"] == "passed"
        assert run["totals"] == {"passed": 8, "failed": 0, "skipped": 0, "total": 8}
        engines = {case["id"]: case["engine"] for suite in run["suites"] for case in suite["cases"]}
        assert len(engines) == 8
        assert set(engines.values()) == {"local", second_engine.unix_host}
        by_shard = {shard["engine"]: shard for shard in run["shards"]}
        assert sorted(by_shard["local"]["suites"] + by_shard[second_engine.unix_host]["suites"]) == sorted(
            SUITES
        )
        # `cleaned` (true) and `warnings` (empty) are left out of the wire form when all went well.
        assert all(shard["status"] == "passed" and shard.get("cleaned", True) for shard in run["shards"])
        assert not any(shard.get("warnings") for shard in run["shards"])
        for suite in run["suites"]:
            assert suite["engine"] in by_shard and suite["id"] in by_shard[suite["engine"]]["suites"]

        # One run in the store, with one report, junit and event log naming both engines.
        again = await project.get_run(run["runId"])
        assert again.totals.total == 8 and {c.engine for s in again.suites for c in s.cases} == set(by_shard)
        events = [
            json.loads(line)
            for line in (sharded / ".preflight/runs" / run["runId"] / "events.ndjson")
            .read_text()
            .splitlines()
        ]
        assert {e["name"] for e in events if e["type"] == "SHARD_STARTED"} == set(by_shard)
        junit = (sharded / ".preflight/runs" / run["runId"] / "junit.xml").read_text()
        assert f'hostname="{second_engine.unix_host}"' in junit
        assert (await project.list_runs()).runs[0].run_id == run["runId"]

        assert _leftovers(sharded) == [] and _leftovers(sharded, second_engine.docker_env()) == []
        assert not list((sharded / ".preflight" / "shards").iterdir())
        status = await project.status()
        assert status.state == "running" and all(s.status == "running" for s in status.services)
    finally:
        await project.clean()


async def test_an_unreachable_engine_over_mcp_fails_its_suites_with_the_reason_and_the_rest_pass(
    sharded: Path, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "preflight-mcp"),
        args=["--project", str(sharded), "--call-budget", "120"],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(180), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            tool = next(t for t in (await client.list_tools()).tools if t.name == "preflight_run")
            assert tool.input_schema["properties"]["shards"]  # reflected from Project.run
            reply = await client.call_tool("preflight_run", {"shards": ["local", "unix:///nonexistent.sock"]})
            envelope = reply.structured_content
            assert envelope is not None and envelope["success"] is True and not reply.is_error
            jsonschema.Draft202012Validator(tool.output_schema or {}).validate(envelope)
            bad = await client.call_tool("preflight_run", {"shards": ["docker.example:2375"]})
            assert bad.is_error and bad.structured_content is not None
            assert bad.structured_content["error"]["code"] == "INVALID_INPUT"

    run = envelope["data"]
    assert run["status"] == "failed"
    shards = {shard["engine"]: shard for shard in run["shards"]}
    gone = shards["unix:///nonexistent.sock"]
    assert gone["status"] == "error" and gone["error"]["code"] == "DOCKER_ERROR"
    assert shards["local"]["status"] == "passed" and shards["local"]["suites"] and gone["suites"]
    for suite in run["suites"]:
        if suite["id"] in gone["suites"]:
            assert suite["status"] == "failed" and suite["cases"] == []
            assert suite["error"].startswith("[DOCKER_ERROR] engine unix:///nonexistent.sock: ")
            assert "(hint: " in suite["error"]
        else:
            assert suite["status"] == "passed" and {c["engine"] for c in suite["cases"]} == {"local"}
    assert run["totals"]["passed"] == 2 * len(shards["local"]["suites"]) and run["totals"]["failed"] == 0
    assert _leftovers(sharded) == []


async def test_cancelling_a_sharded_run_removes_every_copy_on_both_daemons(
    sharded: Path, second_engine: SecondEngine
) -> None:
    project = Project.open(sharded)
    started = await project.run(shards=["local", second_engine.unix_host], wait="0s")
    local, remote = await anyio.to_thread.run_sync(
        lambda: _seen_on_both(sharded, second_engine, lambda: False)
    )
    assert local and remote

    await project.cancel_run(started.run_id)
    with anyio.fail_after(120):
        run = await project.get_run(started.run_id, wait="110s")

    assert run.status == "cancelled"
    assert _leftovers(sharded) == [] and _leftovers(sharded, second_engine.docker_env()) == []
