#!/usr/bin/env python3
"""Benchmark browser steps: a case's cost over Playwright doing the same steps alone.

    scripts/bench/browser.py [--cases 20] [--rounds 3]

A local page (a form whose button posts to an API of the same server and shows the answer) is
served on 127.0.0.1. Both sides drive Debian's Chromium through Playwright for Python, one browser
for all their cases, a fresh context per case, and do the same steps: open the page, fill a
field, click the button, wait for "Order confirmed".

- baseline: Playwright alone, the steps in a loop (new context, page, goto, fill, click, wait for
  the text, close), each case timed;
- preflight: a test-only project of `--cases` browser cases doing those steps, run by
  `run_suite` in this process; each case's own duration (what the run reports) is taken, with the
  Playwright trace preflight records while a case runs (kept only on failure), the page's
  console, request and navigation watch, and the expectation's check.

The first case of each side (the browser's start) is left out; the medians of the rest are
compared, round after round (the two sides alternate). Goals: the ratio at most 1.3x, and each
preflight run starting exactly one browser for its cases.
Prints a table; exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from support.browser import CHROMIUM_ARGS, ensure_chromium  # noqa: E402

RATIO_GOAL = 1.3
PAGE = b"""<!doctype html><html><head><title>Shop</title></head><body>
<h1>Welcome</h1><form id="order"><input id="sku" value=""><button id="place" type="submit">Place</button></form>
<script>
document.getElementById('order').addEventListener('submit', async (e) => {
  e.preventDefault();
  const reply = await fetch('/api/orders', {method: 'POST', body: document.getElementById('sku').value});
  const order = await reply.json();
  const done = document.createElement('p');
  done.textContent = 'Order ' + order.id + ' confirmed';
  document.body.appendChild(done);
});
</script></body></html>"""


class _Shop(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._answer(200, PAGE, "text/html")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(201, b'{"id": "ord_1"}', "application/json")

    def _answer(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def shop() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Shop)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def playwright_alone(base: str, cases: int) -> list[float]:
    """Seconds per case, Playwright doing the steps itself."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(ensure_chromium()), args=[a for a in CHROMIUM_ARGS if a != "--headless"]
        )
        times = []
        for _ in range(cases):
            began = time.perf_counter()
            context = await browser.new_context(viewport={"width": 1280, "height": 720})
            page = await context.new_page()
            await page.goto(f"{base}/index.html")
            await page.locator("#sku").first.fill("book")
            await page.locator("#place").first.click()
            await page.get_by_text("confirmed").wait_for()
            await context.close()
            times.append(time.perf_counter() - began)
        await browser.close()
    return times


def project(root: Path, base: str, cases: int) -> Path:
    root.mkdir(parents=True)
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: bench}\ntests:\n  suites:\n    - {id: web, file: web.yaml}\n'
    )
    (root / ".env").write_text(f"BASE_URL={base}\n")
    steps = "\n".join(
        f"  - name: order {n}\n    browser:\n      goto: /index.html\n"
        "      actions: [{fill: {selector: '#sku', value: book}}, {click: '#place'}]\n"
        "    expect: {text: confirmed}"
        for n in range(cases)
    )
    (root / "web.yaml").write_text(f"name: web\ncases:\n{steps}\n")
    return root


async def through_preflight(root: Path) -> tuple[list[float], int]:
    """Seconds per case as the run reports them, and how many browsers the run started."""
    from preflight_sdk import Project
    from preflight_sdk.suites.browser import host

    launches = 0
    real = host.BrowserHost._launch

    async def counted(self: host.BrowserHost) -> Any:
        nonlocal launches
        launches += 1
        return await real(self)

    host.BrowserHost._launch = counted  # type: ignore[method-assign]
    try:
        async with Project.open(root) as shop_project:
            result = await shop_project.run_suite("web")
    finally:
        host.BrowserHost._launch = real  # type: ignore[method-assign]
    cases = [c for s in result.suites for c in s.cases]
    failed = [c.id for c in cases if c.status != "passed"]
    if failed:
        raise SystemExit(f"browser cases failed: {failed}: {result.summary}")
    return [c.duration / 1000 for c in cases], launches


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    baseline: list[float] = []
    ours: list[float] = []
    launches: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, shop() as base:
        for number in range(args.rounds):
            alone = asyncio.run(playwright_alone(base, args.cases))
            root = project(Path(tmp) / f"run{number}", base, args.cases)
            each, started = asyncio.run(through_preflight(root))
            baseline.append(statistics.median(alone[1:]))
            ours.append(statistics.median(each[1:]))
            launches.append(started)
    alone_ms, ours_ms = statistics.median(baseline) * 1000, statistics.median(ours) * 1000
    ratio = ours_ms / alone_ms
    ratio_ok = ratio <= RATIO_GOAL
    reuse_ok = launches == [1] * args.rounds
    print(
        f"{'cases':>6} {'rounds':>7} {'playwright alone':>17} {'preflight case':>15} {'ratio':>6} {'browsers':>9}  goal"
    )
    print(
        f"{args.cases:>6} {args.rounds:>7} {alone_ms:>15.0f}ms {ours_ms:>13.0f}ms {ratio:>5.2f}x "
        f"{'/'.join(map(str, launches)):>9}  ratio <= {RATIO_GOAL}: {'met' if ratio_ok else 'MISSED'}; "
        f"one browser per run: {'met' if reuse_ok else 'MISSED'}"
    )
    for number, (a, b) in enumerate(zip(baseline, ours, strict=True), start=1):
        print(f"  round {number}: {a * 1000:.0f}ms alone, {b * 1000:.0f}ms in preflight ({b / a:.2f}x)")
    return 0 if ratio_ok and reuse_ok else 1


if __name__ == "__main__":
    sys.exit(main())
