"""The tasks of one server: started from tool calls, read back from the run store or a task file.

`wire` puts them on the wire (both generations); here a long tool's call becomes a task: a
run answers at once with its runId (the task id), a `verify` runs in the background as a *call
task* (`files` keeps it for later servers). See `state` for how a run maps onto a task.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from mcp import MCPError, types
from mcp.server import ServerRequestContext

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.runs.detached import Background
from preflight_sdk.store.ids import is_run_id, new_run_id

from .files import load_task, save_task, tasks_folder
from .state import (
    POLL_INTERVAL_MS,
    RUN_OPERATIONS,
    TASK_OPERATIONS,
    TaskView,
    created_at,
    now_text,
    view_of_run,
)

if TYPE_CHECKING:
    from ..server import PreflightMcp

__all__ = ["TaskSupport"]

logger = logging.getLogger("preflight_sdk.faces.mcp")

# How long one `tasks/result` poll of the run store waits before looking again.
RESULT_POLL = "20s"
LIST_PAGE = 50
# Call tasks live in the server's memory: the newest this many finished ones are kept.
KEPT_CALLS = 100


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

    async def settled(self, task_id: str, seconds: float) -> TaskView:
        """The task after it ends or `seconds` pass, whichever comes first."""
        call = self._calls.get(task_id)
        if call is not None:
            with anyio.move_on_after(seconds):
                await call.done.wait()
            return call.view
        view, is_run = await self._stored(task_id, f"{seconds}s")  # a run's read waits for its end
        if not is_run and not view.finished:
            await anyio.sleep(seconds)  # a call task of another server: its file, read again later
        return view

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
        """One page of tasks, newest first: those this server made (its call tasks and the runs it
        started, whatever their project), with the default project's runs when it has one.

        The cursor is the last task id of the page before; a task id is a ULID, so both sources
        page by the same order.
        """
        if cursor is not None and not is_run_id(cursor):
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor: {cursor[:40]!r} (not a task id)")
        mine = sorted({*self._calls, *self._projects}, reverse=True)
        views: list[TaskView] = []
        for task_id in (t for t in mine if cursor is None or t < cursor):
            if len(views) > LIST_PAGE:
                break
            try:
                views.append(await self.view(task_id))
            except MCPError:  # a run whose store is gone: nothing to list for it
                continue
        more = len(views) > LIST_PAGE
        if self.app.pool.default_path is not None:
            try:
                page = await self.app.pool.get(None).list_runs(limit=LIST_PAGE, before=cursor)
            except PreflightError as exc:  # e.g. no e2e.yaml there (yet): this server's tasks still are
                logger.warning(
                    "tasks/list: the runs of %s cannot be read: %s", self.app.pool.default_path, exc
                )
            else:
                views += [_view_of_line(line) for line in page.runs if line.run_id not in self._projects]
                more = more or page.next_before is not None
        views.sort(key=lambda view: view.task_id, reverse=True)
        more = more or len(views) > LIST_PAGE
        views = views[:LIST_PAGE]
        return views, views[-1].task_id if more and views else None


def _view_of_line(line: Any) -> TaskView:
    status = {"queued": "working", "running": "working", "cancelled": "cancelled", "interrupted": "failed"}
    return TaskView(
        task_id=line.run_id,
        status=status.get(line.status, "completed"),  # type: ignore[arg-type]
        status_message=line.summary or line.status,
        created_at=created_at(line.run_id),
        last_updated_at=line.started_at,
    )
