"""MCP Tasks on preflight-mcp: a long tool call answered with a task that any later server can follow.

Two generations are served, chosen per request by the protocol version in use:

- **2025-11-25** (the core tasks of that revision; what TypeScript SDK 1.x clients negotiate): the
  client puts `task: {ttl}` in the `tools/call` params and gets `{task}` back; `tasks/get`,
  `tasks/result` (waits for the end, then the tool's reply), `tasks/list` and `tasks/cancel`.
  The server advertises `capabilities.tasks` at `initialize` and `execution.taskSupport:
  "optional"` on the long tools.
- **2026-07-28** (the extension `io.modelcontextprotocol/tasks`): a client that declares the
  extension in a request's capabilities gets `resultType: "task"` for a long tool; `tasks/get`
  (with the tool's reply once completed), `tasks/update` and `tasks/cancel`.

Both push a task's changes to the clients that ask (`notify`): `notifications/tasks` on a
2026-07-28 `subscriptions/listen` stream naming task ids, `notifications/tasks/status` to the
2025-11-25 session that asked for the task.

The methods and the 2026-07-28 `tools/call` interceptor are an `mcp.server.extension.Extension`;
the 2025-11-25 answers go through a server middleware, because at that revision the SDK checks a
`tools/call` result against `CallToolResult` and a task answer is not one. A client that declares
neither gets exactly the plain calls. See `state` for how a run maps onto a task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp import MCPError, types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.extension import Extension, MethodBinding, compose_tool_call_handler
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, ValidationError

from .notify import TaskListen, TaskNotifier
from .state import POLL_INTERVAL_MS, TTL_MS, TaskView
from .support import TaskSupport

if TYPE_CHECKING:
    from ..server import PreflightMcp

__all__ = ["TASKS_EXTENSION", "install_tasks"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
# The 2025-11-25 capability: tools/call may be a task, tasks can be listed and cancelled.
LEGACY_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


class TaskIdParams(types.RequestParams):
    """The params of tasks/get, tasks/result, tasks/cancel and tasks/update: `taskId` (and more)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str


class LegacyTasks:
    """The 2025-11-25 generation's answers that a `tools/call` handler cannot give (see the module doc)."""

    def __init__(self, support: TaskSupport, notifier: TaskNotifier) -> None:
        self.support = support
        self.notifier = notifier

    async def middleware(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """Advertise tasks at `initialize`; answer a `tools/call` that asks for a task with one."""
        if ctx.method == "initialize":
            result = await call_next(ctx)
            if isinstance(result, dict) and result.get("protocolVersion") == "2025-11-25":
                capabilities = dict(result.get("capabilities") or {})
                capabilities["tasks"] = LEGACY_CAPABILITY
                result = {**result, "capabilities": capabilities}
            return result
        params = ctx.params or {}
        if (
            ctx.method == "tools/call"
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and params.get("task") is not None
            and self.support.takes(str(params.get("name")))
        ):
            try:
                typed = types.CallToolRequestParams.model_validate(params, by_name=False)
            except ValidationError:
                return await call_next(ctx)  # the SDK answers malformed params as usual
            started = await self.support.start(ctx, typed)
            self.notifier.tell_session(ctx, started, legacy_task)  # notifications/tasks/status
            return {"task": legacy_task(started)}
        return await call_next(ctx)


class TasksExtension(Extension):
    """The tasks methods (both generations) and the 2026-07-28 `tools/call` interceptor."""

    identifier = TASKS_EXTENSION

    def __init__(self, support: TaskSupport) -> None:
        self.support = support

    def methods(self) -> Sequence[MethodBinding]:
        """tasks/get, tasks/result, tasks/list, tasks/cancel and tasks/update."""
        return (
            MethodBinding("tasks/get", TaskIdParams, self._get),
            MethodBinding("tasks/result", TaskIdParams, self._result),
            MethodBinding("tasks/list", types.PaginatedRequestParams, self._list),
            MethodBinding("tasks/cancel", TaskIdParams, self._cancel),
            MethodBinding("tasks/update", TaskIdParams, self._update),
        )

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any], call_next: CallNext
    ) -> HandlerResult:
        """A long tool, for a 2026-07-28 client that declared the extension, answers with a task."""
        if (
            ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            and _declares_tasks(ctx)
            and self.support.takes(params.name)
        ):
            view = await self.support.start(ctx, params)
            if view.finished and view.result is not None and self.support.is_call(view.task_id):
                return view.result  # it ended before any run began: the plain reply says it all
            return {"resultType": "task", **modern_task(view)}
        return await call_next(ctx)

    async def _get(self, ctx: ServerRequestContext[Any], params: TaskIdParams) -> dict[str, Any]:
        view = await self.support.view(params.task_id)
        if _modern(ctx):
            return {"resultType": "complete", **modern_task(view, detailed=True)}
        return legacy_task(view)

    async def _result(self, ctx: ServerRequestContext[Any], params: TaskIdParams) -> dict[str, Any]:
        if _modern(ctx):
            raise MCPError(
                types.METHOD_NOT_FOUND, "Method not found: tasks/result (tasks/get carries the result)"
            )
        view = await self.support.outcome(params.task_id)
        if view.error is not None:
            raise MCPError(view.error["code"], view.error["message"], data=view.error.get("data"))
        if view.result is None:
            raise MCPError(types.INVALID_PARAMS, f"Task {view.task_id} was cancelled: it has no result")
        reply = view.result.model_dump(by_alias=True, mode="json", exclude_none=True)
        reply["_meta"] = {**(reply.get("_meta") or {}), RELATED_TASK: {"taskId": view.task_id}}
        return reply

    async def _list(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        if _modern(ctx):
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found: tasks/list")
        views, cursor = await self.support.listing(params.cursor)
        listed: dict[str, Any] = {"tasks": [legacy_task(view) for view in views]}
        if cursor is not None:
            listed["nextCursor"] = cursor
        return listed

    async def _cancel(self, ctx: ServerRequestContext[Any], params: TaskIdParams) -> dict[str, Any]:
        before = await self.support.view(params.task_id)
        if _modern(ctx):
            if not before.finished:
                await self.support.cancel(params.task_id)
            return {"resultType": "complete"}
        if before.finished:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Task {params.task_id} already ended ({before.status}): it cannot be cancelled",
            )
        return legacy_task(await self.support.cancel(params.task_id))

    async def _update(self, ctx: ServerRequestContext[Any], params: TaskIdParams) -> dict[str, Any]:
        await self.support.view(params.task_id)  # preflight's tasks never ask for input: an ack
        return {"resultType": "complete"} if _modern(ctx) else {}


def install_tasks(app: PreflightMcp) -> TaskSupport:
    """Serve tasks on `app`'s low-level server: the extension's methods, interceptor and capability."""
    support = TaskSupport(app)
    extension = TasksExtension(support)
    server = app.server
    for method in extension.methods():
        server.add_request_handler(method.method, method.params_type, method.handler)
    handler = compose_tool_call_handler([extension], app.call_tool)
    server.add_request_handler("tools/call", types.CallToolRequestParams, handler)
    server.extensions[extension.identifier] = extension.settings()
    notifier = TaskNotifier(support)
    listen = TaskListen(notifier, lambda view: modern_task(view, detailed=True))
    server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, listen)
    server.middleware.append(LegacyTasks(support, notifier).middleware)
    return support


# -- wire forms -------------------------------------------------------------------------------------


def _task(view: TaskView, ttl_key: str, poll_key: str) -> dict[str, Any]:
    """The fields both revisions share; they name the two durations differently."""
    task: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "createdAt": view.created_at,
        "lastUpdatedAt": view.last_updated_at,
        ttl_key: TTL_MS,
        poll_key: POLL_INTERVAL_MS,
    }
    if view.status_message:
        task["statusMessage"] = view.status_message
    return task


def legacy_task(view: TaskView) -> dict[str, Any]:
    """The 2025-11-25 `Task`."""
    return _task(view, "ttl", "pollInterval")


def modern_task(view: TaskView, *, detailed: bool = False) -> dict[str, Any]:
    """The 2026-07-28 task; `detailed` adds the result (completed) or the error (failed)."""
    task = _task(view, "ttlMs", "pollIntervalMs")
    if detailed and view.status == "completed" and view.result is not None:
        task["result"] = view.result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if detailed and view.status == "failed" and view.error is not None:
        task["error"] = view.error
    return task


def _modern(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _declares_tasks(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    declared = capabilities.extensions if capabilities is not None else None
    return bool(declared) and TASKS_EXTENSION in (declared or {})
