#!/usr/bin/env python3
"""Benchmark: the inner loop on the shop example. Change one line of orders/app.py, time to verdict.

Each path has its own copy of docs/examples/shop (its own image tags, containers and mock), brought
up once; then, interleaved in every repetition, each path gets a one-line edit of orders/app.py and
is timed from the edit to the verdict:

  floor        a plain script doing the least possible: `docker build` of orders (cached layers),
               `docker rm -f` + `docker run` of its container on the existing network, poll its
               /health every 10 ms, then the same suites (preflight's runner, nothing brought up)
  incremental  Project.run(): brings the environment up to date (rebuilds and recreates orders
               only), runs the suites, keeps the environment
  cold         today's full path: Project.build() (all images), setup(), run(), clean
  compose      docker-compose (v1, Debian's package) `up --build -d`, orders polled until /health
               answers, plus the suites' own time measured in the same repetition (compose cannot
               run preflight's suites: they need its mock and service URLs)
  no change    Project.run() again with nothing edited, against the suites' own time

On docs/examples/shop-db (orders in PostgreSQL, which its suite writes), the same edit of
orders/app.py, three more copies:

  db reset     Project.run(): orders rebuilt, and the database brought back to its state after setup
               by its `reset:` (the example's), so the verdict is the one a fresh environment gives
  db no reset  the same with `reset: none` on the database: the incremental loop without a reset
               (its verdict is wrong after the first run: the rows of the runs before are there)
  db cold      Project.clean(), then Project.run(): a fresh environment every time
  (and, for the record, Project.run() with the reset and nothing edited: what the reset costs)

On tests/fixtures/projects/four-services (four services, 192 cases; each handler given 50 ms of
work of its own, DELAY_MS, about what an end-to-end case costs a real service), an edit of
one service (audit, whose cases are a third of the project's), three more copies:

  four full      Project.run(): audit rebuilt and recreated, every case run (the affected ones first)
  four affected  Project.run(affected=True): only the cases the edit can affect run, the rest carried
  four fail fast an edit that breaks an audit case, Project.run(fail_fast=True): the affected cases
                 first, the run stops at the first failure (the edit is undone after each, untimed)

Goals: incremental <= 1.15x the floor, >= 3x faster than cold, faster than compose; a no-change
re-run within 10% of the suites' own time; db reset <= 1.5x db no reset and >= 3x faster than db
cold; four affected <= 0.4x four full, four fail fast <= 0.3x four full. Prints the medians as
markdown tables; exits 1 when a goal is missed.
Usage: scripts/bench/inner_loop.py [--runs 5] [--skip compose,shop-db,four]
Needs: scripts/ensure-docker, scripts/base-images; docker-compose is installed with apt on first use.
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
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import yaml

from preflight_sdk import Project
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.tracing import new_span_id, new_trace_id
from preflight_sdk.suites.events import EventLog
from preflight_sdk.suites.orchestrator import TestRunState, run_suites

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SHOP = EXAMPLES / "shop"
SHOP_DB = EXAMPLES / "shop-db"
FOUR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "projects" / "four-services"
HANDLER_MS = "50"


def copy_shop(base: Path, name: str, example: Path = SHOP) -> Path:
    """A copy of the shop with its own image tags, so the paths never rebuild each other's images."""
    root = base / name
    shutil.copytree(example, root, ignore=shutil.ignore_patterns(".preflight"))
    config = root / "e2e.yaml"
    text = config.read_text().replace("preflight-example/", f"bench-{name}-{os.getpid()}/")
    config.write_text(text)
    return root


def edit(root: Path, counter: list[int]) -> None:
    counter[0] += 1
    with (root / "orders" / "app.py").open("a") as handle:
        handle.write(f"# edit {counter[0]}\n")


def docker(*args: str) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def poll_health(url: str, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=1) as reply:
                if reply.status < 400:
                    return
        except OSError:
            time.sleep(0.01)
    raise RuntimeError(f"{url} did not answer in {deadline}s")


class Floor:
    """The least a script can do, on an environment preflight set up once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = Project.open(root)

    async def prepare(self) -> None:
        await self.project.run()
        ctx = self.project._ctx  # the runner alone needs the context: nothing else is brought up
        record = next(r for r in ctx.require_session().containers if r.service == "orders")
        info = await ctx.engine.inspect([record.id])
        self.name = info[0].name
        self.image = ctx.require_loaded().service("orders").build.image  # type: ignore[union-attr]
        self.args = docker(
            "inspect",
            "--format",
            "{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}|"
            "{{range .Config.Env}}{{.}};{{end}}|{{json .Config.Labels}}",
            record.id,
        ).split("|")

    async def once(self) -> float:
        import json

        network, env, labels = self.args
        begun = time.perf_counter()
        docker("build", "-q", "-t", self.image, str(self.root / "orders"))
        docker("rm", "-f", self.name)
        argv = ["run", "-d", "--name", self.name, "--network", network, "--network-alias", "orders"]
        argv += ["--add-host", "payments:host-gateway", "-p", "127.0.0.1:0:8000"]
        for pair in env.split(";"):
            if pair.startswith(("INVENTORY_URL=", "PAYMENTS_URL=")):
                argv += ["-e", pair]
        for key, value in json.loads(labels).items():
            argv += ["--label", f"{key}={value}"]
        new_id = docker(*argv, self.image)
        port = docker("port", self.name, "8000/tcp").splitlines()[0].rsplit(":", 1)[1]
        poll_health(f"http://127.0.0.1:{port}/health")
        ctx = self.project._ctx
        session = ctx.require_session()
        await ctx.transition(
            containers=[
                r
                if r.service != "orders"
                else type(r)(service=r.service, name=r.name, id=new_id, kind=r.kind)
                for r in session.containers
            ]
        )
        ctx.mocks.reset()  # the suites expect fresh mock sequences, as every run starts with
        run_id = f"floor-{time.monotonic_ns()}"
        plan = TestRunState(run_id, EventLog(run_id, new_trace_id(), new_span_id(), None))
        result = await run_suites(
            ctx, suite_ids=None, parallel=None, reporter=Reporter(None, "run"), state=plan
        )
        assert result.status == "passed", result.summary
        return time.perf_counter() - begun


class ShopDb:
    """The three shop-db paths: with the example's reset, with `reset: none` on db, cold."""

    def __init__(self, base: Path) -> None:
        self.reset = Project.open(copy_shop(base, "dbreset", SHOP_DB))
        no_reset = copy_shop(base, "dbnoreset", SHOP_DB)
        config = no_reset / "e2e.yaml"
        data = yaml.safe_load(config.read_text())
        data["services"]["db"]["reset"] = "none"
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        self.no_reset = Project.open(no_reset)
        self.cold_root = copy_shop(base, "dbcold", SHOP_DB)
        self.verdicts: list[str] = []  # of the runs without reset, which may well fail

    @property
    def roots(self) -> list[Path]:
        return [Path(self.reset.path), Path(self.no_reset.path), self.cold_root]

    async def prepare(self) -> None:
        for project in (self.reset, self.no_reset, Project.open(self.cold_root)):
            result = await project.run()
            assert result.status == "passed", result.summary

    async def once(self, counter: list[int]) -> dict[str, float]:
        for root in self.roots:
            edit(root, counter)
        times = {}
        begun = time.perf_counter()
        result = await self.reset.run()
        times["dbreset"] = time.perf_counter() - begun
        assert result.status == "passed", f"the reset loop gave a wrong verdict: {result.summary}"
        begun = time.perf_counter()
        result = await self.no_reset.run()
        times["dbnoreset"] = time.perf_counter() - begun
        self.verdicts.append(result.status)
        begun = time.perf_counter()
        result = await self.reset.run()  # nothing edited: what the reset itself costs a run
        times["dbresetonly"] = time.perf_counter() - begun
        assert result.status == "passed", result.summary
        begun = time.perf_counter()
        cold = Project.open(self.cold_root)
        await cold.clean()
        result = await cold.run()
        times["dbcold"] = time.perf_counter() - begun
        assert result.status == "passed", result.summary
        return times

    async def clean(self) -> None:
        for root in self.roots:
            await Project.open(root).clean()


class FourServices:
    """An edit of one of four services: every case, only the affected ones, to the first failure."""

    def __init__(self, base: Path) -> None:
        self.roots = {name: self._copy(base, name) for name in ("fourfull", "fouraffected", "fourfast")}
        self.projects = {name: Project.open(root) for name, root in self.roots.items()}

    @staticmethod
    def _copy(base: Path, name: str) -> Path:
        root = base / name
        shutil.copytree(FOUR, root, ignore=shutil.ignore_patterns(".preflight"))
        config = root / "e2e.yaml"
        data = yaml.safe_load(config.read_text().replace("preflight-test/", f"bench-{name}-{os.getpid()}/"))
        for service in data["services"].values():
            service.setdefault("container", {}).setdefault("environment", {})["DELAY_MS"] = HANDLER_MS
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        return root

    async def prepare(self) -> None:
        for project in self.projects.values():
            result = await project.run()
            assert result.status == "passed", result.summary

    async def once(self, counter: list[int]) -> dict[str, float]:
        times = {}
        for name, options in (("fourfull", {}), ("fouraffected", {"affected": True})):
            edit_service(self.roots[name], counter)
            begun = time.perf_counter()
            result = await self.projects[name].run(**options)
            times[name] = time.perf_counter() - begun
            assert result.status == "passed", result.summary
        app = self.roots["fourfast"] / "audit" / "app.py"
        good = app.read_text()
        app.write_text(good.replace('"login" if number % 3 == 0', '"login" if number % 4 == 0'))
        begun = time.perf_counter()
        result = await self.projects["fourfast"].run(fail_fast=True)
        times["fourfast"] = time.perf_counter() - begun
        assert result.status == "failed" and result.affected is not None and result.affected.stopped_at
        app.write_text(good)
        assert (await self.projects["fourfast"].run(affected=True)).status == "passed"  # untimed
        return times

    async def clean(self) -> None:
        for project in self.projects.values():
            await project.clean()


def edit_service(root: Path, counter: list[int]) -> None:
    """A one-line edit of audit/app.py that changes no verdict."""
    counter[0] += 1
    with (root / "audit" / "app.py").open("a") as handle:
        handle.write(f"# edit {counter[0]}\n")


class Compose:
    """docker-compose v1 on its own copy: `up --build -d`, then orders polled until healthy."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.name = f"benchloop{os.getpid()}"
        image = f"bench-compose-{os.getpid()}"
        (root / "docker-compose.yml").write_text(
            "version: '3'\n"
            "services:\n"
            f"  inventory: {{build: {{context: inventory}}, image: '{image}/inventory'}}\n"
            f"  orders:\n    build: {{context: orders}}\n    image: '{image}/orders'\n"
            "    depends_on: [inventory]\n    ports: ['127.0.0.1::8000']\n"
            "    environment: {INVENTORY_URL: 'http://inventory:8000', PAYMENTS_URL: 'http://payments:9'}\n"
        )
        self.base = ["docker-compose", "-p", self.name, "-f", str(root / "docker-compose.yml")]

    def up(self) -> None:
        subprocess.run([*self.base, "up", "--build", "-d"], capture_output=True, check=True)
        port = subprocess.run(
            [*self.base, "port", "orders", "8000"], capture_output=True, text=True, check=True
        ).stdout.strip()
        poll_health(f"http://{port}/health")

    async def once(self) -> float:
        begun = time.perf_counter()
        await anyio.to_thread.run_sync(self.up)
        return time.perf_counter() - begun

    def down(self) -> None:
        subprocess.run([*self.base, "down", "--rmi", "all", "-t", "0"], capture_output=True)


async def main(runs: int, skip: set[str]) -> int:
    base = Path(tempfile.mkdtemp(prefix="bench-inner-loop-"))
    floor = Floor(copy_shop(base, "floor"))
    incremental = Project.open(copy_shop(base, "incremental"))
    cold_root = copy_shop(base, "cold")
    compose = Compose(copy_shop(base, "compose")) if "compose" not in skip else None
    shop_db = ShopDb(base) if "shop-db" not in skip else None
    four = FourServices(base) if "four" not in skip else None
    times: dict[str, list[float]] = {
        k: []
        for k in (
            *("floor", "incremental", "cold", "compose", "nochange", "suites"),
            *("dbreset", "dbnoreset", "dbcold", "dbresetonly", "fourfull", "fouraffected", "fourfast"),
        )
    }
    counter = [0]
    try:
        await floor.prepare()
        assert (await incremental.run()).status == "passed"
        if compose is not None:
            await anyio.to_thread.run_sync(compose.up)
        if shop_db is not None:
            await shop_db.prepare()
        if four is not None:
            await four.prepare()

        async def timed(step: Callable[[], Awaitable[object]]) -> float:
            begun = time.perf_counter()
            await step()
            return time.perf_counter() - begun

        async def cold() -> None:
            project = Project.open(cold_root)
            await project.build()
            await project.setup()
            result = await project.run(keep=False)
            assert result.status == "passed", result.summary

        for rep in range(runs):
            edit(floor.root, counter)
            times["floor"].append(await floor.once())
            edit(Path(incremental.path), counter)
            result = None

            async def inc() -> None:
                nonlocal result
                result = await incremental.run()
                assert result.status == "passed", result.summary

            times["incremental"].append(await timed(inc))
            edit(cold_root, counter)
            times["cold"].append(await timed(cold))
            if compose is not None:
                edit(compose.root, counter)
                suites = result.duration / 1000 if result is not None else 0.0
                times["compose"].append(await compose.once() + suites)
            again = None

            async def nochange() -> None:
                nonlocal again
                again = await incremental.run()

            times["nochange"].append(await timed(nochange))
            assert again is not None
            times["suites"].append(again.duration / 1000)
            if shop_db is not None:
                for key, value in (await shop_db.once(counter)).items():
                    times[key].append(value)
            if four is not None:
                for key, value in (await four.once(counter)).items():
                    times[key].append(value)
            print(
                f"rep {rep + 1}/{runs}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items() if v),
                file=sys.stderr,
            )
    finally:
        await incremental.clean()
        await floor.project.clean()
        await Project.open(cold_root).clean()
        if compose is not None:
            compose.down()
        if shop_db is not None:
            await shop_db.clean()
        if four is not None:
            await four.clean()
        images = [
            line
            for line in docker("images", "--format", "{{.Repository}}:{{.Tag}}").splitlines()
            if line.startswith("bench-") and str(os.getpid()) in line
        ]
        if images:
            subprocess.run(["docker", "rmi", "-f", *images], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in times.items() if v}
    print(f"\nInner loop on the shop example (median of {runs}, seconds from the edit to the verdict)\n")
    print("| path | median | vs floor | without the suites' time |")
    print("|---|---:|---:|---:|")
    for key, label in (
        ("floor", "floor (docker build + rm + run + poll + suites)"),
        ("incremental", "preflight run (incremental)"),
        ("cold", "preflight cold (build, setup, run, clean)"),
        ("compose", "docker-compose up --build -d + suites"),
        ("nochange", "preflight run, nothing changed"),
        ("suites", "the suites' own time"),
    ):
        if key in med:
            bring_up = med[key] - med["suites"] if key != "suites" else 0.0
            print(f"| {label} | {med[key]:.2f} | {med[key] / med['floor']:.2f}x | {bring_up:.2f} |")
    goals = [
        (
            "incremental <= 1.15x floor",
            med["incremental"] <= 1.15 * med["floor"],
            med["incremental"] / med["floor"],
        ),
        ("cold >= 3x incremental", med["cold"] >= 3 * med["incremental"], med["cold"] / med["incremental"]),
        (
            "no change <= 1.10x the suites",
            med["nochange"] <= 1.10 * med["suites"],
            med["nochange"] / med["suites"],
        ),
    ]
    if "compose" in med:
        goals.append(
            (
                "incremental < compose",
                med["incremental"] < med["compose"],
                med["compose"] / med["incremental"],
            )
        )
    if shop_db is not None:
        print(f"\nInner loop on shop-db (median of {runs}, seconds from the edit to the verdict)\n")
        print("| path | median | vs no reset |")
        print("|---|---:|---:|")
        for key, label in (
            ("dbnoreset", "preflight run, `reset: none` on db (no reset)"),
            ("dbreset", "preflight run, db reset (the example's `reset:`)"),
            ("dbcold", "preflight clean, then run"),
            ("dbresetonly", "preflight run, nothing edited (the db reset alone)"),
        ):
            print(f"| {label} | {med[key]:.2f} | {med[key] / med['dbnoreset']:.2f}x |")
        print(f"\n(verdicts without reset: {', '.join(shop_db.verdicts)})")
        goals += [
            (
                "db reset <= 1.5x db no reset",
                med["dbreset"] <= 1.5 * med["dbnoreset"],
                med["dbreset"] / med["dbnoreset"],
            ),
            ("db cold >= 3x db reset", med["dbcold"] >= 3 * med["dbreset"], med["dbcold"] / med["dbreset"]),
        ]
    if four is not None:
        print(f"\nAn edit of one of four services (median of {runs}, seconds from the edit to the verdict)\n")
        print("| path | median | vs every case |")
        print("|---|---:|---:|")
        for key, label in (
            ("fourfull", "preflight run (every case, the affected first)"),
            ("fouraffected", "preflight run --affected (only the affected cases)"),
            ("fourfast", "preflight run --fail-fast, a breaking edit (to the first failure)"),
        ):
            print(f"| {label} | {med[key]:.2f} | {med[key] / med['fourfull']:.2f}x |")
        goals += [
            ("four affected <= 0.4x four full", med["fouraffected"] <= 0.4 * med["fourfull"],
             med["fouraffected"] / med["fourfull"]),
            ("four fail fast <= 0.3x four full", med["fourfast"] <= 0.3 * med["fourfull"],
             med["fourfast"] / med["fourfull"]),
        ]  # fmt: skip
    print()
    missed = 0
    for name, ok, ratio in goals:
        print(f"{'met ' if ok else 'MISSED'}  {name} ({ratio:.2f})")
        missed += not ok
    return 1 if missed else 0


def ensure_compose() -> bool:
    if shutil.which("docker-compose"):
        return True
    print("installing docker-compose (apt)", file=sys.stderr)
    done = subprocess.run(["apt-get", "install", "-y", "-q", "docker-compose"], capture_output=True)
    return done.returncode == 0 and shutil.which("docker-compose") is not None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="repetitions (median reported; default 5)")
    parser.add_argument(
        "--skip", default="", help="paths to leave out, comma-separated (compose, shop-db, four)"
    )
    options = parser.parse_args()
    skipped = {s for s in options.skip.split(",") if s}
    if "compose" not in skipped and not ensure_compose():
        print("docker-compose could not be installed: reporting without it", file=sys.stderr)
        skipped.add("compose")
    sys.exit(anyio.run(main, options.runs, skipped))
