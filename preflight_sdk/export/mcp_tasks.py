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

The methods and the 2026-07-28 `tools/call` interceptor are an `mcp.server.extension.Extension`;
the 2025-11-25 answers go through a server middleware, because at that revision the SDK checks a
`tools/call` result against `CallToolResult` and a task answer is not one. A client that declares
neither gets exactly the plain calls. See `task_state` for how a run maps onto a task.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from mcp import MCPError, types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.extension import Extension, MethodBinding, compose_tool_call_handler
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict

from ..background import Background
from ..errors import PreflightError
from ..store.ids import new_run_id
from .task_files import load_task, save_task, tasks_folder
from .task_state import (
    POLL_INTERVAL_MS,
    RUN_OPERATIONS,
    TASK_OPERATIONS,
    TTL_MS,
    TaskView,
    created_at,
    now_text,
    view_of_run,
)

if TYPE_CHECKING:
    from .mcp_server import PreflightMcp

__all__ = ["TASKS_EXTENSION", "TaskSupport", "install_tasks"]

logger = logging.getLogger("preflight_sdk.mcp")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
# The 2025-11-25 capability: tools/call may be a task, tasks can be listed and cancelled.
LEGACY_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
# How long one `tasks/result` poll of the run store waits before looking again.
RESULT_POLL = "20s"
LIST_PAGE = 50
# Call tasks live in the server's memory: the newest this many finished ones are kept.
KEPT_CALLS = 100


class TaskIdParams(types.RequestParams):
    """The params of tasks/get, tasks/result, tasks/cancel and tasks/update: `taskId` (and more)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str


class _CallTask:
    """A task for a call that records no run (verify), or that ended before a run began."""

    def __init__(self, task_id: str, folder: Path | None = None) -> None:
        self.folder = folder  # where it is written for later servers (None: outside a project)
        now = now_text()
        self.view = TaskView(
            task_id=task_id, status="working", status_message="working", created_at=now, last_updated_at=now
        )
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()

    def finish(self, reply: types.CallToolResult) -> None:
        self.view.status, self.view.result = "completed", reply
        self.view.status_message = "failed: see the result" if reply.is_error else "completed"
        self.view.last_updated_at = now_text()
        self.done.set()

    def cancelled(self) -> None:
        self.view.status, self.view.status_message = "cancelled", "cancelled"
        self.view.last_updated_at = now_text()
        self.done.set()


class TaskSupport:
    """The tasks of one server: started from tool calls, read back from the run store."""

    def __init__(self, app: PreflightMcp) -> None:
        self.app = app
        self._calls: dict[str, _CallTask] = {}
        self._projects: dict[str, str] = {}  # run id -> project key, for runs started here
        self._folders: list[Path] = []  # where call tasks of the projects served are kept
        self._background = Background()

    # -- starting --------------------------------------------------------------------------------

    def takes(self, name: str) -> bool:
        """Whether the tool `name` may answer with a task."""
        spec = self.app.tools.get(name)
        return spec is not None and spec.alias is None and spec.operation.name in TASK_OPERATIONS

    async def start(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> TaskView:
        """Start the call as a task: a run answers at once with its runId (the task id)."""
        spec = self.app.tools[params.name]
        arguments = dict(params.arguments or {})
        folder = await self._folder(arguments.get("projectPath"))
        if spec.operation.name not in RUN_OPERATIONS:
            return await self._start_call(ctx, params, folder)
        arguments["wait"] = "0s"  # the task is followed by polling, not by this call
        plain = types.CallToolRequestParams(name=params.name, arguments=arguments)
        reply = await self.app.call_tool(ctx, plain)
        data = reply.structured_content or {}
        run_id = data.get("runId")
        if reply.is_error or not isinstance(run_id, str):
            task = _CallTask(new_run_id(), folder)  # it ended before a run began: a task holding its reply
            task.finish(reply)
            self._keep(task)
            await self._save(task)
            return task.view
        self._projects[run_id] = self.app.pool.key(arguments.get("projectPath"))
        return await self.view(run_id)

    async def _start_call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, folder: Path | None
    ) -> TaskView:
        task = _CallTask(new_run_id(), folder)
        self._keep(task)
        await self._save(task)  # durably created before the answer names it

        async def work() -> None:
            with task.scope:
                reply = await self.app.call_tool(
                    ctx, types.CallToolRequestParams(name=params.name, arguments=params.arguments)
                )
                task.finish(reply)
            if not task.done.is_set():
                task.cancelled()
            with anyio.CancelScope(shield=True):
                await self._save(task)

        self._background.spawn(work, name=f"task-{task.view.task_id}")
        return task.view

    async def _folder(self, project_path: Any) -> Path | None:
        """The call-task folder of the call's project (remembered, so a later tasks/get looks there)."""
        try:
            key = self.app.pool.key(project_path if isinstance(project_path, str) else None)
        except PreflightError:
            return None  # the call itself says what is wrong with its projectPath
        folder = await anyio.to_thread.run_sync(tasks_folder, key)
        if folder is not None and folder not in self._folders:
            self._folders.append(folder)
        return folder

    async def _save(self, task: _CallTask) -> None:
        if task.folder is None:
            return
        try:
            await anyio.to_thread.run_sync(save_task, task.folder, task.view)
        except OSError:
            logger.warning(
                "the task %s could not be written to %s", task.view.task_id, task.folder, exc_info=True
            )

    def is_call(self, task_id: str) -> bool:
        """Whether `task_id` is a call task of this server (not a run)."""
        return task_id in self._calls

    def _keep(self, task: _CallTask) -> None:
        """Remember a call task; past `KEPT_CALLS` the oldest finished ones are forgotten."""
        self._calls[task.view.task_id] = task
        finished = [key for key, call in self._calls.items() if call.done.is_set()]
        for key in finished[: max(0, len(self._calls) - KEPT_CALLS)]:
            del self._calls[key]

    # -- reading ---------------------------------------------------------------------------------

    async def view(self, task_id: str) -> TaskView:
        """The task as it stands (INVALID_PARAMS for an id that names no task)."""
        call = self._calls.get(task_id)
        if call is not None:
            return call.view
        view, _ = await self._stored(task_id, None)
        return view

    async def _stored(self, task_id: str, wait: str | None) -> tuple[TaskView, bool]:
        """A task another server may have started, and whether it is a run (else a call-task file)."""
        try:
            project = self.app.pool.get(self._projects.get(task_id))
            return view_of_run(await project.get_run(task_id, wait=wait)), True
        except PreflightError as exc:
            if self.app.pool.default_path is not None:
                await self._folder(None)
            written = await anyio.to_thread.run_sync(load_task, list(self._folders), task_id)
            if written is not None:
                return written, False
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown task: {task_id} ({exc.message})",
                data={"taskId": task_id, "code": exc.code},
            ) from None

    async def outcome(self, task_id: str) -> TaskView:
        """Wait for the task to end; return it."""
        call = self._calls.get(task_id)
        if call is not None:
            await call.done.wait()
            return call.view
        while True:
            view, is_run = await self._stored(task_id, RESULT_POLL)  # a run's read waits for its end
            if view.finished:
                return view
            if not is_run:
                await anyio.sleep(POLL_INTERVAL_MS / 1000)  # a call task of another server

    async def cancel(self, task_id: str) -> TaskView:
        """Stop the task: `cancel_run` for a run (its finished cases are kept, teardown runs)."""
        call = self._calls.get(task_id)
        if call is not None:
            if not call.done.is_set():
                call.scope.cancel()
                await call.done.wait()
            return call.view
        view, is_run = await self._stored(task_id, None)  # an unknown id is INVALID_PARAMS
        if view.finished:
            return view
        if not is_run:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Task {task_id} runs in another server (a verify): only that server can cancel it",
            )
        project = self.app.pool.get(self._projects.get(task_id))
        result = await project.cancel_run(task_id)
        return view_of_run(result.run)

    async def listing(self, cursor: str | None) -> tuple[list[TaskView], str | None]:
        """The server's call tasks, then the project's runs (newest first), one page."""
        views = [call.view for call in self._calls.values()] if cursor is None else []
        if self.app.pool.default_path is None:
            return views, None
        project = self.app.pool.get(None)
        try:
            page = await project.list_runs(limit=LIST_PAGE, before=cursor)
        except PreflightError as exc:
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor: {cursor!r} ({exc.message})") from None
        for line in page.runs:
            views.append(_view_of_line(line))
        return views, page.next_before

    # -- the 2025-11-25 generation ---------------------------------------------------------------

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
            and self.takes(str(params.get("name")))
        ):
            typed = types.CallToolRequestParams.model_validate(params, by_name=False)
            return {"task": legacy_task(await self.start(ctx, typed))}
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
    server.middleware.append(support.middleware)
    return support


# -- wire forms -------------------------------------------------------------------------------------


def legacy_task(view: TaskView) -> dict[str, Any]:
    """The 2025-11-25 `Task`."""
    task: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "createdAt": view.created_at,
        "lastUpdatedAt": view.last_updated_at,
        "ttl": TTL_MS,
        "pollInterval": POLL_INTERVAL_MS,
    }
    if view.status_message:
        task["statusMessage"] = view.status_message
    return task


def modern_task(view: TaskView, *, detailed: bool = False) -> dict[str, Any]:
    """The 2026-07-28 task; `detailed` adds the result (completed) or the error (failed)."""
    task: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "createdAt": view.created_at,
        "lastUpdatedAt": view.last_updated_at,
        "ttlMs": TTL_MS,
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if view.status_message:
        task["statusMessage"] = view.status_message
    if detailed and view.status == "completed" and view.result is not None:
        task["result"] = view.result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if detailed and view.status == "failed" and view.error is not None:
        task["error"] = view.error
    return task


def _view_of_line(line: Any) -> TaskView:
    status = {"queued": "working", "running": "working", "cancelled": "cancelled", "interrupted": "failed"}
    return TaskView(
        task_id=line.run_id,
        status=status.get(line.status, "completed"),  # type: ignore[arg-type]
        status_message=line.summary or line.status,
        created_at=created_at(line.run_id),
        last_updated_at=line.started_at,
    )


def _modern(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _declares_tasks(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    declared = capabilities.extensions if capabilities is not None else None
    return bool(declared) and TASKS_EXTENSION in (declared or {})
