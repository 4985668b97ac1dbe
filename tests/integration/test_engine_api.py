"""The Engine API lane (engine/api.py) on the real local daemon.

It must make exactly what the docker CLI makes (same container and network, every option of a
`ContainerSpec`), fail with the same codes, and, on this machine's socket, leave setup and clean
without a single docker process: that is what it is for.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import aclosing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.docker import force_clean, labelled

from preflight_sdk import PreflightError, Project
from preflight_sdk.config.port_specs import PortSpec
from preflight_sdk.engine.base import ContainerSpec, HealthSpec
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.engine.socket_lane import SocketLane

pytestmark = pytest.mark.anyio

OWNER = {"preflight.test": "engine-api"}
# Set per instance by the daemon (ids, times, paths, addresses); everything else must match.
_PER_INSTANCE = {
    "Id",
    "Created",
    "Name",
    "HostnamePath",
    "HostsPath",
    "LogPath",
    "ResolvConfPath",
    "GraphDriver",
}


@pytest.fixture
def tag() -> Iterator[str]:
    value = secrets.token_hex(3)
    yield value
    gone = [f"pf-api-{lane}-{value}" for lane in ("cli", "api")]
    subprocess.run(["docker", "rm", "-f", "-v", *gone], capture_output=True)
    subprocess.run(["docker", "network", "rm", *(f"{name}-net" for name in gone)], capture_output=True)
    subprocess.run(["docker", "volume", "rm", f"pf-api-vol-{value}"], capture_output=True)


def _engine(monkeypatch: pytest.MonkeyPatch, lane: str) -> DockerEngine:
    monkeypatch.setenv("PREFLIGHT_DOCKER_API", "1" if lane == "api" else "0")
    engine = DockerEngine()
    assert isinstance(engine.lane, SocketLane) == (lane == "api")
    return engine


def _spec(name: str, network: str, data: Path, volume: str) -> ContainerSpec:
    return ContainerSpec(
        name=name,
        image="preflight-base/busybox",
        network=network,
        aliases=["web", "www"],
        env={"A": "1", "B": "x=y"},
        ports=[
            PortSpec(container=8080),
            PortSpec(container=9090, host_ip="127.0.0.1"),
            PortSpec(container=53, protocol="udp"),
        ],
        volumes=["/scratch", f"{data}:/data:ro", f"{volume}:/named"],
        labels=OWNER,
        add_hosts=[("gateway", "host-gateway"), ("db", "10.1.2.3")],
        entrypoint="/bin/sh",
        command=["-c", "sleep 60"],
        working_dir="/tmp",
        user="1000:1000",
        init=True,
        read_only=True,
        health=HealthSpec(command="true", interval=0.5, timeout=2, retries=3, start_period=0),
    )


def _inspect(*args: str) -> dict[str, Any]:
    return dict(json.loads(subprocess.check_output(["docker", *args]))[0])


def _comparable(item: Any, short_id: str = "") -> Any:
    """`item` without what the daemon sets per instance; an empty list reads as null (the CLI sends [])."""
    if isinstance(item, dict):
        return {k: _comparable(v, short_id) for k, v in item.items() if k not in _PER_INSTANCE}
    if isinstance(item, list):
        return [_comparable(v, short_id) for v in item if v != short_id] or None
    return item


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where `a` and `b` differ, as `path: a != b` lines."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


async def test_a_container_made_through_the_api_is_the_one_docker_run_makes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tag: str
) -> None:
    made: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for lane in ("cli", "api"):
        engine = _engine(monkeypatch, lane)
        name = f"pf-api-{lane}-{tag}"
        network = await engine.create_network(f"{name}-net", OWNER)
        container_id = await engine.run(_spec(name, network.name, tmp_path, f"pf-api-vol-{tag}"))
        container = _inspect("container", "inspect", container_id)
        net = _inspect("network", "inspect", network.name)
        assert [c.id for c in await engine.list_containers(OWNER, detail=False)] == [container_id]
        assert [n.name for n in await engine.list_networks(OWNER)] == [network.name]
        assert [(o.ref, o.action) for o in await engine.remove_containers([container_id], force=True)] == [
            (container_id, "removed")
        ]
        assert [o.action for o in await engine.remove_networks([network.name])] == ["removed"]
        short = container_id[:12]
        config, host = container["Config"], container["HostConfig"]
        attached = container["NetworkSettings"]["Networks"][network.name]
        mounts = sorted(container["Mounts"], key=lambda m: str(m["Destination"]))
        for mount in mounts:
            if mount["Destination"] == "/scratch":  # an anonymous volume: a new name each time
                mount.pop("Name"), mount.pop("Source")
        made[lane] = (
            {
                # Env and binds: the CLI collects both in maps, so their order changes between runs.
                "config": _comparable(
                    {k: sorted(v) if k == "Env" else v for k, v in config.items() if k != "Hostname"}
                ),
                "host": _comparable(
                    {k: sorted(v) if k == "Binds" else v for k, v in host.items() if k != "NetworkMode"}
                ),
                "network mode": host["NetworkMode"] == network.name,
                "aliases": _comparable(attached["Aliases"], short),
                "mounts": mounts,
                "running": container["State"]["Running"],
            },
            {k: v for k, v in _comparable(net).items() if k not in ("Containers", "IPAM")},
        )
    assert _differences(made["cli"], made["api"]) == []
    # The spec really was applied (a lane that dropped an option on both sides would still agree).
    container, _ = made["api"]
    assert container["running"] and container["network mode"]
    assert container["aliases"] == ["web", "www"]
    assert container["config"]["Entrypoint"] == ["/bin/sh"] and container["config"]["User"] == "1000:1000"
    assert container["host"]["ExtraHosts"] == ["gateway:host-gateway", "db:10.1.2.3"]
    assert container["host"]["Init"] and container["host"]["ReadonlyRootfs"]
    assert container["config"]["Healthcheck"]["Interval"] == 500_000_000


async def test_the_api_lane_fails_with_the_cli_s_codes(monkeypatch: pytest.MonkeyPatch, tag: str) -> None:
    engine = _engine(monkeypatch, "api")
    name = f"pf-api-api-{tag}"
    network = await engine.create_network(f"{name}-net", OWNER)
    with pytest.raises(PreflightError) as missing:
        await engine.run(ContainerSpec(name=name, image=f"preflight-test/absent-{tag}", network=network.name))
    assert missing.value.code == "NOT_BUILT"
    assert (
        missing.value.details is not None and missing.value.details["image"] == f"preflight-test/absent-{tag}"
    )
    spec = ContainerSpec(
        name=name, image="preflight-base/busybox", network=network.name, labels=OWNER, command=["sleep", "60"]
    )
    container_id = await engine.run(spec)
    with pytest.raises(PreflightError) as taken:
        await engine.run(spec)
    assert taken.value.code == "DOCKER_ERROR" and "already in use" in taken.value.message
    with pytest.raises(PreflightError) as duplicate:
        await engine.create_network(network.name, OWNER)
    assert duplicate.value.code == "DOCKER_ERROR" and network.name in duplicate.value.message
    # A network still in use is not removed, and says why; a container already gone is not_found.
    [busy] = await engine.remove_networks([network.name])
    assert busy.action == "failed" and busy.error and "active endpoints" in busy.error
    await engine.remove_containers([container_id], force=True)
    assert [o.action for o in await engine.remove_containers([container_id], force=True)] == ["not_found"]
    assert await engine.inspect([container_id]) == []
    assert await engine.inspect_image(f"preflight-test/absent-{tag}") is None
    assert [o.action for o in await engine.remove_networks([network.name])] == ["removed"]


def _threads_reading_the_socket() -> list[str]:
    """The threads of this process blocked in a lasting Engine API response (a wait, events)."""
    return [
        thread.name
        for thread in threading.enumerate()
        if thread.ident is not None
        and any(
            "_lasting" in frame.f_code.co_name for frame in _stack(sys._current_frames().get(thread.ident))
        )
    ]


def _stack(frame: Any) -> list[Any]:
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


async def test_waits_and_exit_events_come_over_the_socket_and_end_when_cancelled(
    monkeypatch: pytest.MonkeyPatch, tag: str
) -> None:
    engine = _engine(monkeypatch, "api")
    name = f"pf-api-api-{tag}"
    network = await engine.create_network(f"{name}-net", OWNER)
    labels = {**OWNER, "preflight.case": tag}
    since = datetime.now(UTC)
    sleeper = await engine.run(
        ContainerSpec(
            name=name,
            image="preflight-base/busybox",
            network=network.name,
            labels=labels,
            command=["sleep", "300"],
        )
    )
    try:
        with anyio.move_on_after(0.5) as waited:
            await engine.wait_exit(sleeper)  # it sleeps for 300 s
        assert waited.cancelled_caught
        deadline = time.monotonic() + 5
        while _threads_reading_the_socket() and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        assert _threads_reading_the_socket() == [], "a cancelled wait must not leave its thread reading"

        async with aclosing(engine.watch_exits(labels, since=since)) as dying:
            async with anyio.create_task_group() as tg:

                async def stop_it() -> None:
                    await anyio.sleep(0.3)
                    subprocess.run(["docker", "kill", sleeper], capture_output=True, check=True)

                tg.start_soon(stop_it)
                with anyio.fail_after(20):
                    assert await dying.__anext__() == sleeper
        assert await engine.wait_exit(sleeper) == 137  # killed: 128 + SIGKILL
        deadline = time.monotonic() + 5
        while _threads_reading_the_socket() and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        assert _threads_reading_the_socket() == [], "a closed event stream must not leave its thread reading"
    finally:
        await engine.remove_containers([sleeper], force=True)
        await engine.remove_networks([network.name])


_SHIM = """#!/bin/sh
echo "$*" >> {log}
exec {docker} "$@"
"""


def _docker_shim(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Send every docker process started from now on through a shim that writes its arguments
    down; return the file they go to."""
    log = tmp_path / "docker-calls"
    shim = tmp_path / "bin" / "docker"
    shim.parent.mkdir()
    real = subprocess.check_output(["sh", "-c", "command -v docker"], text=True).strip()
    shim.write_text(_SHIM.format(log=log, docker=real))
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}:{os.environ['PATH']}")
    return log


async def test_setup_and_clean_on_the_local_socket_start_no_docker_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = _docker_shim(monkeypatch, tmp_path)
    root = tmp_path / "p"
    root.mkdir()
    (root / "e2e.yaml").write_text(
        """
project: {name: api-lane}
services:
  web:
    build: {image: preflight-base/busybox}
    container:
      ports: ["0:8080"]
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/health && httpd -f -p 8080 -h /www"]
      healthcheck: {path: /health}
"""
    )
    try:
        for lane in ("api", "cli"):
            monkeypatch.setenv("PREFLIGHT_DOCKER_API", "1" if lane == "api" else "0")
            async with Project.open(root) as project:
                setup = await project.setup(progress=False)
                assert [s.status for s in setup.services] == ["healthy"]
                assert (await project.status()).state == "running"
                await project.clean()
            calls = log.read_text().splitlines() if log.exists() else []
            log.unlink(missing_ok=True)
            assert labelled(root) == ([], [])
            if lane == "api":
                assert calls == []
            else:  # the shim sees the CLI lane: the test could tell the two apart
                assert any(c.startswith("run ") for c in calls) and any("network create" in c for c in calls)
    finally:
        force_clean(root)


async def test_the_daemon_s_facts_are_the_same_over_the_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight_sdk.engine import docker

    facts = {}
    for lane in ("cli", "api"):
        monkeypatch.setattr(docker, "_INFO_CACHE", {})
        info = await _engine(monkeypatch, lane).info()
        facts[lane] = (info.server_version, info.host_gateway, info.address, info.routable, info.endpoint)
    assert facts["api"] == facts["cli"]
    assert facts["api"][0] and facts["api"][1]  # a version, and the bridge's gateway for the mocks


# Each case once per lane; every field of the result but the duration must match.
_EXEC_CASES = {
    "both streams": ["sh", "-c", "echo out; echo err >&2; echo more; printf 'no newline'"],
    "non-zero exit": ["sh", "-c", "echo failing >&2; exit 7"],
    "not in the container": ["no-such-command"],
    # 12 MB of 1000-byte lines: more than each stream keeps (8 MiB).
    "large output": [
        "sh",
        "-c",
        "yes \"$(head -c 999 /dev/zero | tr '\\0' x)\" | head -c 12000000; echo end >&2",
    ],
}


def _container(name: str, *, running: bool = True) -> str:
    argv = ["docker", "run", "-d"] if running else ["docker", "create"]
    made = subprocess.run(
        [
            *argv,
            "--name",
            name,
            "--label",
            "preflight.test=engine-api",
            "preflight-base/busybox",
            "sleep",
            "300",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


async def test_exec_gives_the_same_result_on_both_lanes(monkeypatch: pytest.MonkeyPatch, tag: str) -> None:
    running = _container(f"pf-api-api-{tag}")
    stopped = _container(f"pf-api-cli-{tag}", running=False)
    results: dict[str, dict[str, Any]] = {}
    for lane in ("cli", "api"):
        engine = _engine(monkeypatch, lane)
        found: dict[str, Any] = {}
        for case, command in _EXEC_CASES.items():
            result = await engine.exec(running, command, timeout=30)
            found[case] = (result.exit_code, result.stdout, result.stderr, result.timed_out)
        for case, ref in (("missing container", f"pf-api-absent-{tag}"), ("stopped container", stopped)):
            with pytest.raises(PreflightError) as caught:
                await engine.exec(ref, ["true"], timeout=30)
            found[case] = (caught.value.code, caught.value.message, caught.value.retryable)
        started = time.monotonic()
        late = await engine.exec(running, ["sleep", "5"], timeout=0.5)
        found["timeout"] = (late.exit_code, late.stdout, late.stderr, late.timed_out, late.duration)
        assert time.monotonic() - started < 2, lane
        # Cancelled: the docker process is gone (CLI), or the socket is shut and nothing reads it.
        deadline = time.monotonic() + 2
        while _threads_reading_the_socket() and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        assert _threads_reading_the_socket() == [], "a timed-out exec must not leave its thread reading"
        results[lane] = found
    assert results["api"] == results["cli"]
    # The results say what happened (two lanes that both lost something would still agree).
    api = results["api"]
    assert api["both streams"] == (0, "out\nmore\nno newline", "err\n", False)
    assert api["non-zero exit"] == (7, "", "failing\n", False)
    # The daemon could not start the command: docker's own exit code (126; newer daemons say 127
    # for a command not found), and the runtime's words on stdout, as the CLI prints them.
    code, stdout, _, _ = api["not in the container"]
    assert code in (126, 127) and "no-such-command" in stdout and "executable file not found" in stdout
    code, stdout, stderr, _ = api["large output"]
    assert code == 0 and stderr == "end\n"
    head, marker, tail = stdout.partition("\n… [")
    assert len(head) == 4 * 1024 * 1024 and marker and tail.endswith("x" * 999 + "\n")
    assert f"[{12_000_000 - 8 * 1024 * 1024} bytes not kept]" in stdout
    assert (
        api["missing container"][0] == "DOCKER_ERROR" and "No such container" in api["missing container"][1]
    )
    assert api["stopped container"][0] == "DOCKER_ERROR" and "is not running" in api["stopped container"][1]
    assert api["timeout"] == (-1, "", "timed out after 0.5s", True, 0.5)


async def test_exec_on_the_local_socket_starts_no_docker_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tag: str
) -> None:
    running = _container(f"pf-api-api-{tag}")
    log = _docker_shim(monkeypatch, tmp_path)
    for lane in ("api", "cli"):
        result = await _engine(monkeypatch, lane).exec(running, ["echo", "hi"], timeout=30)
        assert (result.exit_code, result.stdout) == (0, "hi\n")
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        # The shim sees the CLI lane's `docker exec`: the test could tell the two apart.
        assert calls == [] if lane == "api" else any(c.startswith("exec ") for c in calls)
