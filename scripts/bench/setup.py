#!/usr/bin/env python3
"""Benchmark: set up and tear down N busybox services with an HTTP health check.

Compared in the same run, on the same machine and images:

  socket          the floor no tool can beat: a plain script speaking the Engine API on the
                  daemon's unix socket itself (create the network, then the containers one create
                  at a time, each started as soon as its create answers, the starts running at
                  once; GET /health on each published port every 10 ms; teardown: delete the
                  containers (force) and the network). Creating one at a time spreads the starts,
                  which the daemon gets through sooner than starts sent all at once (see
                  docs/performance-history.md)
  socket-at-once  the same script with every create sent at once, as testcontainers and
                  docker-compose do (no goal: it shows what the one-at-a-time order gains)
  floor           a plain script of docker commands: `docker network create`, every `docker run -d`
                  at once, the same polling; teardown `docker rm -f` + network rm
  preflight       Project.setup() / Project.clean()
  compose         Debian's docker-compose 1.29 (v1, which has no `up --wait`): `up -d` + the same
                  polling of /health every 10 ms; `down`
  preflight-compose  Project.setup() / Project.clean() on the very compose file the compose row
                  uses, alone in its directory (no e2e.yaml); its wget health check is probed
                  from the host
  testcontainers  testcontainers-python, containers started from threads, HttpWaitStrategy (10 ms)

Prints the median of each over the repetitions and its ratios to the socket floor and to
testcontainers, as a markdown table, and exits 1 when a goal is missed: preflight's setup at
most 1.1x the socket floor and at most testcontainers', its teardown at most testcontainers',
and preflight-compose's setup at most 0.7x compose's. One setup of one service varies by about
10% from one repetition to the next (0.28-0.34 s here): 15 repetitions by default, since two
medians of 9 of the very same script (socket and socket-at-once at one service) came out up to
10% apart.
Usage: scripts/bench/setup.py [--reps 15] [--sizes 1,5] [--skip compose,floor,socket-at-once]
Needs: scripts/ensure-docker, scripts/base-images; docker-compose (apt) and testcontainers (pip)
are installed on first use.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import functools
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import anyio

IMAGE = "preflight-base/busybox"
COMMAND = "mkdir -p /www && echo ok > /www/health && httpd -f -p 8080 -h /www"


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def poll_health(ports: list[int], interval: float = 0.01, deadline: float = 60.0) -> None:
    pending = set(ports)
    end = time.monotonic() + deadline
    while pending:
        for port in list(pending):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as reply:
                    if reply.status < 400:
                        pending.discard(port)
            except OSError:
                pass
        if pending:
            if time.monotonic() > end:
                raise RuntimeError(f"not healthy: {pending}")
            time.sleep(interval)


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], check=True, capture_output=True, text=True).stdout


# -- the variants: each returns (setup seconds, teardown seconds) ------------------------------


class _Unix(http.client.HTTPConnection):
    def __init__(self) -> None:
        super().__init__("localhost", timeout=60)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(
            os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock").removeprefix("unix://")
        )


def api(method: str, path: str, body: object = None) -> object:
    """One Engine API request on the daemon's socket (a connection each, as a plain script would)."""
    connection = _Unix()
    try:
        payload = None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        connection.request(method, path, body=payload, headers=headers)
        reply = connection.getresponse()
        data = reply.read()
        if reply.status >= 400:
            raise RuntimeError(f"{method} {path}: {reply.status} {data[:200]!r}")
        return json.loads(data) if data.strip() else None
    finally:
        connection.close()


def run_socket(n: int, *, one_create_at_a_time: bool = True) -> tuple[float, float]:
    ports = free_ports(n)
    net = f"bench-socket-{os.getpid()}"
    creating: contextlib.AbstractContextManager[object] = (
        threading.Lock() if one_create_at_a_time else contextlib.nullcontext()
    )

    def start(i: int) -> str:
        with creating:
            created = api(
                "POST",
                "/containers/create",
                {
                    "Image": IMAGE,
                    "Cmd": ["sh", "-c", COMMAND],
                    "ExposedPorts": {"8080/tcp": {}},
                    "HostConfig": {
                        "NetworkMode": net,
                        "PortBindings": {"8080/tcp": [{"HostPort": str(ports[i])}]},
                    },
                },
            )
        cid = str(created["Id"])  # type: ignore[index]
        api("POST", f"/containers/{cid}/start")
        return cid

    begin = time.perf_counter()
    api("POST", "/networks/create", {"Name": net})
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        ids = list(pool.map(start, range(n)))
    poll_health(ports)
    up = time.perf_counter() - begin
    begin = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        list(pool.map(lambda cid: api("DELETE", f"/containers/{cid}?force=1&v=1"), ids))
    api("DELETE", f"/networks/{net}")
    return up, time.perf_counter() - begin


def run_floor(n: int) -> tuple[float, float]:
    ports = free_ports(n)
    net = f"bench-floor-{os.getpid()}"
    begin = time.perf_counter()
    docker("network", "create", net)
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        ids = list(
            pool.map(
                lambda i: docker(
                    "run", "-d", "--network", net, "-p", f"{ports[i]}:8080", IMAGE, "sh", "-c", COMMAND
                ).strip(),
                range(n),
            )
        )
    poll_health(ports)
    up = time.perf_counter() - begin
    begin = time.perf_counter()
    docker("rm", "-f", *ids)
    docker("network", "rm", net)
    return up, time.perf_counter() - begin


def run_preflight(n: int) -> tuple[float, float]:
    ports = free_ports(n)
    root = Path(tempfile.mkdtemp(prefix="bench-pf-"))
    services = "".join(
        f"""
  s{i}:
    build: {{image: {IMAGE}}}
    container:
      ports: ["{ports[i]}:8080"]
      command: ["sh", "-c", "{COMMAND}"]
      healthcheck: {{path: /health}}"""
        for i in range(n)
    )
    (root / "e2e.yaml").write_text(f"project: {{name: bench}}\nservices:{services}\n")
    return time_project(root)


def time_project(root: Path) -> tuple[float, float]:
    """Time `Project.setup()` and then `Project.clean()` of the project at `root`; remove `root`."""
    from preflight_sdk import Project

    timings: list[float] = []

    async def main() -> None:
        project = Project.open(root)
        await project.init()
        begin = time.perf_counter()
        await project.setup(progress=False)
        timings.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        await project.clean()
        timings.append(time.perf_counter() - begin)

    anyio.run(main)
    shutil.rmtree(root, ignore_errors=True)
    return timings[0], timings[1]


COMPOSE_GOAL = 0.7


def write_compose(root: Path, ports: list[int]) -> Path:
    """The compose file both compose rows bring up: n web servers, each with an HTTP health check."""
    services = "".join(
        f"""
  s{i}:
    image: {IMAGE}
    command: ["sh", "-c", "{COMMAND}"]
    ports: ["{port}:8080"]
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "-", "http://localhost:8080/health"]
      interval: 1s"""
        for i, port in enumerate(ports)
    )
    path = root / "docker-compose.yml"
    path.write_text(f"services:{services}\n")
    return path


def run_preflight_compose(n: int) -> tuple[float, float]:
    root = Path(tempfile.mkdtemp(prefix="bench-pfc-"))
    write_compose(root, free_ports(n))
    return time_project(root)


def run_compose(n: int) -> tuple[float, float]:
    ports = free_ports(n)
    root = Path(tempfile.mkdtemp(prefix="bench-compose-"))
    write_compose(root, ports)
    name = f"benchcompose{os.getpid()}"
    base = ["docker-compose", "-p", name, "-f", str(root / "docker-compose.yml")]
    begin = time.perf_counter()
    subprocess.run([*base, "up", "-d"], check=True, capture_output=True)
    poll_health(ports)
    up = time.perf_counter() - begin
    begin = time.perf_counter()
    subprocess.run([*base, "down"], check=True, capture_output=True)
    down = time.perf_counter() - begin
    shutil.rmtree(root, ignore_errors=True)
    return up, down


def run_testcontainers(n: int) -> tuple[float, float]:
    os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"  # Ryuk's image cannot be pulled here
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.network import Network
    from testcontainers.core.wait_strategies import HttpWaitStrategy

    begin = time.perf_counter()
    network = Network().create()

    def start(_: int) -> DockerContainer:
        container = (
            DockerContainer(IMAGE)
            .with_command(["sh", "-c", COMMAND])
            .with_exposed_ports(8080)
            .with_network(network)
            .waiting_for(HttpWaitStrategy(8080, "/health").with_poll_interval(0.01))
        )
        return container.start()

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        containers = list(pool.map(start, range(n)))
    up = time.perf_counter() - begin
    begin = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        list(pool.map(lambda c: c.stop(), containers))
    network.remove()
    return up, time.perf_counter() - begin


VARIANTS: dict[str, Callable[[int], tuple[float, float]]] = {
    "socket": run_socket,
    "socket-at-once": functools.partial(run_socket, one_create_at_a_time=False),
    "floor": run_floor,
    "preflight": run_preflight,
    "compose": run_compose,
    "preflight-compose": run_preflight_compose,
    "testcontainers": run_testcontainers,
}


def ensure_tools(skip: set[str]) -> None:
    if not {"compose", "preflight-compose"} <= skip and shutil.which("docker-compose") is None:
        print("installing docker-compose (apt)", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-q", "docker-compose"], check=True, capture_output=True)
    if "testcontainers" not in skip:
        try:
            import testcontainers  # noqa: F401
        except ImportError:
            print("installing testcontainers (pip)", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "testcontainers"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--sizes", default="1,5")
    parser.add_argument("--skip", default="")
    args = parser.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    ensure_tools(skip)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: list[tuple[int, str, float, float]] = []
    names = [name for name in VARIANTS if name not in skip]
    for n in sizes:
        for name in names:
            VARIANTS[name](n)  # warm-up (page cache, image layers, imports)
        timings: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in names}
        # Interleaved, in a rotating order: slow drifts of the machine hit every tool alike.
        for rep in range(args.reps):
            order = names[rep % len(names) :] + names[: rep % len(names)]
            for name in order:
                up, down = VARIANTS[name](n)
                timings[name][0].append(up)
                timings[name][1].append(down)
        for name in names:
            ups, downs = timings[name]
            rows.append((n, name, statistics.median(ups), statistics.median(downs)))
            print(
                f"  {n} service(s) {name:15s} up {rows[-1][2]:.3f}s  down {rows[-1][3]:.3f}s", file=sys.stderr
            )
    load = os.getloadavg()
    print(
        textwrap.dedent(f"""
        Setup and teardown, median of {args.reps} repetitions (seconds; ratios to the socket floor
        and to testcontainers); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}

        | services | tool | setup | / socket | / testcontainers | teardown | / socket | / testcontainers |
        |---:|---|---:|---:|---:|---:|---:|---:|""")
    )
    missed: list[str] = []
    for n, name, up, down in rows:
        floor = next(r for r in rows if r[0] == n and r[1] == "socket")
        tc = next((r for r in rows if r[0] == n and r[1] == "testcontainers"), None)
        up_tc = f"{up / tc[2]:.2f}x" if tc else "-"
        down_tc = f"{down / tc[3]:.2f}x" if tc else "-"
        print(
            f"| {n} | {name} | {up:.3f} | {up / floor[2]:.2f}x | {up_tc} "
            f"| {down:.3f} | {down / floor[3]:.2f}x | {down_tc} |"
        )
        if name == "preflight":
            if up > 1.1 * floor[2]:
                missed.append(f"{n} service(s): setup {up / floor[2]:.2f}x the socket floor (goal 1.1x)")
            if tc and up > tc[2]:
                missed.append(f"{n} service(s): setup {up / tc[2]:.2f}x testcontainers (goal 1.0x)")
            if tc and down > tc[3]:
                missed.append(f"{n} service(s): teardown {down / tc[3]:.2f}x testcontainers (goal 1.0x)")
    if {"compose", "preflight-compose"} <= set(names):
        print("\nThe same compose file, preflight against docker-compose (setup ratio; goal <= 0.7x)\n")
        for n in sizes:
            ours = next(r for r in rows if r[0] == n and r[1] == "preflight-compose")
            theirs = next(r for r in rows if r[0] == n and r[1] == "compose")
            ratio = ours[2] / theirs[2]
            verdict = "met" if ratio <= COMPOSE_GOAL else "MISSED"
            print(f"- {n} service(s): {ours[2]:.3f}s vs {theirs[2]:.3f}s = {ratio:.2f}x ({verdict})")
            if ratio > COMPOSE_GOAL:
                missed.append(f"{n} service(s): compose file {ratio:.2f}x docker-compose (goal {COMPOSE_GOAL}x)")
    for line in missed:
        print(f"goal missed: {line}", file=sys.stderr)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
