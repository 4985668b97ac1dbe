#!/usr/bin/env python3
"""Benchmark: `status` of a running environment of N busybox services, against `docker ps`.

Compared in the same run, on the same machine and containers:

  docker ps       the `docker ps` process: what a person types to see what runs (the baseline)
  request         one GET /health on a service's published port from this process: what `status`
                  adds per service (it measures health now, with a real request)
  sdk             `Project.status()` in a process that already asked once (a notebook, the MCP
                  server): the Docker calls, one health request and one connect per service
  cli start       `preflight --version`: a CLI process that does nothing (Python, click, the
                  command table)
  cli             `preflight status`: a new process reading state.json, e2e.yaml and Docker

Prints the median of each over the repetitions as a markdown table, with each row's ratio to
`docker ps`, and exits 1 when a goal is missed: `Project.status()` at most 2x `docker ps` plus one
request per service, and `preflight status` at most the CLI's own start plus that much.
Usage: scripts/bench/status.py [--reps 15] [--services 3]
Needs: scripts/ensure-docker, scripts/base-images.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import anyio

IMAGE = "preflight-base/busybox"
COMMAND = "mkdir -p /www && echo ok > /www/health && httpd -f -p 8080 -h /www"
BIN = Path(sys.executable).parent


def write_project(root: Path, services: int) -> None:
    body = "".join(
        f"""
  s{i}:
    build: {{image: {IMAGE}}}
    container:
      ports: ["0:8080"]
      command: ["sh", "-c", "{COMMAND}"]
      healthcheck: {{path: /health}}"""
        for i in range(services)
    )
    (root / "e2e.yaml").write_text(f"project: {{name: bench-status}}\nservices:{body}\n")


def timed(action: Callable[[], object]) -> float:
    begin = time.perf_counter()
    action()
    return time.perf_counter() - begin


def process(*argv: str, cwd: Path) -> Callable[[], object]:
    # Bytecode may be written, as in any installed copy (a set PYTHONDONTWRITEBYTECODE would make
    # every CLI row compile the package afresh).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return lambda: subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def get(port: int) -> Callable[[], object]:
    def once() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/health")
        assert connection.getresponse().status == 200
        connection.close()

    return once


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--services", type=int, default=3)
    args = parser.parse_args()
    from preflight_sdk import Project

    root = Path(tempfile.mkdtemp(prefix="bench-status-"))
    write_project(root, args.services)
    timings: dict[str, list[float]] = {}

    async def measure() -> None:
        project = Project.open(root)
        setup = await project.setup(progress=False)
        try:
            ports = [s.ports[0].host for s in setup.services]
            await project.status()  # the process's first status pays its imports once
            rows: dict[str, Callable[[], object]] = {
                "docker ps": process("docker", "ps", cwd=root),
                "request": get(ports[0]),
                "cli start": process(str(BIN / "preflight"), "--version", cwd=root),
                "cli": process(str(BIN / "preflight"), "status", cwd=root),
            }
            for action in rows.values():
                action()  # warm-up (page cache, bytecode)
            for rep in range(args.reps):
                # Interleaved, in a rotating order: slow drifts of the machine hit every row alike.
                names = [*rows, "sdk"]
                for name in names[rep % len(names) :] + names[: rep % len(names)]:
                    if name == "sdk":
                        begin = time.perf_counter()
                        status = await project.status()
                        timings.setdefault(name, []).append(time.perf_counter() - begin)
                        assert all(s.health == "healthy" for s in status.services), status
                    else:
                        timings.setdefault(name, []).append(await anyio.to_thread.run_sync(timed, rows[name]))
        finally:
            await project.clean()

    try:
        anyio.run(measure)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    median = {name: statistics.median(values) for name, values in timings.items()}
    base, request, start = median["docker ps"], median["request"], median["cli start"]
    goals = {"sdk": 2 * base + args.services * request, "cli": start + 2 * base + args.services * request}
    load = os.getloadavg()
    print(
        textwrap.dedent(f"""
        `status` of {args.services} running services, median of {args.reps} repetitions (seconds;
        ratio to `docker ps`); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}

        | row | time | / docker ps | goal |
        |---|---:|---:|---:|""")
    )
    missed: list[str] = []
    for name in ("docker ps", "request", "sdk", "cli start", "cli"):
        value = median[name]
        goal = goals.get(name)
        verdict = "" if goal is None else f"≤ {goal:.3f} s {'✓' if value <= goal else 'MISSED'}"
        print(f"| {name} | {value:.4f} | {value / base:.2f}x | {verdict} |")
        if goal is not None and value > goal:
            missed.append(f"{name}: {value:.3f} s, goal {goal:.3f} s")
    for line in missed:
        print(f"goal missed: {line}", file=sys.stderr)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
