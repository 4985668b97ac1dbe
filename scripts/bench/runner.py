#!/usr/bin/env python3
"""Benchmark preflight's YAML test runner against its floor, Step CI and tavern.

    scripts/bench/runner.py [--cases 1000,10000] [--runs 5] [--skip-tavern] [--skip-stepci] [--profile]

The same N HTTP cases (`GET /items/<i>`, expecting status 200 and `id == i`) run against one
local service: a Starlette app on uvicorn (httptools + uvloop) in its own process. In one run,
interleaved round by round, the script times:

- floor: a plain sequential loop with a sync `httpx.Client` (request, status check, JSON decode,
  field check): the least any runner can do;
- floor (async): the same loop with `httpx.AsyncClient`;
- preflight: `Project.run()` of a test-only project whose one YAML suite holds the N cases, on a
  project already initialized (as from a notebook or the MCP server), and `cold`: `Project.open`
  then `run` in a fresh process (loading and validating e2e.yaml included), with Python's default
  of writing and reusing bytecode (PYTHONDONTWRITEBYTECODE left out) and, alike, the validated test
  file kept by the previous process (`.preflight/cache/tests/`); `cold process, file parsed` is
  the same with that cache removed first, as on a clean checkout (reported, no goal);
- preflight (contract checks): the same project with an OpenAPI contract for the API at BASE_URL
  (`tests.baseUrlContract`), so every answer is also matched to its operation and validated
  against its schema (goal: at most 1.25x preflight without the checks, as the median of each
  round's ratio: the two run back to back in a round);
- Step CI (npm `stepci`): `stepci run` of a workflow with the same N steps;
- tavern (PyPI `tavern`): `pytest` on a `.tavern.yaml` file with the same N tests.

Step CI is installed with npm and tavern into its own venv, both under ~/.cache/preflight-bench
(or $PREFLIGHT_BENCH_CACHE) when missing; nothing is written into the repository. Each tool's
time is the median of `--runs` measured runs after one warm-up; the table shows the ratios to
the floor. `--cases` takes several sizes (`1000,10000`): each is measured in turn, with its own
table. `--profile FILE` writes a pyinstrument profile of one preflight run instead
(`pip install pyinstrument` first).

Goals (exit 1 when one is missed): preflight <= 2x the floor; >= 2x faster than Step CI, in an
initialised process and in a fresh one; >= 5x faster than tavern; and from 10,000 cases on, the
fresh process <= 1.3x the initialised one (below that, starting Python and importing is most of
the difference).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("PREFLIGHT_BENCH_CACHE", Path.home() / ".cache" / "preflight-bench"))
STEPCI_VERSION = "2.8.2"
TAVERN_VERSION = "3.7.1"


# -- the service (a child process) ---------------------------------------------------------------


def serve(port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def item(request: Request) -> JSONResponse:
        number = request.path_params["id"]
        return JSONResponse({"id": number, "name": f"item {number}", "tags": ["a", "b"]})

    app = Starlette(routes=[Route("/items/{id:int}", item)])
    uvicorn.run(
        app, host="127.0.0.1", port=port, log_level="error", access_log=False, http="httptools", loop="uvloop"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/items/0", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# -- the contenders ------------------------------------------------------------------------------


def floor_sync(url: str, cases: int) -> None:
    import httpx

    with httpx.Client() as client:
        for i in range(cases):
            reply = client.get(f"{url}/items/{i}")
            assert reply.status_code == 200 and reply.json()["id"] == i


def floor_async(url: str, cases: int) -> None:
    import anyio
    import httpx

    async def main() -> None:
        async with httpx.AsyncClient() as client:
            for i in range(cases):
                reply = await client.get(f"{url}/items/{i}")
                assert reply.status_code == 200 and reply.json()["id"] == i

    anyio.run(main)


CONTRACT = {
    "openapi": "3.1.0",
    "info": {"title": "Items", "version": "1"},
    "paths": {
        "/items/{id}": {
            "get": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "An item.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id", "name"],
                                    "properties": {
                                        "id": {"type": "integer", "minimum": 0},
                                        "name": {"type": "string"},
                                        "tags": {"type": "array", "items": {"type": "string"}},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        }
    },
}


def write_preflight_project(folder: Path, url: str, cases: int, *, contract: bool = False) -> Path:
    root = folder / ("preflight-contract" if contract else "preflight")
    (root / "tests").mkdir(parents=True)
    suite = {"id": "bench", "file": "tests/bench.yaml"}
    tests: dict[str, object] = {"suites": [suite]}
    if contract:
        (root / "openapi.json").write_text(json.dumps(CONTRACT))
        tests["baseUrlContract"] = "openapi.json"
    (root / "e2e.yaml").write_text(json.dumps({"version": "1", "project": {"name": "bench"}, "tests": tests}))
    (root / ".env").write_text(f"BASE_URL={url}\n")
    lines = ["name: Bench", "cases:"]
    for i in range(cases):
        lines += [
            f"  - name: item {i}",
            f"    request: {{method: GET, path: /items/{i}}}",
            f"    expect: {{status: 200, body: {{id: {i}}}}}",
        ]
    (root / "tests" / "bench.yaml").write_text("\n".join(lines) + "\n")
    return root


class Preflight:
    """One initialized project, run again and again (as a notebook or the MCP server does)."""

    def __init__(self, root: Path) -> None:
        import anyio

        from preflight_sdk import Project

        self.root = root
        self.project = Project.open(root)
        anyio.run(self.project.init)

    def __call__(self, cases: int) -> None:
        import anyio

        result = anyio.run(self.project.run)
        assert result.ok and result.totals.passed == cases, result.summary
        for coverage in result.contracts or []:  # the checks ran: every answer was matched
            assert sum(item.calls for item in coverage.items) == cases, coverage


def preflight_cold(root: Path, cases: int, *, first_parse: bool = False) -> None:
    if first_parse:  # as on a clean checkout: no test file kept from an earlier process
        shutil.rmtree(root / ".preflight" / "cache", ignore_errors=True)
    code = (
        "import anyio, sys\nfrom preflight_sdk import Project\n"
        f"r = anyio.run(Project.open({str(root)!r}).run)\n"
        f"sys.exit(0 if r.ok and r.totals.passed == {cases} else 1)\n"
    )
    # As Python runs by default (and pip installs): modules compiled once, their bytecode reused.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def ensure_stepci() -> Path:
    folder = CACHE / "stepci"
    binary = folder / "node_modules" / ".bin" / "stepci"
    if not binary.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", f"stepci@{STEPCI_VERSION}"],
            cwd=folder,
            check=True,
        )
    return binary


def write_stepci_workflow(folder: Path, url: str, cases: int) -> Path:
    steps = [
        {
            "name": f"item {i}",
            "http": {
                "url": f"{url}/items/{i}",
                "method": "GET",
                "check": {"status": 200, "jsonpath": {"$.id": i}},
            },
        }
        for i in range(cases)
    ]
    workflow = {"version": "1.1", "name": "bench", "tests": {"bench": {"steps": steps}}}
    path = folder / "workflow.json"
    path.write_text(json.dumps(workflow))
    return path


def stepci(binary: Path, workflow: Path, cases: int) -> None:
    env = {**os.environ, "STEPCI_DISABLE_ANALYTICS": "1"}
    done = subprocess.run([str(binary), "run", str(workflow)], capture_output=True, text=True, env=env)
    if done.returncode != 0 or f"Steps: 0 failed, 0 skipped, {cases} passed" not in done.stdout:
        raise RuntimeError(f"stepci failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def ensure_tavern() -> Path:
    venv = CACHE / "tavern-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            # tavern 3.7 imports pytest internals that pytest 9 moved
            [str(python), "-m", "pip", "install", "-q", f"tavern=={TAVERN_VERSION}", "pytest<9"],
            check=True,
        )
    return python


def write_tavern_file(folder: Path, url: str, cases: int) -> Path:
    target = folder / "tavern"
    target.mkdir()
    documents = []
    for i in range(cases):
        documents.append(
            json.dumps(
                {
                    "test_name": f"item {i}",
                    "stages": [
                        {
                            "name": f"item {i}",
                            "request": {"url": f"{url}/items/{i}", "method": "GET"},
                            "response": {
                                "status_code": 200,
                                "json": {"id": i, "name": f"item {i}", "tags": ["a", "b"]},
                            },
                        }
                    ],
                }
            )
        )
    path = target / "test_bench.tavern.yaml"
    path.write_text("\n---\n".join(documents) + "\n")
    return path


def tavern(python: Path, test_file: Path, cases: int) -> None:
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True,
        text=True,
        cwd=test_file.parent,
    )
    if done.returncode != 0 or f"{cases} passed" not in done.stdout:
        raise RuntimeError(f"tavern failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


# -- measuring -----------------------------------------------------------------------------------


def timed(action: Callable[[], None]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def profile(preflight: Preflight, cases: int, output: Path) -> None:
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005)
    profiler.start()
    preflight(cases)
    profiler.stop()
    output.write_text(profiler.output_text(unicode=True, color=False, show_all=False))
    print(f"profile written to {output}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", default="1000", help="how many cases; several sizes comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-tavern", action="store_true")
    parser.add_argument("--skip-stepci", action="store_true")
    parser.add_argument("--profile", type=Path, help="write a pyinstrument profile of one preflight run here")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    folder = Path(tempfile.mkdtemp(prefix="preflight-bench-runner-"))
    missed = 0
    try:
        wait_ready(url)
        for cases in (int(part) for part in args.cases.split(",")):
            place = folder / str(cases)
            place.mkdir()
            missed += measure(args, url, place, cases)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    sys.exit(1 if missed else 0)


def measure(args: argparse.Namespace, url: str, folder: Path, cases: int) -> int:
    """Measure every contender on `cases` cases; return how many goals were missed."""
    root = write_preflight_project(folder, url, cases)
    preflight = Preflight(root)
    if args.profile:
        preflight(cases)  # warm-up
        profile(preflight, cases, args.profile)
        return 0
    checked = Preflight(write_preflight_project(folder, url, cases, contract=True))
    contenders: dict[str, Callable[[], None]] = {
        "floor (sync httpx loop)": lambda: floor_sync(url, cases),
        "floor (async httpx loop)": lambda: floor_async(url, cases),
        "preflight": lambda: preflight(cases),
        "preflight (contract checks)": lambda: checked(cases),
        "preflight (cold process)": lambda: preflight_cold(root, cases),
        "preflight (cold process, file parsed)": lambda: preflight_cold(root, cases, first_parse=True),
    }
    if not args.skip_stepci:
        binary = ensure_stepci()
        workflow = write_stepci_workflow(folder, url, cases)
        contenders["Step CI"] = lambda: stepci(binary, workflow, cases)
    if not args.skip_tavern:
        python = ensure_tavern()
        test_file = write_tavern_file(folder, url, cases)
        contenders["tavern"] = lambda: tavern(python, test_file, cases)
    for action in contenders.values():  # warm-up: caches, JIT, page cache
        action()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.runs):
        for name, action in contenders.items():
            times[name].append(timed(action))
    return report(times, cases, args.runs)


def report(times: dict[str, list[float]], cases: int, runs: int) -> int:
    """Print the table and the goals of one size; return how many goals were missed."""
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor = medians["floor (sync httpx loop)"]
    ours = medians["preflight"]
    cold = medians["preflight (cold process)"]
    print(f"\n{cases} cases, median of {runs} runs\n")
    print(
        "| runner | wall time | per case | vs floor | preflight is faster by | fresh preflight is faster by |"
    )
    print("|---|---|---|---|---|---|")
    for name, value in medians.items():
        faster = "" if name.startswith(("floor", "preflight")) else f"{value / ours:.2f}x"
        fresh = "" if name.startswith(("floor", "preflight")) else f"{value / cold:.2f}x"
        print(
            f"| {name} | {value:.2f} s | {value / cases * 1000:.2f} ms | {value / floor:.2f}x | {faster} | {fresh} |"
        )
    checks = [("preflight ≤ 2× the floor", ours / floor <= 2.0, ours / floor)]
    if "preflight (contract checks)" in medians:
        # Per round: the two run back to back, so a shared machine's load moves both alike; the
        # median of those ratios is steadier than the ratio of the two medians.
        pairs = zip(times["preflight (contract checks)"], times["preflight"], strict=True)
        ratio = statistics.median(checked / plain for checked, plain in pairs)
        print(
            f"\ncontract checks: {ratio:.3f}x preflight without them, the median of each round's ratio "
            f"(ratio of the medians {medians['preflight (contract checks)'] / ours:.3f}x; every answer "
            "matched and validated)"
        )
        checks.append(("contract checks ≤ 1.25× preflight without them", ratio <= 1.25, ratio))
    if cases >= 10_000:
        checks.append(("the fresh process ≤ 1.3× the initialised one", cold / ours <= 1.3, cold / ours))
    if "Step CI" in medians:
        checks.append(
            ("≥ 2× faster than Step CI", medians["Step CI"] / ours >= 2.0, medians["Step CI"] / ours)
        )
        checks.append(
            (
                "a fresh process ≥ 2× faster than Step CI",
                medians["Step CI"] / cold >= 2.0,
                medians["Step CI"] / cold,
            )
        )
    if "tavern" in medians:
        checks.append(("≥ 5× faster than tavern", medians["tavern"] / ours >= 5.0, medians["tavern"] / ours))
    print()
    for label, ok, ratio in checks:
        print(f"{'✓' if ok else '✗'} {label} ({ratio:.2f})")
    return sum(1 for _, ok, _ in checks if not ok)


if __name__ == "__main__":
    main()
