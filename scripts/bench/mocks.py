#!/usr/bin/env python3
"""Benchmark preflight's mock server against its floor and against WireMock, with wrk.

    scripts/bench/mocks.py [--duration 10] [--runs 3] [--connections 32] [--skip-wiremock]

Every server answers `GET /api/orders/<id>` (a path-parameter route) with the same JSON body and
runs in its own process; wrk (keep-alive, one thread, 32 connections, `--latency`) loads it from
another process. Each server gets a warm-up pass, then `--runs` measured passes; the table shows
the medians and the ratios to the floor.

- preflight: `MockHost` serving from its background thread, journal on (default 10,000 entries).
- floor: a bare Starlette app on uvicorn (httptools + uvloop) returning the same body.
- wiremock: WireMock standalone (npm package `wiremock`, run with Java), request journal on.
- preflight replayed: the route a recording of an upstream wrote (recorded at start, saved, read
  back), served like a hand-written one: the goal is at most 1.1x the time of `preflight`.
- preflight over TLS: the same route over HTTPS at a host name (`hosts:`), reported against the
  plain `preflight` row (no goal: it is what TLS costs here).
- preflight proxy / recording: a mock forwarding every request to an upstream of its own (a
  second floor server), plainly and while recording (every exchange kept): the goal is a
  recording proxy's request at most 1.3x a plain proxy's. Both load with at most 8 connections.

wrk is installed with `apt-get install -y wrk` and WireMock with npm into ~/.cache when missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

BODY = {
    "id": "ord_123",
    "amount": 100.0,
    "currency": "EUR",
    "status": "paid",
    "items": [{"sku": "A-1", "qty": 2}],
}
PATH = "/api/orders/ord_123"
TLS_HOST = "api.orders.test"  # the name the TLS row's mock stands in for
TLS_ROW = "preflight over TLS (hosts:)"
PROXY_ROWS = ("preflight proxy", "preflight recording (proxy + keep)")
CACHE = Path(os.environ.get("PREFLIGHT_BENCH_CACHE", Path.home() / ".cache" / "preflight-bench"))
WIREMOCK_VERSION = "3.13.2"


# -- servers (run as child processes of this script) ---------------------------------------------


def serve_preflight(port: int, templated: bool) -> None:
    import anyio
    import msgspec

    from preflight_sdk.config.model import MockConfig
    from preflight_sdk.mocks import MockHost

    body = dict(BODY, id="{{request.params.id}}") if templated else BODY
    config = msgspec.convert(
        {"port": port, "routes": [{"method": "GET", "path": "/api/orders/:id", "response": {"body": body}}]},
        MockConfig,
    )

    async def main() -> None:
        host = MockHost({"orders": config})
        await host.start()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await host.stop()

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass


def _serve_host(port: int, config: Any, *, record: str | None = None) -> None:
    """Serve one mock `orders` with `config` on `port` until SIGTERM (recording from `record`)."""
    import anyio

    from preflight_sdk.mocks import MockHost

    async def main() -> None:
        host = MockHost({"orders": config})
        await host.start()
        if record is not None:
            host.record("orders", record)
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await host.stop()

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass


def serve_proxy(port: int, upstream: int, *, recording: bool) -> None:
    """A mock with no route of its own whose `proxy:` is the floor; `recording`: it also records.

    The journal and the recorder keep every request of the measurement (no bound is reached),
    so the recording row pays for all it keeps."""
    import msgspec

    from preflight_sdk.config.model import MockConfig

    url = f"http://127.0.0.1:{upstream}"
    config = msgspec.convert({"port": port, "proxy": url, "journalLimit": 2_000_000}, MockConfig)
    _serve_host(port, config, record=url if recording else None)


def serve_replayed(port: int, upstream: int) -> None:
    """The route a recording of the floor wrote (recorded here first: three calls, saved, read
    back), served like any route."""
    import tempfile

    import anyio
    import httpx
    import msgspec

    from preflight_sdk.config.mocks.recorded import read_route_file
    from preflight_sdk.config.model import MockConfig
    from preflight_sdk.core.redaction import DEFAULT
    from preflight_sdk.mocks import MockHost
    from preflight_sdk.mocks.record import save_recording

    async def record() -> list[Any]:
        host = MockHost({"orders": msgspec.convert({"port": 0}, MockConfig)})
        await host.start()
        try:
            recorder = host.record("orders", f"http://127.0.0.1:{upstream}")
            async with httpx.AsyncClient(trust_env=False) as client:
                for _ in range(3):
                    (await client.get(host.url("orders") + PATH)).raise_for_status()
        finally:
            await host.stop()
        folder = Path(tempfile.mkdtemp(prefix="pf-bench-recorded-"))
        path = folder / "orders.yaml"
        save_recording(recorder, mock="orders", path=path, redactor=DEFAULT, at="2026-01-01T00:00:00Z")
        loaded, problems = read_route_file(path)
        assert loaded is not None and not problems, problems
        return list(loaded.routes)

    routes = anyio.run(record)
    _serve_host(port, MockConfig(port=port, routes=routes))


def serve_tls(port: int) -> None:
    """The `preflight` row's route, reached over HTTPS at a host name (`hosts:`), certificate and all."""
    import tempfile

    import anyio
    import msgspec

    from preflight_sdk.config.model import MockConfig
    from preflight_sdk.mocks import MockHost
    from preflight_sdk.mocks.tls import TlsIdentity, project_ca

    route = {"method": "GET", "path": "/api/orders/:id", "response": {"body": BODY}}
    config = msgspec.convert({"port": 0, "hosts": [TLS_HOST], "routes": [route]}, MockConfig)
    identity = TlsIdentity(project_ca(Path(tempfile.mkdtemp(prefix="pf-bench-tls-"))), [TLS_HOST])

    async def main() -> None:
        host = MockHost({"orders": config}, tls=identity, tls_binds=["127.0.0.1"], tls_port=port)
        await host.start()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await host.stop()

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass


def serve_floor(port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def order(request: Request) -> JSONResponse:
        return JSONResponse(BODY)

    app = Starlette(routes=[Route("/api/orders/{id}", order)])
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        http="httptools",
        loop="uvloop",
        log_level="warning",
        access_log=False,
        lifespan="off",
    )


# -- helpers -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(port: int, timeout: float = 60.0, *, tls: bool = False) -> None:
    import ssl

    deadline = time.monotonic() + timeout
    unverified = ssl._create_unverified_context()  # the TLS row's certificate is checked by its tests
    scheme, headers = ("https", {"Host": TLS_HOST}) if tls else ("http", {})
    while time.monotonic() < deadline:
        try:
            request = urllib.request.Request(f"{scheme}://127.0.0.1:{port}{PATH}", headers=headers)
            with urllib.request.urlopen(request, timeout=2, context=unverified if tls else None) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"server on port {port} did not answer within {timeout:.0f}s")


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    print("installing wrk (apt-get install -y wrk)", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "wrk"], check=True, stdout=subprocess.DEVNULL)
    found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is not available")
    return found


def ensure_wiremock() -> Path:
    prefix = CACHE / "wiremock"
    jars = sorted((prefix / "node_modules" / "wiremock" / "build").glob("wiremock-standalone-*.jar"))
    if not jars:
        print(f"installing wiremock@{WIREMOCK_VERSION} with npm into {prefix}", file=sys.stderr)
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(prefix), f"wiremock@{WIREMOCK_VERSION}"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        jars = sorted((prefix / "node_modules" / "wiremock" / "build").glob("wiremock-standalone-*.jar"))
    if not jars:
        raise SystemExit("the wiremock npm package holds no standalone jar")
    return jars[-1]


def start_wiremock(port: int, root: Path) -> subprocess.Popen[bytes]:
    jar = ensure_wiremock()
    mappings = root / "mappings"
    mappings.mkdir(parents=True, exist_ok=True)
    stub = {
        "request": {"method": "GET", "urlPathTemplate": "/api/orders/{id}"},
        "response": {"status": 200, "jsonBody": BODY, "headers": {"Content-Type": "application/json"}},
    }
    (mappings / "orders.json").write_text(json.dumps(stub))
    return subprocess.Popen(
        [
            "java",
            "-jar",
            str(jar),
            "--port",
            str(port),
            "--bind-address",
            "127.0.0.1",
            "--root-dir",
            str(root),
            "--disable-banner",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def run_wrk(
    wrk: str, port: int, duration: int, connections: int, *, tls: bool = False
) -> tuple[float, float, float]:
    """Return (requests/s, p50 ms, p99 ms) of one wrk pass (over HTTPS, at `TLS_HOST`, with `tls`)."""
    target = (
        [f"https://127.0.0.1:{port}{PATH}", "-H", f"Host: {TLS_HOST}"]
        if tls
        else [f"http://127.0.0.1:{port}{PATH}"]
    )
    done = subprocess.run(
        [wrk, "-t1", f"-c{connections}", f"-d{duration}s", "--latency", *target],
        capture_output=True,
        text=True,
        check=True,
    )
    out = done.stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    percentiles = {
        p: float(v) * _UNITS[u] for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    }
    return rps, percentiles["50"], percentiles["99"]


def summarise(name: str, runs: list[tuple[float, float, float]]) -> dict[str, float]:
    result = {
        "rps": statistics.median(r[0] for r in runs),
        "p50": statistics.median(r[1] for r in runs),
        "p99": statistics.median(r[2] for r in runs),
    }
    each = ", ".join(f"{r[0]:.0f}/{r[2]:.1f}ms" for r in runs)
    print(
        f"  {name:<22} {result['rps']:>9.0f} req/s  p50 {result['p50']:.2f} ms  p99 {result['p99']:.2f} ms"
        f"  (runs req/s/p99: {each})",
        file=sys.stderr,
    )
    return result


def child(mode: str, port: int, upstream: int | None = None) -> subprocess.Popen[bytes]:
    extra = ["--upstream-port", str(upstream)] if upstream is not None else []
    return subprocess.Popen([sys.executable, __file__, "--serve", mode, "--port", str(port), *extra])


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per measured wrk pass (>= 10)")
    parser.add_argument("--warmup", type=int, default=5, help="seconds of the warm-up pass")
    parser.add_argument("--runs", type=int, default=3, help="measured passes per server (>= 3)")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--skip-wiremock", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument(
        "--serve",
        choices=["preflight", "preflight-templated", "floor", "proxy", "recording", "replayed", "tls"],
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--upstream-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        if args.serve == "floor":
            serve_floor(args.port)
        elif args.serve in ("proxy", "recording"):
            serve_proxy(args.port, args.upstream_port, recording=args.serve == "recording")
        elif args.serve == "replayed":
            serve_replayed(args.port, args.upstream_port)
        elif args.serve == "tls":
            serve_tls(args.port)
        else:
            serve_preflight(args.port, templated=args.serve == "preflight-templated")
        return
    wrk = ensure_wrk()
    print(
        f"wrk -t1 -c{args.connections} -d{args.duration}s --latency, {args.runs} interleaved rounds, "
        f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
    )
    servers: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
    with tempfile.TemporaryDirectory(prefix="pf-bench-") as root:
        try:
            for name, mode in (
                ("floor (starlette)", "floor"),
                ("preflight", "preflight"),
                ("preflight (templated)", "preflight-templated"),
            ):
                port = free_port()
                servers[name] = (port, child(mode, port))
            # The proxy rows forward to an upstream of their own (a second floor), so the floor
            # row's server is not loaded by them; the replayed row records from it at start.
            upstream = free_port()
            servers["upstream (starlette)"] = (upstream, child("floor", upstream))
            wait_ready(upstream, timeout=120)
            for name, mode in (
                ("preflight replayed (recorded route)", "replayed"),
                ("preflight proxy", "proxy"),
                ("preflight recording (proxy + keep)", "recording"),
            ):
                port = free_port()
                servers[name] = (port, child(mode, port, upstream))
            port = free_port()
            servers[TLS_ROW] = (port, child("tls", port))
            if not args.skip_wiremock:
                port = free_port()
                servers[f"wiremock {WIREMOCK_VERSION}"] = (port, start_wiremock(port, Path(root)))
            for name, (port, _) in servers.items():
                wait_ready(port, timeout=120, tls=name == TLS_ROW)

            # Every server gets a warm-up pass (the JVM needs it most), then the measured passes
            # run in rounds, each round in a rotated order, so a noisy neighbour on the machine
            # weighs on every server alike.
            # The proxy rows wait on an upstream that shares the machine: fewer connections keep
            # their latency under wrk's 2 s timeout on a loaded machine (both rows alike).
            def connections(name: str) -> int:
                return min(args.connections, 8) if name in PROXY_ROWS else args.connections

            for name, (port, _) in servers.items():
                if name != "upstream (starlette)":
                    run_wrk(wrk, port, args.warmup, connections(name), tls=name == TLS_ROW)
            names = [name for name in servers if name != "upstream (starlette)"]
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
            for round_ in range(args.runs):
                for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                    runs[name].append(
                        run_wrk(wrk, servers[name][0], args.duration, connections(name), tls=name == TLS_ROW)
                    )
        finally:
            for _, process in servers.values():
                stop(process)
    results = {name: summarise(name, values) for name, values in runs.items()}
    floor = results["floor (starlette)"]["rps"]
    print()
    print("| server | req/s | × floor | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| {name} | {r['rps']:,.0f} | {r['rps'] / floor:.2f} | {r['p50']:.2f} | {r['p99']:.2f} |")
    ours = results["preflight"]
    replayed = results["preflight replayed (recorded route)"]
    proxy, recording = results["preflight proxy"], results["preflight recording (proxy + keep)"]
    print()
    print("| ratio (same run) | value | goal |")
    print("|---|---:|---:|")
    print(f"| recording / plain proxy, time per request | {proxy['rps'] / recording['rps']:.2f} | <= 1.30 |")
    print(
        f"| replayed recorded / hand-written route, time per request | {ours['rps'] / replayed['rps']:.2f} | <= 1.10 |"
    )
    secure = results[TLS_ROW]
    print(f"| HTTPS (hosts:) / HTTP, requests per second | {secure['rps'] / ours['rps']:.2f} | reported |")
    checks = [
        ("throughput >= 0.8 x floor", ours["rps"] >= 0.8 * floor),
        ("p99 <= 10 ms", ours["p99"] <= 10.0),
        ("a recording proxy's request <= 1.3 x a plain proxy's", recording["rps"] * 1.3 >= proxy["rps"]),
        ("a replayed recorded route <= 1.1 x a hand-written one", replayed["rps"] * 1.1 >= ours["rps"]),
    ]
    wiremock = next((r for n, r in results.items() if n.startswith("wiremock")), None)
    if wiremock is not None:
        checks.append(("throughput > wiremock", ours["rps"] > wiremock["rps"]))
    print()
    for label, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {label}")
    if args.json:
        print(json.dumps(results, indent=2))
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
