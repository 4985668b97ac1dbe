"""The MCP Apps view in a real headless Chromium, inside a host page that speaks the apps bridge.

A real `preflight-mcp` runs a failing suite for a client that declares the extension; the view
(`ui://preflight/run`) and the run's page are read from it. Then a host page puts the view in a
sandboxed iframe and plays the host's side of the bridge (JSON-RPC over postMessage): it answers
`ui/initialize`, sends the tool's input and result once the view is initialized, and answers the
view's `resources/read` with what the server served for that URI. The view must ask for the page
of the run named in the result, show it (the failure visible, its script running), report its
size, and log no error.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise
from mcp.client.stdio import stdio_client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from support.browser import CHROMIUM_ARGS, REPO, ensure_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")

HOST = """<!DOCTYPE html><html><body>
<iframe id="view" sandbox="allow-scripts" style="width:1200px;height:900px;border:0"></iframe>
<script>
const served = %(served)s;
const toolResult = %(result)s;
window.seen = {requests: [], notifications: []};
const frame = document.getElementById("view");
function post(message) { frame.contentWindow.postMessage(message, "*"); }
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  if (m.id !== undefined && m.method) {
    window.seen.requests.push(m);
    if (m.method === "ui/initialize") {
      post({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26", hostInfo: {name: "test host", version: "1"},
            hostCapabilities: {serverResources: {}}, hostContext: {displayMode: "inline"}}});
    } else if (m.method === "resources/read") {
      const text = served[m.params.uri];
      if (text === undefined) post({jsonrpc: "2.0", id: m.id, error: {code: -32002, message: "not found"}});
      else post({jsonrpc: "2.0", id: m.id, result: {contents: [{uri: m.params.uri, mimeType: "%(mime)s", text}]}});
    }
  } else if (m.method) {
    window.seen.notifications.push(m);
    if (m.method === "ui/notifications/initialized") {
      post({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: {}}});
      post({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: toolResult});
    }
  }
});
frame.srcdoc = served["ui://preflight/run"];
</script></body></html>"""


def _serve(project: Path) -> tuple[dict[str, str], dict[str, Any], str]:
    """The view, the run's page (by URI) and the run tool's result, from a real server."""

    async def fetch() -> tuple[dict[str, str], dict[str, Any], str]:
        params = StdioServerParameters(
            command=LAUNCHER, args=["--project", str(project)], env=dict(os.environ)
        )
        apps = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
        with anyio.fail_after(90), (project / "server.log").open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), extensions=[apps]) as client:  # type: ignore[arg-type]
                run = await client.call_tool("preflight_run", {})
                envelope = run.structured_content or {}
                run_id = envelope["runId"]
                uri = f"ui://preflight/runs/{run_id}"
                served = {}
                for name in ("ui://preflight/run", uri):
                    [content] = (await client.read_resource(name)).contents
                    served[name] = content.text  # type: ignore[union-attr]
        result = {
            "content": [c.model_dump(by_alias=True) for c in run.content],
            "structuredContent": envelope,
        }
        return served, result, run_id

    return anyio.run(fetch)


def test_the_view_shows_the_run_a_host_hands_it(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        textwrap.dedent(
            f"""\
            project: {{name: view}}
            tests:
              suites:
                - id: smoke
                  runner: shell
                  command: [{json.dumps(sys.executable)}, -c, "print('checkout broke: HTTP 502'); exit 1"]
            """
        ),
        encoding="utf-8",
    )
    served, result, run_id = _serve(tmp_path)
    host = tmp_path / "host.html"
    # Inside the host's <script>, "</" would end it: JSON allows the escaped form.
    data = {k: json.dumps(v).replace("</", "<\\/") for k, v in (("served", served), ("result", result))}
    host.write_text(HOST % {**data, "mime": APP_MIME_TYPE}, encoding="utf-8")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(ensure_chromium()), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1240, "height": 940})
            context.set_offline(True)
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(host.as_uri())
            view = page.frame_locator("#view")
            report = view.locator(f".pfr#pfr-run-{run_id}[data-pfr-ready]")
            report.wait_for(timeout=20_000)
            failure = view.locator(".pfr-failure")
            assert failure.count() == 1 and failure.is_visible()
            assert "checkout broke: HTTP 502" in failure.inner_text()
            assert view.locator(".pfr-filters").is_visible()  # the view's own script made it interactive
            seen = page.evaluate("window.seen")
            reads = [r["params"]["uri"] for r in seen["requests"] if r["method"] == "resources/read"]
            assert reads == [f"ui://preflight/runs/{run_id}"]
            assert seen["requests"][0]["method"] == "ui/initialize"
            sizes = [n for n in seen["notifications"] if n["method"] == "ui/notifications/size-changed"]
            assert sizes and sizes[-1]["params"]["height"] > 400
            shots = REPO / "test-artifacts" / "report"
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "mcp-app-view.png"))
        finally:
            browser.close()
    assert errors == []
