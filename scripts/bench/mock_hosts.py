#!/usr/bin/env python3
"""Benchmark: where the mocks of a kept environment live once their starter exits.

Three lanes, interleaved in every repetition, each timed from "start" to "a request answered":

  in-process   `MockHost.start()` in this process (what a run uses while its process lives)
  detached     `spawn_detached`: a `python -m preflight_sdk.mocks.serve` process of its own, the
               way a kept environment's mocks outlive `setup` / `run --keep` / the MCP server
  container    the same mock server (`preflight_sdk.mocks.serve`) in a preflight-base/python
               container on the environment's network, its port published: this checkout and its
               virtualenv are mounted read-only (same Python minor version), which no other engine
               than this machine's could do; a real one would first need an image with preflight
               in it, built or pushed for every engine (not counted here)

Then the median round trip of 200 requests answered by each (from this machine). Prints a
markdown table; exits 1 when the detached host starts slower than the container.
Usage: scripts/bench/mock_hosts.py [--runs 7]
Needs: scripts/ensure-docker, scripts/base-images.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.config.model import MockConfig
from preflight_sdk.mocks import MockHost
from preflight_sdk.mocks.detached import DetachedSpec, spawn_detached, stop_detached
from preflight_sdk.mocks.listeners import bind_all

ROUTE = {"port": 0, "routes": [{"method": "GET", "path": "/ping", "response": {"body": {"ok": True}}}]}


def answered(port: int, path: str = "/ping") -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1.0)
    try:
        connection.request("GET", path)
        return connection.getresponse().status < 500
    except OSError:
        return False
    finally:
        connection.close()


def wait_answer(port: int, path: str = "/ping") -> None:
    deadline = time.monotonic() + 60
    while not answered(port, path):
        if time.monotonic() > deadline:
            raise SystemExit(f"nothing answered on port {port}")
        time.sleep(0.005)


def round_trip(port: int, path: str, count: int = 200) -> float:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    times = []
    for _ in range(count):
        started = time.perf_counter()
        connection.request("GET", path)
        connection.getresponse().read()
        times.append(time.perf_counter() - started)
    connection.close()
    return statistics.median(times)


def free_port() -> int:
    bound = bind_all({"x": 0}, ["127.0.0.1"])["x"][0]
    port = int(bound.getsockname()[1])
    bound.close()
    return port


def in_process() -> tuple[float, float]:
    config = msgspec.convert(ROUTE, MockConfig)

    async def main() -> tuple[float, float]:
        host = MockHost({"ping": config})
        started = time.perf_counter()
        await host.start()
        port = host.port("ping")
        await anyio.to_thread.run_sync(wait_answer, port)
        took = time.perf_counter() - started
        trip = await anyio.to_thread.run_sync(round_trip, port, "/ping")
        await host.stop()
        return took, trip

    return anyio.run(main)


def detached(folder: str) -> tuple[float, float]:
    port = free_port()
    config = msgspec.convert({**ROUTE, "port": port}, MockConfig)
    state = os.path.join(folder, "state.json")
    with open(state, "w") as file:
        file.write('{"sessionId": "bench", "state": "running"}')
    spec = DetachedSpec(
        mocks={"ping": config}, bind_hosts=["127.0.0.1"], state_file=state, session_id="bench"
    )
    started = time.perf_counter()
    pid = spawn_detached(spec, folder)
    took = time.perf_counter() - started
    trip = round_trip(port, "/ping")
    stop_detached(pid)
    return took, trip


SUBNET, CONTAINER_IP = "172.31.250.0/24", "172.31.250.10"
LAUNCH = (
    "import runpy, site, sys; site.addsitedir(sys.argv[1]); sys.argv = sys.argv[1:]; "
    "runpy.run_module('preflight_sdk.mocks.serve', run_name='__main__')"
)


def container(network: str, folder: str) -> tuple[float, float]:
    site_packages = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
    checkout = str(Path(__file__).resolve().parents[2])
    config = msgspec.convert({**ROUTE, "port": 8000}, MockConfig)
    state = os.path.join(folder, "state.json")
    with open(state, "w") as file:
        file.write('{"sessionId": "bench", "state": "running"}')
    spec = DetachedSpec(
        mocks={"ping": config}, bind_hosts=[CONTAINER_IP], state_file=state, session_id="bench"
    )
    spec_file = os.path.join(folder, "container.json")
    with open(spec_file, "wb") as file:
        file.write(msgspec.json.encode(spec))
    started = time.perf_counter()
    cid = subprocess.run(
        [
            "docker",
            "run",
            "-d",
            "--rm",
            "--network",
            network,
            "--ip",
            CONTAINER_IP,
            "-p",
            "127.0.0.1:0:8000",
            "-v",
            f"{site_packages}:{site_packages}:ro",
            "-v",
            f"{checkout}:{checkout}:ro",
            "-v",
            f"{folder}:{folder}",
            "preflight-base/python",
            "python3",
            "-c",
            LAUNCH,
            site_packages,
            spec_file,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        published = subprocess.run(
            ["docker", "port", cid, "8000/tcp"], capture_output=True, text=True, check=True
        ).stdout.split(":")[-1]
        port = int(published)
        wait_answer(port)
        took = time.perf_counter() - started
        trip = round_trip(port, "/ping")
    finally:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True, check=False)
    return took, trip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    network = f"bench-mockhosts-{os.getpid()}"
    subprocess.run(
        ["docker", "network", "create", "--subnet", SUBNET, network], capture_output=True, check=True
    )
    lanes: dict[str, Callable[[], tuple[float, float]]] = {}
    results: dict[str, list[tuple[float, float]]] = {"in-process": [], "detached": [], "container": []}
    try:
        with tempfile.TemporaryDirectory() as folder:
            lanes = {
                "in-process": in_process,
                "detached": lambda: detached(folder),
                "container": lambda: container(network, folder),
            }
            for _ in range(args.runs):
                for name, lane in lanes.items():
                    results[name].append(lane())
    finally:
        subprocess.run(["docker", "network", "rm", network], capture_output=True, check=False)
    print("| lane | start to first answer (median) | request round trip (median) |")
    print("|---|---|---|")
    medians = {}
    for name, samples in results.items():
        start = statistics.median(s for s, _ in samples)
        trip = statistics.median(t for _, t in samples)
        medians[name] = start
        print(f"| {name} | {start * 1000:.0f} ms | {trip * 1000:.2f} ms |")
    ratio = medians["detached"] / medians["container"]
    print(f"\ndetached / container start: {ratio:.2f}x (goal: <= 1.0x: the detached host is the cheaper way)")
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
