#!/usr/bin/env python3
"""Benchmark: one run on one engine against the same run sharded over two engines.

A generated project: one service built from a Dockerfile (a Python HTTP server whose `/slow`
answers after `--delay` seconds) and six YAML suites of slow calls, about 20 s of suites on
one engine. A second dockerd (its own socket, data root and bridge; the recipe of
tests/support/engines.py) is started for the benchmark and stopped by pid at the end.

  one engine   Project.run(keep=False): build if needed, set up, run the six suites, clean
  sharded      Project.run(shards=["local", <second dockerd>]): a copy of the environment on
               each engine, the suites split by the durations the warm-up run recorded

Both are whole runs (environment up, suites, environment removed), measured in the same
process after one warm-up of each (images built on both engines, durations recorded).
Prints the median wall time of each and their ratio; exits 1 when sharded > GOAL x one engine.
Usage: scripts/bench/shards.py [--reps 3] [--delay 0.9]
Needs: root (the second dockerd's bridge), scripts/ensure-docker, scripts/base-images.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support.engines import start_second_dockerd  # noqa: E402
from support.slow_service import DOCKERFILE, serve_py  # noqa: E402

from preflight_sdk import Project  # noqa: E402

GOAL = 0.6
CASES = (6, 5, 4, 4, 3, 2)  # slow calls per suite: 24 in all

CONFIG = """
project: {name: bench-shards}
services:
  web:
    build: {image: "preflight-bench/shards-web:latest", dockerfile: Dockerfile, context: .}
    container:
      ports: ["0:8000"]
      healthcheck: {path: /health}
tests:
  suites:
"""


def write_project(root: Path, delay: float) -> None:
    suites = []
    for index, count in enumerate(CASES):
        name = f"suite{index}"
        suites.append(f"    - {{id: {name}, file: {name}.yaml}}")
        cases = "".join(
            f"  - name: slow {i}\n    request: {{method: GET, path: /slow, service: web}}\n    expect: {{status: 200}}\n"
            for i in range(count)
        )
        (root / f"{name}.yaml").write_text(f"name: {name}\ncases:\n{cases}")
    (root / "e2e.yaml").write_text(textwrap.dedent(CONFIG) + "\n".join(suites) + "\n")
    (root / "Dockerfile").write_text(DOCKERFILE)
    (root / "serve.py").write_text(serve_py(delay))


async def timed(project: Project, **arguments: object) -> float:
    begin = time.perf_counter()
    result = await project.run(**arguments)  # type: ignore[arg-type]
    seconds = time.perf_counter() - begin
    if result.status != "passed":
        raise RuntimeError(f"the benchmark run did not pass: {result.summary}")
    return seconds


async def measure(
    root: Path, second_host: str, reps: int
) -> tuple[list[float], list[float], list[list[str]]]:
    project = Project.open(root)
    shards = ["local", second_host]
    # Warm-up: the image on both engines, and the suites' durations in the store for the split.
    await timed(project, keep=False)
    warm = await project.run(shards=shards)
    one: list[float] = []
    sharded: list[float] = []
    for _ in range(reps):
        one.append(await timed(project, keep=False))
        sharded.append(await timed(project, shards=shards))
    split = [shard.suites for shard in warm.shards or []]
    return one, sharded, split


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.9, help="seconds each slow call takes")
    args = parser.parse_args()
    second = start_second_dockerd(images=("preflight-base/python",), tcp=False)
    try:
        with tempfile.TemporaryDirectory(prefix="pf-bench-shards-") as folder:
            root = Path(folder)
            write_project(root, args.delay)
            one, sharded, split = anyio.run(measure, root, second.unix_host, args.reps)
    finally:
        second.stop()
    base, fast = statistics.median(one), statistics.median(sharded)
    ratio = fast / base
    suites = sum(CASES) * args.delay
    print(
        f"sharding bench: {len(CASES)} suites, {sum(CASES)} slow calls of {args.delay}s ({suites:.1f} s of suites)"
    )
    print(f"  split (from recorded durations): {' | '.join(', '.join(part) for part in split)}")
    print(f"  one engine        median {base:6.2f} s   runs {', '.join(f'{s:.2f}' for s in one)}")
    print(f"  sharded over two  median {fast:6.2f} s   runs {', '.join(f'{s:.2f}' for s in sharded)}")
    print(f"  ratio {ratio:.3f}x   goal <= {GOAL}x")
    if ratio > GOAL:
        print(f"MISSED: sharded takes {ratio:.3f}x one engine's time (goal {GOAL}x)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
