"""The lifecycle on a real Docker daemon, with images from scripts/base-images."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from support.docker import labelled

from preflight_sdk import PreflightError, Project

pytestmark = pytest.mark.anyio

BUSYBOX_HTTP = """
project: {{name: {name}}}
services:
  web:
    build: {{image: preflight-base/busybox}}
    container:
      ports: ["{port}:8080"]
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/health && httpd -f -p 8080 -h /www"]
      healthcheck: {{path: /health}}
"""


def _get(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return json.load(reply)  # type: ignore[no-any-return]


async def test_two_services_built_set_up_and_talking_by_network_alias(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir("two-services")
    async with Project.open(root) as project:
        built = await project.build()
        assert [s.status for s in built.services] == ["success", "success"]
        result = await project.setup()
        by_name = {s.name: s for s in result.services}
        assert all(s.status == "healthy" for s in result.services)
        assert by_name["backend"].readiness.probe == "http"
        reply = _get(f"{by_name['frontend'].url}/proxy")
        assert reply == {"fromBackend": {"greeting": "hello"}}
        status = await project.status()
        assert status.state == "running"
        assert all(p.accessible for s in status.services for p in s.ports)
        assert {s.health for s in status.services} == {"healthy"}
        logs = await project.logs("backend")
        assert "backend listening on 8000" in [line.text for line in logs.lines]
        containers, networks = labelled(root)
        assert len(containers) == 2 and len(networks) == 1
    # leaving the `async with` cleaned everything this object started
    assert labelled(root) == ([], [])


async def test_a_service_that_never_becomes_healthy_is_removed_with_its_logs(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(
        config="""
        project: {name: never-healthy}
        services:
          api:
            build: {image: preflight-base/busybox}
            container:
              ports: ["0:8080"]
              command: ["sh", "-c", "echo 'listening on 9090 (wrong port)'; mkdir -p /w; httpd -f -p 9090 -h /w"]
              healthcheck: {path: /health}
    """
    )
    project = Project.open(root)
    began = time.monotonic()
    with pytest.raises(PreflightError) as caught:
        await project.setup(timeout="1500ms")
    assert 1.4 < time.monotonic() - began < 8
    error = caught.value
    assert error.code == "HEALTH_CHECK_TIMEOUT"
    assert error.details is not None
    assert "listening on 9090 (wrong port)" in error.details["logTail"]
    assert error.details["readiness"]["ready"] is False
    assert labelled(root) == ([], [])


async def test_a_host_port_already_taken_is_a_port_conflict_naming_the_port(
    project_dir: Callable[..., Path],
) -> None:
    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        root = project_dir(config=BUSYBOX_HTTP.format(name="conflict", port=port))
        with pytest.raises(PreflightError) as caught:
            await Project.open(root).setup()
        assert caught.value.code == "PORT_CONFLICT"
        assert caught.value.details is not None and caught.value.details["port"] == port
        assert str(port) in caught.value.message
        assert labelled(root) == ([], [])
    finally:
        holder.close()


async def test_a_dockerfile_that_fails_to_build_reports_the_last_lines(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(
        config="""
        project: {name: broken-build}
        services:
          api:
            build: {image: "pf-test/broken:latest", dockerfile: Dockerfile}
        """,
        files={"Dockerfile": "FROM preflight-base/busybox\nRUN echo compiling && exit 7\n"},
    )
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).build()
    error = caught.value
    assert error.code == "BUILD_FAILED"
    assert error.details is not None
    tail = error.details["services"][0]["logTail"]
    assert any("compiling" in line for line in tail)
    assert len(tail) <= 30


async def test_a_missing_dockerfile_is_reported_with_the_paths_tried(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(
        config="""
        project: {name: no-dockerfile}
        services:
          api:
            build: {image: "pf-test/none:latest", dockerfile: docker/Dockerfile.api}
    """
    )
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).build()
    assert caught.value.code == "DOCKERFILE_NOT_FOUND"
    assert caught.value.details is not None
    assert str(root / "docker" / "Dockerfile.api") in caught.value.details["tried"]


async def test_two_projects_set_up_at_once_do_not_collide(project_dir: Callable[..., Path]) -> None:
    # Same project name, two checkouts: names, networks and labels must keep them apart.
    first = project_dir(config=BUSYBOX_HTTP.format(name="twin", port=0), name="a")
    second = project_dir(config=BUSYBOX_HTTP.format(name="twin", port=0), name="b")
    results = {}

    async def up(root: Path) -> None:
        results[root] = await Project.open(root).setup()

    async with anyio.create_task_group() as tg:
        tg.start_soon(up, first)
        tg.start_soon(up, second)
    assert results[first].network.name != results[second].network.name
    assert results[first].services[0].url != results[second].services[0].url
    assert len(labelled(first)[0]) == 1 and len(labelled(second)[0]) == 1
    cleaned = await Project.open(first).clean()
    assert [c.action for c in cleaned.containers] == ["force_removed"]
    assert labelled(first) == ([], []) and len(labelled(second)[0]) == 1
    await Project.open(second).clean()


SETUP_SCRIPT = """
import anyio, signal, sys
from preflight_sdk import Project
# Ctrl-C as at a terminal: a shell that starts the suite in the background without job control
# (`scripts/test &` in a script) ignores SIGINT, and a child inherits that; Python then keeps it.
signal.signal(signal.SIGINT, signal.default_int_handler)
async def main():
    await Project.open(sys.argv[1]).setup(timeout=sys.argv[2])
    print("READY", flush=True)
    await anyio.sleep(3600)
anyio.run(main)
"""


def _spawn_setup(root: Path, timeout: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SETUP_SCRIPT, str(root), timeout],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_containers(root: Path, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(labelled(root)[0]) < count:
        assert time.monotonic() < deadline, "setup never started its containers"
        time.sleep(0.05)


async def test_clean_from_a_second_process_after_sigkill_leaves_nothing(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(config=BUSYBOX_HTTP.format(name="killed", port=0))
    with _spawn_setup(root, "30s") as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "READY"
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    assert len(labelled(root)[0]) == 1, "SIGKILL leaves the container running"
    cleaned = await Project.open(root).clean()
    assert [c.action for c in cleaned.containers] == ["force_removed"]
    assert [n.action for n in cleaned.networks] == ["removed"]
    assert labelled(root) == ([], [])


async def test_after_a_crash_setup_reuses_a_live_environment_or_removes_leftovers(
    project_dir: Callable[..., Path],
) -> None:
    port = _free_port()
    root = project_dir(config=BUSYBOX_HTTP.format(name="crashed", port=port))
    with _spawn_setup(root, "30s") as child:
        assert child.stdout is not None and child.stdout.readline().strip() == "READY"
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    (left,) = labelled(root)[0]
    # The state file still says "running" and the container is alive: setup returns it.
    reused = await Project.open(root).setup()
    assert reused.services[0].status == "running"
    assert reused.services[0].container_id.startswith(left)
    # Without the state file (a crash before it was written), the leftover holds the fixed
    # host port and the container name: a new setup removes it first instead of failing.
    (root / ".preflight" / "state.json").unlink()
    fresh = await Project.open(root).setup()
    assert fresh.services[0].status == "healthy"
    assert fresh.services[0].ports[0].host == port
    assert not fresh.services[0].container_id.startswith(left)
    assert len(labelled(root)[0]) == 1
    await Project.open(root).clean()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_during_setup_leaves_nothing_behind(
    project_dir: Callable[..., Path], sig: signal.Signals
) -> None:
    root = project_dir(
        config="""
        project: {name: interrupted}
        services:
          slow:
            build: {image: preflight-base/busybox}
            container:
              ports: ["0:8080"]
              command: ["sh", "-c", "sleep 3600"]
              healthcheck: {path: /health}
    """
    )
    with _spawn_setup(root, "60s") as child:
        _wait_for_containers(root, 1)
        child.send_signal(sig)
        _, stderr = child.communicate(timeout=30)
    assert child.returncode != 0
    assert labelled(root) == ([], []), stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_scripts_exist_for_a_fresh_machine() -> None:
    repo = Path(__file__).resolve().parents[2]
    for script in ("ensure-docker", "base-images", "test", "demo"):
        assert os.access(repo / "scripts" / script, os.X_OK), script


async def test_followed_logs_keep_each_line_s_stream_and_order(project_dir: Callable[..., Path]) -> None:
    root = project_dir(
        config="""
        project: {name: chatty}
        services:
          talker:
            build: {image: preflight-base/busybox}
            container:
              command: ["sh", "-c", "echo ready; i=0; while true; do i=$((i+1)); echo out $i; echo err $i >&2; sleep 0.05; done"]
    """
    )
    async with Project.open(root) as project:
        await project.setup()
        seen: list[tuple[str, str]] = []
        with anyio.fail_after(20):
            async with contextlib.aclosing(project.follow_logs("talker")) as lines:
                async for line in lines:
                    seen.append((line.stream, line.text))
                    if ("stderr", "err 5") in seen and ("stdout", "out 5") in seen:
                        break
        assert ("stdout", "ready") in seen
        assert all(stream == ("stderr" if text.startswith("err") else "stdout") for stream, text in seen)
        outs = [text for stream, text in seen if stream == "stdout" and text.startswith("out")]
        assert outs == [f"out {i}" for i in range(1, len(outs) + 1)], "in order, none lost"

        followed = await project.logs("talker", lines=1, follow_for="1s")
        streams = {entry.stream for entry in followed.lines}
        assert streams == {"stdout", "stderr"}
        assert len(followed.lines) > 10, "a second of new lines was collected"
        for stream in ("stdout", "stderr"):
            stamps = [entry.timestamp for entry in followed.lines if entry.stream == stream]
            assert stamps == sorted(stamps), stream
