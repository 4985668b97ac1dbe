#!/usr/bin/env python3
"""Benchmark what the run store costs: recording a run, and reading runs back.

    scripts/bench/runs.py [--cases 1000] [--runs 15] [--store-runs 10000] [--reads 200]

1. Recording. The same N-case YAML suite against a local service (the runner benchmark's), on an
   initialized project, interleaved round by round:
   - baseline: the runner as it was before runs were recorded: `run_suites` plus the run's files
     (report.json, junit.xml, events.ndjson, cases/, report.html), nothing in the store;
   - preflight: `Project.run()`: the same, plus the store row, every case's outcome, the history
     of failures, the config hash, the hash-chained event log and retention.
   Goal: preflight at most 1.05x the baseline (median of `--runs`; the runner alone varies by
   about 10 % between runs on 2 CPUs, so fewer than 15 rounds do not settle 5 %).
2. Reading. A store filled with `--store-runs` finished runs of 20 cases each (written through
   `RunStore`, as runs would be), then `Project.list_runs()` and `Project.get_run(id)` of random
   runs through the SDK. Goal: each at most 10 ms at p50.

Prints a table; exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from multiprocessing import Process
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import free_port, serve, wait_ready, write_preflight_project

RECORD_GOAL = 1.05
READ_GOAL_MS = 10.0


def record_rounds(root: Path, cases: int, runs: int) -> tuple[list[float], list[float]]:
    import anyio

    from preflight_sdk import Project
    from preflight_sdk.core.progress import Reporter
    from preflight_sdk.core.redaction import DEFAULT
    from preflight_sdk.core.tracing import new_span_id, new_trace_id
    from preflight_sdk.runs.report import report_writer
    from preflight_sdk.store import new_run_id
    from preflight_sdk.suites.artifacts import write_artifacts
    from preflight_sdk.suites.events import EventLog
    from preflight_sdk.suites.orchestrator import TestRunState, run_suites

    project = Project.open(root)
    anyio.run(project.init)
    ctx = project._ctx

    async def baseline() -> None:
        run_id = new_run_id()
        log = EventLog(run_id, new_trace_id(), new_span_id(), None)
        plan = TestRunState(run_id, log)
        result = await run_suites(
            ctx, suite_ids=None, parallel=None, reporter=Reporter(None, "run"), state=plan
        )
        assert plan.context is not None
        pages = report_writer(None, DEFAULT)  # the run's page is one of its files (scripts/bench/report.py)
        result = await anyio.to_thread.run_sync(
            write_artifacts, root, result, log, plan.context.full_failures, "RUN_COMPLETED", pages
        )
        assert result.totals.passed == cases

    async def recorded() -> None:
        result = await project.run(progress=False)
        assert result.ok and result.totals.passed == cases and not result.warnings, result.summary

    base: list[float] = []
    full: list[float] = []
    anyio.run(baseline)  # warm-up of both paths
    anyio.run(recorded)
    for _ in range(runs):
        for fn, out in ((baseline, base), (recorded, full)):
            began = time.perf_counter()
            anyio.run(fn)
            out.append(time.perf_counter() - began)
    return base, full


def fill_store(root: Path, count: int) -> list[str]:
    import msgspec

    from preflight_sdk.core.results.run import CaseResult, RunResult, SuiteResult, Totals
    from preflight_sdk.core.run_request import RunRequest
    from preflight_sdk.store import CaseRow, NewRun, RunStore, new_run_id

    store = RunStore(root)
    ids: list[str] = []
    base_ms = int(time.time() * 1000) - count * 1000
    for n in range(count):
        run_id = new_run_id(base_ms + n * 1000)
        cases = [
            CaseResult(
                id=f"bench.case-{i}",
                name=f"case {i}",
                suite="bench",
                status="passed",
                duration=3,
                timestamp=0,
            )
            for i in range(20)
        ]
        suite = SuiteResult(id="bench", name="bench", runner="yaml", status="passed", duration=60, passed=20,
                            failed=0, skipped=0, cases=cases)  # fmt: skip
        result = RunResult(run_id=run_id, status="passed", summary="passed: 1 suite(s), 20 case(s)",
                           totals=Totals(passed=20, failed=0, skipped=0, total=20), duration=60, suites=[suite],
                           started_at="2026-01-01T00:00:00.000Z")  # fmt: skip
        store.create(RunRequest(), NewRun(run_id=run_id, started_at=result.started_at, suites=("bench",)))
        store.finish(
            run_id, status="passed", finished_at=result.started_at, duration_ms=60, summary=result.summary,
            totals=(20, 20, 0, 0), result=msgspec.json.encode(result),
            cases=[CaseRow(case_id=c.id, suite="bench", name=c.name, status="passed", duration_ms=3) for c in cases],
        )  # fmt: skip
        ids.append(run_id)
    store.db.close()
    return ids


def read_times(root: Path, ids: list[str], reads: int) -> tuple[list[float], list[float]]:
    import anyio

    from preflight_sdk import Project

    project = Project.open(root)
    listing: list[float] = []
    getting: list[float] = []

    async def main() -> None:
        await project.init()
        await project.list_runs()  # open the store once, as a long-lived server has
        for _ in range(reads):
            began = time.perf_counter()
            page = await project.list_runs(limit=20)
            listing.append(time.perf_counter() - began)
            assert len(page.runs) == 20
            run_id = random.choice(ids)
            began = time.perf_counter()
            run = await project.get_run(run_id)
            getting.append(time.perf_counter() - began)
            assert run.run_id == run_id and run.totals.passed == 20

    anyio.run(main)
    return listing, getting


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--store-runs", type=int, default=10_000)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = Process(target=serve, args=(port,), daemon=True)
    server.start()
    missed: list[str] = []
    try:
        wait_ready(url)
        with tempfile.TemporaryDirectory(prefix="preflight-bench-runs-") as folder:
            root = write_preflight_project(Path(folder), url, args.cases)
            base, full = record_rounds(root, args.cases, args.runs)
            store_root = Path(folder) / "store"
            (store_root / "tests").mkdir(parents=True)
            (store_root / "e2e.yaml").write_text('{"version": "1", "project": {"name": "store"}}')
            began = time.perf_counter()
            ids = fill_store(store_root, args.store_runs)
            filled = time.perf_counter() - began
            listing, getting = read_times(store_root, ids, args.reads)
    finally:
        server.terminate()
        server.join(5)

    b, f = statistics.median(base), statistics.median(full)
    ratio = f / b
    list_p50, get_p50 = statistics.median(listing) * 1000, statistics.median(getting) * 1000
    list_p99 = sorted(listing)[int(len(listing) * 0.99) - 1] * 1000
    get_p99 = sorted(getting)[int(len(getting) * 0.99) - 1] * 1000
    print(f"recording ({args.cases} cases, median of {args.runs}, interleaved)")
    print(f"  baseline (runner + files, no store)   {b * 1000:8.1f} ms")
    print(
        f"  preflight run (recorded)              {f * 1000:8.1f} ms   {ratio:.3f}x   goal <= {RECORD_GOAL}x"
    )
    print(f"reading (a store of {args.store_runs} runs, filled in {filled:.1f} s; {args.reads} reads)")
    print(
        f"  list_runs (20 newest)   p50 {list_p50:6.2f} ms   p99 {list_p99:6.2f} ms   goal p50 <= {READ_GOAL_MS} ms"
    )
    print(
        f"  get_run (random run)    p50 {get_p50:6.2f} ms   p99 {get_p99:6.2f} ms   goal p50 <= {READ_GOAL_MS} ms"
    )
    if ratio > RECORD_GOAL:
        missed.append(f"recording costs {ratio:.3f}x the baseline (goal {RECORD_GOAL}x)")
    if list_p50 > READ_GOAL_MS:
        missed.append(f"list_runs p50 {list_p50:.2f} ms (goal {READ_GOAL_MS} ms)")
    if get_p50 > READ_GOAL_MS:
        missed.append(f"get_run p50 {get_p50:.2f} ms (goal {READ_GOAL_MS} ms)")
    for line in missed:
        print(f"MISSED: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
