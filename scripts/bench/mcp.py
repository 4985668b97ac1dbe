#!/usr/bin/env python3
"""Benchmark `preflight-mcp` against the floor: a minimal low-level `mcp` server (mcp_floor.py).

    scripts/bench/mcp.py [--starts 20] [--calls 200] [--update-docs] [--first-only]

Both servers are driven the same way, over real pipes with raw JSON-RPC (no client library in the
measured path), in the same run and interleaved so that machine noise hits both alike:

- start: from spawning the process until the `initialize` response has been read (median of
  `--starts` cold starts each).
- tools/list: one request at a time on a running server, `--calls` round trips (p50, p99).
- cheap call: `preflight_init` on a project already loaded (a tiny e2e.yaml) against the floor's
  no-op tool, `--calls` round trips (p50, p99).

- first call: `preflight_status` as the first tool call of a session, the way a host makes it
  (`initialize`, `tools/list`, then a moment before the agent calls a tool), against a later call
  of the same session, plus the work only a first call must do: opening the project (reading
  e2e.yaml, the engine, the store), timed as the first `status()` of a fresh `Project` in a process
  whose modules are already imported (median of `--first-sessions` sessions each). Two rows: the
  first call with no pause at all after `tools/list` (as the Inspector CLI and scripted clients
  make it), and after `--think` seconds (an agent's host).

It also prints what the tool list costs an agent: the bytes of tools/list as a model reads it
(each tool's name, description and inputSchema, compact JSON: what sits in its context on every
turn), per tool and in all, next to the whole answer's size.

Targets: start within 1.2x the floor, tools/list and cheap calls within 1.5x, the first call at
most 1.5x a later one plus the work it must do, the list as a model reads it at most 33,500
bytes. `--update-docs` rewrites the "## MCP server" section of docs/performance.md with the
numbers of this run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# -P: do not put this directory on sys.path, where this file would shadow the `mcp` package.
FLOOR = [sys.executable, "-P", str(Path(__file__).with_name("mcp_floor.py"))]
LAYER = [sys.executable, "-P", str(Path(__file__).with_name("mcp_layer.py"))]
PREFLIGHT = str(Path(sys.executable).parent / "preflight-mcp")
DOC = REPO / "docs" / "performance.md"
INTRO = (
    "# Performance\n\nMeasured numbers for preflight's moving parts, each next to the floor it cannot "
    "beat (the same work done by the bare library underneath), produced by the scripts under "
    "`scripts/bench/`.\n\n"
)
FIRST_CALL_FACTOR = 1.5
MODEL_BUDGET = 33_500  # bytes of tools/list as a model reads it, the tools added by every group included
TARGETS = {
    "start": 1.2,
    "tools/list": 1.5,
    "tools/list (to last byte)": 1.5,
    "cheap call": 1.5,
    "no-op call (export layer only)": 1.5,
}

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


# A 2026-07-28 client has no handshake: each request carries who it is in `_meta` (the SDK clients
# first ask `server/discover`).
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Server:
    """One server process spoken to with newline-delimited JSON-RPC."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=dict(os.environ),
        )
        self.next_id = 1
        self.last_size = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.send(message)
        return self.answer(message["id"])

    def request_line(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        """Send a request and return the raw line of its answer, undecoded (no notification
        comes between a request and its answer here: tools/list and these calls send none)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.send(message)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout")
        return line

    def answer(self, request_id: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            decoded = json.loads(line)
            if decoded.get("id") == request_id:
                self.last_size = len(line)
                if "error" in decoded:
                    raise RuntimeError(f"server error: {decoded['error']}")
                return dict(decoded)

    def handshake(self) -> float:
        """Send initialize right after spawning; return the seconds until its answer was read."""
        self.send(INIT)
        self.answer(0)
        elapsed = time.perf_counter() - self.started
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def open_session(self, *, modern: bool) -> None:
        """The session's opening: `initialize` (2025-11-25), or `server/discover` (2026-07-28)."""
        if modern:
            self.request("server/discover", {"_meta": MODERN_META})
        else:
            self.handshake()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def round_trips(
    jobs: dict[str, tuple[Server, str, dict[str, Any] | None]], calls: int, *, decode: bool = True
) -> dict[str, list[float]]:
    """Time `calls` round trips per server, alternating between servers call by call.

    Alternating spreads machine noise (other processes, CPU frequency) evenly over the servers.
    With `decode`, the clock stops once the answer is decoded (`json.loads` in this client
    included); without, once its last byte is read (the server's response time alone).
    """
    for _ in range(max(10, calls // 10)):  # warm-up: imports, caches, first-call paths
        for server, method, params in jobs.values():
            server.request(method, params)
    timings: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(calls):
        for name, (server, method, params) in jobs.items():
            start = time.perf_counter()
            if decode:
                reply = server.request(method, params)
                timings[name].append(time.perf_counter() - start)
            else:
                line = server.request_line(method, params)
                timings[name].append(time.perf_counter() - start)
                reply = json.loads(line)
            if reply["result"].get("isError"):
                raise RuntimeError(f"{method} failed on {name}: {reply['result']}")
    return timings


STATUS = {"name": "preflight_status", "arguments": {}}
# The first call's project has a service, so that `status` asks the engine about its container:
# the first call that touches Docker (nothing is built or started).
FIRST_CONFIG = "project:\n  name: first\nservices:\n  api:\n    build: {image: preflight-base/busybox}\n"


def first_project(tmp: str) -> Path:
    """The project the first-call rows open."""
    root = Path(tmp) / "first"
    root.mkdir()
    (root / "e2e.yaml").write_text(FIRST_CONFIG, encoding="utf-8")
    return root


WORK = """
import sys, time, anyio
import preflight_sdk.faces.mcp.server, preflight_sdk.lifecycle.status, preflight_sdk.engine.docker
import preflight_sdk.store.calls, httpx, httpcore
from preflight_sdk import Project

async def main():
    project = Project.open(sys.argv[1])
    started = time.perf_counter()
    await project.status()
    print(time.perf_counter() - started)

anyio.run(main)
"""


def first_calls(
    argv: list[str], project: Path, sessions: int, think: float, *, modern: bool = False
) -> dict[str, list[float]]:
    """Time the first `preflight_status` of `sessions` sessions (after tools/list and `think`
    seconds; none at all when 0), later calls of the same sessions, and the work a first call must
    do; also the first tools/list, from the session's opening answered until its own answer."""
    out: dict[str, list[float]] = {"first": [], "later": [], "work": [], "list": []}
    meta = {"_meta": MODERN_META} if modern else None
    status = {**STATUS, **(meta or {})}
    for _ in range(sessions):
        server = Server(argv, project)
        server.open_session(modern=modern)
        started = time.perf_counter()
        server.request("tools/list", meta)
        out["list"].append(time.perf_counter() - started)
        if think:
            time.sleep(think)
        started = time.perf_counter()
        server.request("tools/call", status)
        out["first"].append(time.perf_counter() - started)
        for _ in range(10):
            started = time.perf_counter()
            server.request("tools/call", status)
            out["later"].append(time.perf_counter() - started)
        server.close()
        done = subprocess.run(
            [sys.executable, "-P", "-c", WORK, str(project)], capture_output=True, text=True, check=True
        )
        out["work"].append(float(done.stdout.strip()))
    return out


def first_call_table(firsts: dict[str, dict[str, list[float]]]) -> tuple[list[str], bool]:
    """The first-call rows: first against 1.5x a later call plus the work only a first call does."""
    ms = 1000.0
    lines = [
        "| measure | first tools/list | later call p50 | work of a first call | first call (median) "
        "| allowed | target |",
        "|---|---|---|---|---|---|---|",
    ]
    all_ok = True
    for label, first in firsts.items():
        head, later, work, listed = (statistics.median(first[k]) for k in ("first", "later", "work", "list"))
        allowed = FIRST_CALL_FACTOR * later + work
        ok = head <= allowed
        all_ok = all_ok and ok
        lines.append(
            f"| first call (`preflight_status` {label}) | {listed * ms:.0f} ms | {later * ms:.1f} ms "
            f"| {work * ms:.1f} ms "
            f"| {head * ms:.1f} ms | {allowed * ms:.1f} ms | ≤ {FIRST_CALL_FACTOR}x later + work {'✓' if ok else '✗'} |"
        )
    return lines, all_ok


def first_rows(
    argv: list[str], project: Path, sessions: int, think: float
) -> dict[str, dict[str, list[float]]]:
    """The first call with no pause after tools/list (a 2025-11-25 session, and a 2026-07-28 one
    opened by `server/discover`), and after `think` seconds."""
    return {
        "right after tools/list": first_calls(argv, project, sessions, 0.0),
        "right after tools/list, 2026-07-28 session": first_calls(argv, project, sessions, 0.0, modern=True),
        f"{think:g} s after tools/list": first_calls(argv, project, sessions, think),
    }


def model_bytes(tool: dict[str, Any]) -> int:
    """What a model reads of one tool: name, description and input schema, as compact JSON."""
    read = {key: tool[key] for key in ("name", "description", "inputSchema") if key in tool}
    return len(json.dumps(read, separators=(",", ":"), ensure_ascii=False).encode())


def list_cost(tools: list[dict[str, Any]]) -> tuple[list[str], bool]:
    """Lines describing the size of the tool list, and whether it is within the model budget."""
    per_tool = sorted(((model_bytes(t), t["name"]) for t in tools), reverse=True)
    read = sum(size for size, _ in per_tool)
    full = len(json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False).encode())
    ok = read <= MODEL_BUDGET
    lines = [
        f"tools/list as a model reads it: {read:,} bytes for {len(tools)} tools "
        f"({read // max(1, len(tools)):,} a tool; budget {MODEL_BUDGET:,} {'✓' if ok else '✗'}); "
        f"in full (output schemas and annotations too): {full:,} bytes.",
        "",
        "| tool | bytes a model reads |",
        "|---|---|",
        *(f"| `{name}` | {size:,} |" for size, name in per_tool),
    ]
    return lines, ok


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=20, help="cold starts per server")
    parser.add_argument("--calls", type=int, default=200, help="round trips per measured request")
    parser.add_argument("--first-sessions", type=int, default=5, help="sessions timed for the first call")
    parser.add_argument(
        "--think", type=float, default=2.0, help="seconds between tools/list and the first call"
    )
    parser.add_argument(
        "--update-docs", action="store_true", help="rewrite the MCP section of docs/performance.md"
    )
    parser.add_argument("--first-only", action="store_true", help="measure the first-call rows alone")
    args = parser.parse_args()
    load = os.getloadavg()[0]  # before this run adds its own
    if args.first_only:
        return first_only(args, load)

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "bench"
        project.mkdir()
        (project / "e2e.yaml").write_text("project:\n  name: bench\n", encoding="utf-8")
        ours = [PREFLIGHT, "--project", str(project)]

        starts: dict[str, list[float]] = {"floor": [], "preflight": []}
        for _ in range(args.starts):
            for name, argv in (("floor", FLOOR), ("preflight", ours)):
                server = Server(argv, project)
                starts[name].append(server.handshake())
                server.close()

        floor, preflight, layer = (
            Server(FLOOR, project),
            Server(ours, project),
            Server([*LAYER, str(project)], project),
        )
        for server in (floor, preflight, layer):
            server.handshake()
        sizes = {}
        listed: list[dict[str, Any]] = []
        for name, server in (("floor", floor), ("preflight", preflight)):
            answer = server.request("tools/list")
            sizes[name] = server.last_size
            listed = answer["result"]["tools"]
        lists = round_trips(
            {"floor": (floor, "tools/list", None), "preflight": (preflight, "tools/list", None)}, args.calls
        )
        served = round_trips(
            {"floor": (floor, "tools/list", None), "preflight": (preflight, "tools/list", None)},
            args.calls,
            decode=False,
        )
        init = {"name": "preflight_init", "arguments": {}}
        cheap = round_trips(
            {
                "floor": (floor, "tools/call", {"name": "noop", "arguments": {}}),
                "preflight": (preflight, "tools/call", init),
                "layer": (layer, "tools/call", init),
            },
            args.calls,
        )
        for server in (floor, preflight, layer):
            server.close()
        at = first_project(tmp)
        first = first_rows([PREFLIGHT, "--project", str(at)], at, args.first_sessions, args.think)

    ms = 1000.0
    rows = [
        ("start", statistics.median(starts["floor"]), statistics.median(starts["preflight"]), None, None),
        ("tools/list", percentile(lists["floor"], 50), percentile(lists["preflight"], 50),
         percentile(lists["floor"], 99), percentile(lists["preflight"], 99)),
        ("tools/list (to last byte)", percentile(served["floor"], 50), percentile(served["preflight"], 50),
         percentile(served["floor"], 99), percentile(served["preflight"], 99)),
        ("cheap call", percentile(cheap["floor"], 50), percentile(cheap["preflight"], 50),
         percentile(cheap["floor"], 99), percentile(cheap["preflight"], 99)),
        ("no-op call (export layer only)", percentile(cheap["floor"], 50), percentile(cheap["layer"], 50),
         percentile(cheap["floor"], 99), percentile(cheap["layer"], 99)),
    ]  # fmt: skip
    table = [
        "| measure | floor p50 | preflight p50 | ratio | floor p99 | preflight p99 | target |",
        "|---|---|---|---|---|---|---|",
    ]
    failed = []
    for name, f50, p50, f99, p99 in rows:
        ratio = p50 / f50
        ok = ratio <= TARGETS[name]
        if not ok:
            failed.append(name)
        p99s = (
            (f"{f99 * ms:.2f} ms", f"{p99 * ms:.2f} ms")
            if f99 is not None and p99 is not None
            else ("–", "–")
        )
        digits = 0 if name == "start" else 2
        cells = [name, f"{f50 * ms:.{digits}f} ms", f"{p50 * ms:.{digits}f} ms", f"{ratio:.2f}x", *p99s]
        table.append("| " + " | ".join(cells) + f" | ≤ {TARGETS[name]}x {'✓' if ok else '✗'} |")
    table.append("")
    outputs = sum(len(json.dumps(t.get("outputSchema", {}), separators=(",", ":")).encode()) for t in listed)
    table.append(
        f"tools/list answers are {sizes['floor']:,} bytes (floor, one tool) and {sizes['preflight']:,} bytes "
        f"(preflight, {len(listed)} tools; {outputs:,} of them output schemas); the difference is "
        "encoding, piping and decoding that much JSON."
    )
    first_lines, first_ok = first_call_table(first)
    if not first_ok:
        failed.append("first call")
    table += ["", *first_lines]
    cost, within = list_cost(listed)
    if not within:
        failed.append("tools/list as a model reads it")
    table += ["", *cost]
    print("\n".join(table))
    print(f"\n1-minute load average when the run began: {load:.2f}")
    if args.update_docs:
        update_docs(table, args, load)
    return 1 if failed else 0


def first_only(args: argparse.Namespace, load: float) -> int:
    """Measure and print the first-call rows alone (exit 1 when one misses its target)."""
    with tempfile.TemporaryDirectory() as tmp:
        at = first_project(tmp)
        rows = first_rows([PREFLIGHT, "--project", str(at)], at, args.first_sessions, args.think)
        lines, ok = first_call_table(rows)
    print("\n".join(lines))
    print(f"\n1-minute load average when the run began: {load:.2f}")
    return 0 if ok else 1


def update_docs(table: list[str], args: argparse.Namespace, load: float) -> None:
    """Rewrite the "## MCP server" section of docs/performance.md (created when missing); its
    "### " subsections are kept after the new numbers. The MCP rows of the page's "Today" table
    are written by hand from this run, and the numbers they replace go to
    docs/performance-history.md with their date."""
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    section = "\n".join(
        [
            "## MCP server",
            "",
            "`scripts/bench/mcp.py` compares `preflight-mcp` with the floor, a minimal low-level `mcp` "
            "server with one no-op tool (`scripts/bench/mcp_floor.py`), in the same run, over real pipes "
            f"with raw JSON-RPC. Start is the median of {args.starts} cold starts (spawn until the "
            "`initialize` answer is read); tools/list and the cheap call (`preflight_init` on a loaded "
            f"project, against the floor's no-op) are {args.calls} sequential round trips on a running "
            "server. The last row serves a stand-in project whose `init` returns at once "
            "(`scripts/bench/mcp_layer.py`): the cost of the export layer alone.",
            "",
            *table,
            "",
            "What keeps tools/list near the floor: each output schema is an outline (the envelope, and "
            "the type of each top-level field of `data`; the whole result types are in "
            "`docs/schema/results.schema.json`), and the server answers from the list's JSON text, "
            "encoded once, in ASCII (one non-ASCII character makes a client decode the whole answer "
            "as wide text, about 1.5x slower). The model-read bytes stay within budget on their own.",
            "",
            "What keeps the cheap call near the floor: the operation log's writer thread collects a "
            "quarter of a second of calls and writes them in one transaction, instead of waking (and "
            "committing) next to every reply; an unchanged project costs a few `stat` calls on paths "
            "built once per load; a free project lock is taken without a trip through the event loop.",
            "",
            f"Measured on {time.strftime('%Y-%m-%d')} ({machine}; 1-minute load average {load:.2f} "
            "when the run began).",
            "",
        ]
    )
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else INTRO
    start = text.find("## MCP server")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        old = text[start : end + 1 if end != -1 else len(text)]
        notes = old.find("\n### ")  # notes on earlier changes, written by hand: kept
        if notes != -1:
            section += "\n" + old[notes + 1 :].rstrip("\n") + "\n"
        text = text[:start] + section + ("\n" + text[end + 1 :] if end != -1 else "")
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
