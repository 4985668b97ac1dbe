#!/usr/bin/env python3
"""Benchmark: set up and tear down N busybox services with an HTTP health check.

Compared in the same run, on the same machine and images:

  floor           a plain script: `docker network create`, every `docker run -d` at once, then
                  GET /health on each published port every 10 ms; teardown `docker rm -f` + network rm
  preflight       Project.setup() / Project.clean()
  compose         Debian's docker-compose 1.29 (v1, which has no `up --wait`): `up -d` + the same
                  polling of /health every 10 ms; `down`
  preflight-compose  Project.setup() / Project.clean() on the very compose file the compose row
                  uses, alone in its directory (no e2e.yaml); its wget health check is probed
                  from the host

Goal (exit 1 when missed): preflight-compose's setup at most 0.7x compose's.
  testcontainers  testcontainers-python, containers started from threads, HttpWaitStrategy (10 ms)

Prints the median of each over the repetitions and its ratio to the floor, as a markdown table.
Usage: scripts/bench/setup.py [--reps 9] [--sizes 1,5] [--skip compose,testcontainers]
Needs: scripts/ensure-docker, scripts/base-images; docker-compose (apt) and testcontainers (pip)
are installed on first use.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
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
    from preflight_sdk import Project

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
    from preflight_sdk import Project

    root = Path(tempfile.mkdtemp(prefix="bench-pfc-"))
    write_compose(root, free_ports(n))
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
    parser.add_argument("--reps", type=int, default=9)
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
    print(
        textwrap.dedent(f"""
        Setup and teardown, median of {args.reps} repetitions (seconds; ratio to the floor)

        | services | tool | setup | ratio | teardown | ratio |
        |---:|---|---:|---:|---:|---:|""")
    )
    for n, name, up, down in rows:
        floor = next(r for r in rows if r[0] == n and r[1] == "floor")
        print(f"| {n} | {name} | {up:.3f} | {up / floor[2]:.2f}x | {down:.3f} | {down / floor[3]:.2f}x |")
    missed = False
    if {"compose", "preflight-compose"} <= set(names):
        print("\nThe same compose file, preflight against docker-compose (setup ratio; goal <= 0.7x)\n")
        for n in sizes:
            ours = next(r for r in rows if r[0] == n and r[1] == "preflight-compose")
            theirs = next(r for r in rows if r[0] == n and r[1] == "compose")
            ratio = ours[2] / theirs[2]
            missed |= ratio > COMPOSE_GOAL
            verdict = "met" if ratio <= COMPOSE_GOAL else "MISSED"
            print(f"- {n} service(s): {ours[2]:.3f}s vs {theirs[2]:.3f}s = {ratio:.2f}x ({verdict})")
    if missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
