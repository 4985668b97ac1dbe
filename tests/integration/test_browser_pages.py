"""Browser steps in a real headless Chromium, against pages served by a real HTTP server (no Docker).

A test-only project (BASE_URL) whose pages a local `http.server` serves: what a passing case
records (the pages it opened), what a failing one carries (a screenshot that is a PNG, a trace
Playwright wrote, the DOM around the selector, the console error, the failed request), that a run
starts one browser however many cases it has, that a trace keeps no secret, and that a missing
browser is a coded failure naming what to install.
"""

from __future__ import annotations

import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.browser import ensure_chromium

from preflight_sdk import Project
from preflight_sdk.core.results.run import CaseResult, RunResult
from preflight_sdk.suites.browser import host as browser_host

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

TOKEN = "tok-7f3a9c21d4e8b605"  # a secret value: the suite's env declares it (API_TOKEN)
TYPED = "hunter2-typed-in"  # typed into a password field

PAGES = {
    "/index.html": f"""<!doctype html><html><head><title>Shop</title></head><body>
<h1>Welcome</h1>
<form id="f" novalidate><input id="password" type="password"><input id="sku" value="book">
<button id="go" type="submit">Go</button></form><p id="done" hidden>Saved</p>
<a href="/about.html">About</a>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {{
  e.preventDefault();
  const r = await fetch('/api/save', {{method: 'POST', headers: {{Authorization: 'Bearer {TOKEN}'}},
                                      body: document.getElementById('sku').value}});
  if (!r.ok) throw new Error('save failed: ' + r.status);
  document.getElementById('done').hidden = false;
}});
</script></body></html>""",
    "/about.html": "<!doctype html><html><head><title>About</title></head><body><h2>About us</h2></body></html>",
}


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        page = PAGES.get(self.path)
        self._answer(200 if page else 404, (page or "not found").encode(), "text/html")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        sku = self.rfile.read(length).decode()
        status = 204 if sku == "book" else 500  # any other product crashes the "API"
        self._answer(status, b"", "text/plain")

    def _answer(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    ensure_chromium()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


CASES = """
name: pages
cases:
  - name: home
    browser: {goto: /index.html}
    expect: {status: 200, title: Shop, text: Welcome, elements: {"#go": {text: Go, enabled: true}}, consoleErrors: 0}
  - name: the about link
    browser: {goto: /index.html, actions: [{click: "text=About"}]}
    expect: {url: /about.html, text: About us}
  - name: saving a lamp
    browser:
      goto: /index.html
      expectTimeout: 1s
      actions:
        - fill: {selector: "#password", value: "%(typed)s"}
        - fill: {selector: "#sku", value: lamp}
        - click: "#go"
    expect: {elements: {"#done": {visible: true}}}
  - name: a button that is not there
    browser: {goto: /index.html, timeout: 1s, actions: [{click: "#missing"}]}
"""


def _project(root: Path, base_url: str, cases: str = CASES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: pages}\ntests:\n  suites:\n'
        f"    - {{id: pages, file: pages.yaml, env: {{API_TOKEN: {TOKEN}}}}}\n"
    )
    (root / ".env").write_text(f"BASE_URL={base_url}\n")
    (root / "pages.yaml").write_text(cases % {"typed": TYPED} if "%(typed)s" in cases else cases)
    return root


def _cases(result: RunResult) -> dict[str, CaseResult]:
    return {case.name: case for suite in result.suites for case in suite.cases}


@pytest.fixture(scope="module")
def ran(site: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, RunResult, list[int]]]:
    root = _project(tmp_path_factory.mktemp("pages") / "project", site)
    launches: list[int] = []
    real = browser_host.BrowserHost._launch

    async def counted(self: browser_host.BrowserHost) -> Any:
        launches.append(1)
        return await real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(browser_host.BrowserHost, "_launch", counted)
        import anyio

        async def go() -> RunResult:
            async with Project.open(root) as project:
                return await project.run()

        result = anyio.run(go)
    yield root, result, launches


def test_passing_cases_record_the_pages_they_opened_and_one_browser_serves_the_run(
    ran: tuple[Path, RunResult, list[int]], site: str
) -> None:
    _, result, launches = ran
    cases = _cases(result)
    assert [c.status for c in cases.values()] == ["passed", "passed", "failed", "failed"]
    assert cases["home"].pages == [f"{site}/index.html"]
    assert cases["the about link"].pages == [f"{site}/index.html", f"{site}/about.html"]
    assert cases["home"].failure is None
    assert launches == [1]


def test_a_failing_case_carries_its_page_the_console_error_and_the_failed_request(
    ran: tuple[Path, RunResult, list[int]],
) -> None:
    root, result, _ = ran
    failure = _cases(result)["saving a lamp"].failure
    assert failure is not None and failure.browser is not None
    evidence = failure.browser
    assert failure.summary == (
        "/index.html: elements[#done].visible: expected to equal true, got false; the page logged "
        '"Error: save failed: 500"; POST /api/save answered 500'
    )
    assert evidence.step == "expect elements[#done].visible" and evidence.selector == "#done"
    assert evidence.dom is not None and '<p id="done" hidden="">Saved</p>' in evidence.dom
    assert [(m.type, m.text) for m in evidence.console] == [
        (
            "error",
            "Failed to load resource: the server responded with a status of 500 (Internal Server Error)",
        ),
        ("pageerror", "Error: save failed: 500"),
    ]
    assert [
        (r.method, r.url.rsplit("/", 2)[-2:], r.status, r.resource_type) for r in evidence.failed_requests
    ] == [("POST", ["api", "save"], 500, "fetch")]
    folder = root / ".preflight" / "runs" / result.run_id
    shot = folder / (evidence.screenshot or "")
    assert evidence.screenshot == "cases/pages.saving-a-lamp/screenshot.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with zipfile.ZipFile(folder / (evidence.trace or "")) as trace:
        names = trace.namelist()
        assert "trace.trace" in names and "trace.network" in names
        actions = [json.loads(line) for line in trace.read("trace.trace").decode().splitlines()]
    assert any(event.get("method") == "click" for event in actions)
    listed = {a.name: a for a in result.artifacts}
    assert listed[evidence.screenshot].content_type == "image/png"
    assert listed[evidence.trace or ""].size == (folder / (evidence.trace or "")).stat().st_size


def test_the_trace_keeps_no_secret_header_value_or_typed_password(
    ran: tuple[Path, RunResult, list[int]],
) -> None:
    root, result, _ = ran
    evidence = _cases(result)["saving a lamp"].failure
    assert evidence is not None and evidence.browser is not None
    raw = (root / ".preflight" / "runs" / result.run_id / (evidence.browser.trace or "")).read_bytes()
    with zipfile.ZipFile(
        root / ".preflight" / "runs" / result.run_id / (evidence.browser.trace or "")
    ) as trace:
        text = "".join(trace.read(name).decode(errors="replace") for name in trace.namelist())
    assert TOKEN not in text
    assert TYPED not in text
    assert TOKEN.encode() not in raw
    assert "[redacted]" in text  # the Authorization header, the typed value


def test_an_action_on_nothing_says_no_element_matches_and_points_at_the_selector(
    ran: tuple[Path, RunResult, list[int]],
) -> None:
    _, result, _ = ran
    failure = _cases(result)["a button that is not there"].failure
    assert failure is not None and failure.browser is not None
    assert failure.error == "click #missing: timed out after 1s: no element matches `#missing`"
    assert failure.suggested_fix is not None and "`#missing`" in failure.suggested_fix
    assert failure.browser.dom is not None and failure.browser.dom.startswith("<body>")


async def test_without_a_browser_each_case_fails_with_a_code_naming_what_to_install(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_CHROMIUM", str(tmp_path / "no-such-chromium"))
    cases = "name: pages\ncases:\n  - {name: a, browser: {goto: /index.html}}\n  - {name: b, browser: {goto: /index.html}}\n"
    root = _project(tmp_path / "project", site, cases)
    async with Project.open(root) as project:
        result = await project.run()
    failures = [c.failure for c in _cases(result).values()]
    assert all(
        f is not None and f.error.startswith("[BROWSER_UNAVAILABLE] PREFLIGHT_CHROMIUM is") for f in failures
    )
    assert failures[0] is not None and "pip install" not in failures[0].error
    assert failures[0].suggested_fix is not None and "apt-get install chromium" in failures[0].suggested_fix
