#!/usr/bin/env python3
"""Benchmark: `exec` in a container on the daemon's socket against a `docker exec` process.

Two measures, each lane interleaved with the other in every repetition:

  exec true    `DockerEngine.exec(container, ["true"])` on a busybox container: the cost of the
               call itself (the daemon's own work to start a process in a container included)
  shop suite   the shop example's YAML suite (docs/examples/shop/tests/orders.yaml), brought up
               once and kept: its two exec cases and the whole suite

The CLI lane is `PREFLIGHT_DOCKER_API=0` (what a remote engine, a context or Podman get). Prints
the medians as a markdown table; exits 1 when the socket lane is not faster than the CLI lane.
Usage: scripts/bench/exec.py [--runs 20] [--suite-runs 7]
Needs: scripts/ensure-docker, scripts/base-images.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from preflight_sdk import Project
from preflight_sdk.engine.docker import DockerEngine

SHOP = Path(__file__).resolve().parents[2] / "docs" / "examples" / "shop"
LANES = ("cli", "api")


def lane(name: str) -> None:
    os.environ["PREFLIGHT_DOCKER_API"] = "1" if name == "api" else "0"


async def exec_true(runs: int) -> dict[str, list[float]]:
    name = f"bench-exec-{os.getpid()}"
    subprocess.run(
        ["docker", "run", "-d", "--name", name, "preflight-base/busybox", "sleep", "600"],
        check=True,
        capture_output=True,
    )
    try:
        engines = {}
        for which in LANES:
            lane(which)
            engines[which] = DockerEngine()
            await engines[which].exec(name, ["true"], timeout=30)  # the CLI lane's client import
        times: dict[str, list[float]] = {which: [] for which in LANES}
        for _ in range(runs):
            for which, engine in engines.items():
                started = time.perf_counter()
                result = await engine.exec(name, ["true"], timeout=30)
                times[which].append(time.perf_counter() - started)
                assert result.exit_code == 0, result
        return times
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


async def shop_suite(runs: int) -> dict[str, list[tuple[float, float]]]:
    """Per lane and run: (the exec cases' time, the suite's time), in seconds."""
    root = Path(tempfile.mkdtemp()) / "shop"
    shutil.copytree(SHOP, root, ignore=shutil.ignore_patterns(".preflight"))
    times: dict[str, list[tuple[float, float]]] = {which: [] for which in LANES}
    try:
        lane("api")
        async with Project.open(root) as project:
            await project.build(progress=False)
            await project.setup(progress=False)
        for _ in range(runs):
            for which in LANES:
                lane(which)
                async with Project.open(root) as project:
                    result = await project.run(filter="orders", keep=True, progress=False)
                [suite] = result.suites
                assert suite.status == "passed", [(c.name, c.status) for c in suite.cases]
                # The two cases with `exec:` steps.
                execs = [
                    c.duration for c in suite.cases if "container" in c.name or "inside the network" in c.name
                ]
                assert len(execs) == 2, [c.name for c in suite.cases]
                times[which].append((sum(execs) / 1000, suite.duration / 1000))
        return times
    finally:
        lane("api")
        async with Project.open(root) as project:
            await project.clean()
        shutil.rmtree(root.parent, ignore_errors=True)


async def main(runs: int, suite_runs: int) -> int:
    load = os.getloadavg()[0]
    calls = await exec_true(runs)
    suites = await shop_suite(suite_runs)
    rows = [
        (f"exec `true` (median of {runs})", {w: statistics.median(calls[w]) for w in LANES}),
        (
            f"shop YAML suite: its 2 exec cases (median of {suite_runs})",
            {w: statistics.median(t[0] for t in suites[w]) for w in LANES},
        ),
        (
            f"shop YAML suite: all 8 cases (median of {suite_runs})",
            {w: statistics.median(t[1] for t in suites[w]) for w in LANES},
        ),
    ]
    print(f"load average at the start: {load:.1f}\n")
    print("| measure | CLI (`docker exec`) | socket | CLI / socket |")
    print("|---|---:|---:|---:|")
    for label, medians in rows:
        cli, api = medians["cli"], medians["api"]
        print(f"| {label} | {cli * 1000:.0f} ms | {api * 1000:.0f} ms | {cli / api:.2f}x |")
    missed = rows[0][1]["api"] >= rows[0][1]["cli"]
    if missed:
        print("\nmissed: exec on the socket is not faster than a docker exec process")
    return 1 if missed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20, help="exec calls per lane")
    parser.add_argument("--suite-runs", type=int, default=7, help="runs of the shop YAML suite per lane")
    options = parser.parse_args()
    sys.exit(anyio.run(main, options.runs, options.suite_runs))
