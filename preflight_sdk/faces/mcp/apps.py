"""MCP Apps (`io.modelcontextprotocol/ui`): the run tools show the run's page in hosts that render apps.

For a client that declares the extension (with the `text/html;profile=mcp-app` MIME type):

- the server advertises the `resources` capability and the extension (where the protocol version
  carries `extensions` in the server's capabilities);
- the run tools (`preflight_run`, `preflight_run_suite`, `preflight_get_run`,
  `preflight_resume_run`, `preflight_run_test`, `preflight_get_latest_run`) carry
  `_meta.ui.resourceUri` = `ui://preflight/run`, the view a host renders in a sandboxed iframe;
- `resources/templates/list` names the page of any run, `ui://preflight/runs/{runId}`;
- `resources/read` serves that view (the report's style and script, and a bridge that waits for
  the tool's result) and the page of any run, `ui://preflight/runs/<runId>` (optionally
  `?project=<path>` when the server has no default project), which the view reads through the host.

A client that does not declare it sees exactly what it saw before: the same `initialize` (or
`server/discover`) reply,
the same tool list, the same tool replies, and no resources (`resources/*` is "method not found").
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

import mcp_types as types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, client_supports_apps
from mcp.server.context import CallNext, HandlerResult

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.runs.report_html.page import asset

if TYPE_CHECKING:
    from .server import PreflightMcp

__all__ = ["RUNS_URI", "RUN_TOOLS", "VIEW_URI", "install_apps"]

VIEW_URI = "ui://preflight/run"
RUNS_URI = "ui://preflight/runs/"
RUN_TOOLS = frozenset(
    f"preflight_{name}"
    for name in ("run", "run_suite", "get_run", "resume_run", "run_test", "get_latest_run")
)
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for an unknown resource


@cache
def view_html() -> str:
    """The `ui://preflight/run` document: the report's style and script, and the host bridge."""
    bridge = (files(__package__) / "app.js").read_text(encoding="utf-8")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>preflight run</title>'
        f"<style>{asset('report.css')}body{{margin:0;background:#fff}}"
        "#pfa-status{font:13px system-ui,sans-serif;color:#59636e;padding:8px 12px}#pfa-status:empty{display:none}"
        '</style></head><body><div id="pfa-status">waiting for the host …</div><div id="pfa-report"></div>'
        f"<script>{asset('report.js')}</script><script>{bridge}</script></body></html>"
    )


def _apps_client(ctx: ServerRequestContext[Any]) -> bool:
    try:
        return client_supports_apps(ctx)
    except AttributeError:  # no session yet (a request before the handshake)
        return False


def _declares_apps(params: Any) -> bool:
    """Whether `initialize` params declare the extension with the app MIME type."""
    capabilities = (params or {}).get("capabilities") if isinstance(params, dict) else None
    capabilities = capabilities or {}
    settings = (capabilities.get("extensions") or {}).get(EXTENSION_ID)
    return isinstance(settings, dict) and APP_MIME_TYPE in (settings.get("mimeTypes") or [])


class McpApps:
    """The extension's parts, installed on one `PreflightMcp`."""

    def __init__(self, mcp: PreflightMcp) -> None:
        self.mcp = mcp

    async def middleware(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """Show the extension to the clients that declare it, and only to them."""
        answer = await call_next(ctx)
        if not isinstance(answer, dict):
            return answer
        handshake = ctx.method in ("initialize", "server/discover")
        if handshake and not (_declares_apps(ctx.params) or _apps_client(ctx)):
            capabilities = dict(answer.get("capabilities") or {})
            capabilities.pop("resources", None)
            extensions = {
                k: v for k, v in (capabilities.pop("extensions", None) or {}).items() if k != EXTENSION_ID
            }
            if extensions:
                capabilities["extensions"] = extensions
            return {**answer, "capabilities": capabilities}
        if ctx.method == "tools/list" and _apps_client(ctx):
            tools = [
                {**tool, "_meta": {**(tool.get("_meta") or {}), "ui": {"resourceUri": VIEW_URI}}}
                if tool.get("name") in RUN_TOOLS
                else tool
                for tool in answer.get("tools", [])
            ]
            return {**answer, "tools": tools}
        return answer

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        if not _apps_client(ctx):
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found")
        view = types.Resource(
            uri=VIEW_URI,
            name="preflight run",
            title="A preflight run",
            description="The page of a run: verdict, failures with their evidence, timeline, every case.",
            mime_type=APP_MIME_TYPE,
        )
        return types.ListResourcesResult(resources=[view])

    async def list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """The page of any run, as a URI template (with its project, for a server without one)."""
        if not _apps_client(ctx):
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found")
        query = "" if self.mcp.pool.default_path is not None else "{?project}"
        page = types.ResourceTemplate(
            uri_template=RUNS_URI + "{runId}" + query,
            name="preflight run page",
            title="The page of a preflight run",
            description="A run's report.html by its runId: verdict, failures with their evidence, timeline, "
            "every case." + (" `project` is the project's path." if query else ""),
            mime_type=APP_MIME_TYPE,
        )
        return types.ListResourceTemplatesResult(resource_templates=[page])

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if not _apps_client(ctx):
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found")
        uri = str(params.uri)
        if uri == VIEW_URI:
            text = view_html()
        elif uri.startswith(RUNS_URI):
            text = await self._run_page(uri)
        else:
            raise MCPError(
                RESOURCE_NOT_FOUND, f"no resource {uri!r}: this server has {VIEW_URI} and {RUNS_URI}<runId>"
            )
        meta = {"ui": {"prefersBorder": True}}
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=text, _meta=meta)]
        )

    async def _run_page(self, uri: str) -> str:
        from preflight_sdk.runs.report import report_of

        parts = urlsplit(uri)
        run_id = unquote(parts.path.rsplit("/", 1)[-1])
        given = parse_qs(parts.query).get("project")
        project_path = given[0] if given else None
        try:
            project = self.mcp.pool.get(project_path)
            page, _ = await report_of(project._runs, run_id)
        except PreflightError as exc:
            raise MCPError(RESOURCE_NOT_FOUND, f"[{exc.code}] {exc.message}") from exc
        return page


def install_apps(mcp: PreflightMcp) -> McpApps:
    """Add MCP Apps to a `PreflightMcp` (see the module docstring); returns the installed parts."""
    apps = McpApps(mcp)
    server = mcp.server
    server.extensions[EXTENSION_ID] = {}
    server.add_request_handler("resources/list", types.PaginatedRequestParams, apps.list_resources)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, apps.read_resource)
    server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, apps.list_templates)
    # Before the tool-list cache: the cache keeps one answer, this decides what each client sees.
    cached = mcp.list_cache.middleware
    at = next((i for i, m in enumerate(server.middleware) if m == cached), len(server.middleware))
    server.middleware.insert(at, apps.middleware)
    return apps
