"""The MCP face: every operation of the registry as a tool on the official low-level `Server`.

Calls are validated with msgspec (strict) against the tool's argument Struct. The reply's
`structuredContent` is the envelope `{success, data?, error?, runId?, timestamp}` and
`content[0].text` the same JSON; `isError` is set exactly when `success` is false (the operation
could not do its job, and `error` says why; a failing verdict is `success: true`). A bad argument is a
tool error (`INVALID_INPUT`, naming the field and its type) so the model can correct itself; only an
unknown tool is a protocol error. Progress events of an operation become `notifications/progress`,
and a cancelled request cancels the operation.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Callable, Collection
from typing import Any

import anyio
import msgspec
from mcp import MCPError, types
from mcp.server import Server, ServerRequestContext

from preflight_sdk._version import __version__
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.progress import ProgressEvent, ProgressSink
from preflight_sdk.core.tracing import TRACE_PARENT
from preflight_sdk.faces.reflection.outcome import envelope_of, error_envelope, internal, unwrap
from preflight_sdk.faces.reflection.registry import Registry, reflect

from .apps import install_apps
from .bounds import bound_reply
from .list_cache import ListCache
from .pool import ProjectFactory, ProjectPool, default_factory
from .replies import tool_reply as _reply
from .schemas import CONFIG_FILE, PROJECT_PATH, ToolSpec, build_tools
from .tasks.state import TASK_OPERATIONS
from .tasks.wire import install_tasks
from .verify_guard import check_verify_source
from .words import MCP

__all__ = ["SERVER_NAME", "STARTS_ENVIRONMENT", "STOPS_ENVIRONMENT", "PreflightMcp", "build_server"]

logger = logging.getLogger("preflight_sdk.faces.mcp")

SERVER_NAME = "preflight"
# Operations after which the server owns a running environment, and the one that releases it.
STARTS_ENVIRONMENT = frozenset({"setup"})
STOPS_ENVIRONMENT = frozenset({"clean"})
# How long a tool call may wait for long work before answering with its runId: hosts cut a call
# at about 60 s (Claude Code does), so 45 s leaves room for the reply.
DEFAULT_CALL_BUDGET = 45.0
WAIT = "wait"
# Operations whose `wait` defaults to answering at once (they read a run; they start nothing).
ANSWER_AT_ONCE = frozenset({"get_run"})
# Seconds without progress after which a call in progress says it is still working (hosts that
# reset their timeout on progress typically wait 10 s or more).
PROGRESS_HEARTBEAT = 4.0

INSTRUCTIONS = (
    "preflight stands up a project's real test environment (Docker services, HTTP mocks, a private "
    "network), runs its end-to-end suites and explains failures. Usual order: preflight_init, "
    "preflight_build, preflight_setup, preflight_run (repeat), preflight_clean. Every reply is an "
    "envelope {success, data?, error?: {code, message, retryable, hint}}: success is false only when "
    "the operation could not do its job (then follow error.hint); a verdict such as failed tests is "
    "data.status. Served only when --tools names their group: contracts (preflight_check_response, "
    "preflight_generate_cases)."
)


# Groups served only when `--tools` names them. Every tool's schema is in the model's context at
# every turn (the default list stays within its budget, tests/unit/faces/mcp/test_groups.py):
# `contracts` (check a held response, write starter cases) is for occasional jobs, while every
# run already checks its answers against the contracts and reports their coverage.
OPT_IN_GROUPS = frozenset({"contracts"})


class PreflightMcp:
    """The tools of one registry, served for a pool of projects.

    Args:
        registry: the operations to export (default: those of `Project`), or a callable returning
            them (reflection then waits for the first `tools/list` or `tools/call`).
        factory: makes the object the tools call for a project path (default: `Project.open`).
        default_project: the project used when a call leaves out `projectPath`; when it is
            `None`, `projectPath` is required on every tool.
        keep_on_exit: `shutdown` leaves started environments running.
        allow_verify_command: let `verify` start any `command` (by default it starts only the
            servers a project declares; see `verify_guard`).
        allow_other_projects: accept a `projectPath` outside `default_project` (by default a
            server with a default project serves only it and its subfolders).
        groups: serve only the tools of these groups (default: every group but the opt-in ones,
            `OPT_IN_GROUPS`, which are served only when named here).
        without: leave out the tools of these groups.
    """

    def __init__(
        self,
        registry: Registry | Callable[[], Registry] | None = None,
        *,
        factory: ProjectFactory = default_factory,
        default_project: str | None = None,
        keep_on_exit: bool = False,
        allow_verify_command: bool = False,
        allow_other_projects: bool = False,
        version: str = __version__,
        call_budget: float = DEFAULT_CALL_BUDGET,
        groups: Collection[str] | None = None,
        without: Collection[str] = (),
    ) -> None:
        self.allow_verify_command = allow_verify_command
        self._registry_source = registry if registry is not None else reflect
        self._groups = frozenset(groups) if groups is not None else None
        self._without = frozenset(without)
        self._tools: dict[str, ToolSpec] | None = None
        # The launcher's warm-up builds the tools in a worker thread while the first tools/list may
        # already want them: one builds, the other waits (never both at once, on one GIL).
        self._tools_lock = threading.Lock()
        self._listed: types.ListToolsResult | None = None
        self.pool = ProjectPool(
            factory, default_path=default_project, allow_other_projects=allow_other_projects
        )
        self.keep_on_exit = keep_on_exit
        self.call_budget = call_budget
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=version,
            title="preflight",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self.call_tool,
        )
        self.list_cache = ListCache()
        self.server.middleware.append(self.list_cache.middleware)
        install_apps(self)  # MCP Apps: the run tools show the run's page (apps.py)
        self.tasks = install_tasks(self)  # last: a task wraps every other handling of tools/call

    # -- tools --------------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, ToolSpec]:
        """The tools by name (built on first use)."""
        if self._tools is None:
            with self._tools_lock:
                if self._tools is None:
                    source = self._registry_source
                    registry = source if isinstance(source, Registry) else source()
                    specs = build_tools(registry, project_required=self.pool.default_path is None)
                    self._tools = {spec.name: spec for spec in specs if self._serves(spec.group)}
        return self._tools

    def _serves(self, group: str) -> bool:
        named = group in self._groups if self._groups is not None else group not in OPT_IN_GROUPS
        return named and group not in self._without

    def listing(self) -> types.ListToolsResult:
        """The `tools/list` result (one page, in registry order)."""
        if self._listed is None:
            self._listed = types.ListToolsResult(tools=[_tool(spec) for spec in self.tools.values()])
        return self._listed

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor:
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor: {params.cursor!r} (the list has one page)")
        return self.listing()

    # -- calls --------------------------------------------------------------------------------

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Answer a `tools/call` (the plain call: the tasks extension wraps it)."""
        spec = self.tools.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        try:
            return await self._dispatch(ctx, spec, params.arguments or {})
        except Exception as exc:
            error = unwrap(exc)
            if not isinstance(error, PreflightError):
                logger.exception("tool %s failed", spec.name)
                error = internal(error, where=spec.name)
            if spec.alias is not None and spec.alias.from_error is not None:
                return _alias_error(spec, error)
            return _reply(error_envelope(error, MCP), is_error=True)

    async def _dispatch(
        self, ctx: ServerRequestContext[Any], spec: ToolSpec, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        op = spec.operation
        if spec.alias is None:
            kwargs = spec.convert(arguments)
            path = kwargs.pop(PROJECT_PATH)
            config_file = kwargs.pop(CONFIG_FILE, None)
            if op.name == "verify":
                check_verify_source(
                    kwargs,
                    project=self.pool.key(path),
                    config_file=config_file,
                    allow_command=self.allow_verify_command,
                )
            project = self.pool.get(path, config_file)
        else:
            # An alias speaks another server's shape, without projectPath: its `to_kwargs` may name
            # the project (`project_path`, from its own argument, relative to the server's
            # project); otherwise the server's project, else its directory.
            kwargs = dict(spec.alias.to_kwargs(spec.decode(arguments), self.pool.default_folder))
            path = kwargs.pop(PROJECT_PATH, None) or self.pool.default_path or os.getcwd()
            project = self.pool.get(path, field=spec.alias.path_argument or "projectPath")
        if op.name in STARTS_ENVIRONMENT:
            self.pool.mark_started(project)  # before the call: a cancelled setup may leave things behind
        if op.parameter(WAIT) is not None and (kwargs.get(WAIT) is not None or op.name not in ANSWER_AT_ONCE):
            kwargs[WAIT] = self._bounded_wait(kwargs.get(WAIT))
        method = getattr(project, op.name)
        token = TRACE_PARENT.set(_traceparent(ctx))
        try:
            result = await _call(ctx, method, kwargs, sink=op.progress)
        except BaseException:
            self.pool.settle(project, ok=False)  # a failed call with a new configFile leaves no trace
            raise
        finally:
            TRACE_PARENT.reset(token)
        self.pool.settle(project, ok=True)
        if op.name in STOPS_ENVIRONMENT:
            self.pool.mark_cleaned(project)
        if spec.alias is not None:
            reply = msgspec.to_builtins(spec.alias.from_result(result))
            return _structured({"result": reply} if spec.wrapped else reply, is_error=False)
        # The SDK returns the whole result; one tool reply carries a bounded one (the artifacts hold all).
        return _reply(envelope_of(bound_reply(result)), is_error=False)

    def _bounded_wait(self, wait: Any) -> str:
        """A tool call never waits past the call budget: past it, the work answers with its runId."""
        if wait is None:
            return f"{self.call_budget:g}s"
        from preflight_sdk.core.durations import MAX_WAIT, parse_duration

        try:
            seconds = parse_duration(wait, field="wait")
        except PreflightError:
            return str(wait)  # the operation reports the bad value
        if not 0 <= seconds <= MAX_WAIT:
            return str(wait)  # refused by the operation (above 24h), not silently cut to the budget
        return f"{min(seconds, self.call_budget):g}s"

    async def shutdown(self, why: str = "it was stopped") -> None:
        """End the runs under way as interrupted (their summary says the server shut down and
        `why`), then clean the environments this server started (unless `keep_on_exit`); safe to
        call twice (the first reason stays)."""
        reason = f"the MCP server shut down before the run finished ({why})"
        await self.pool.aclose(keep=self.keep_on_exit, reason=reason)


def build_server(**options: Any) -> Server[Any]:
    """Return the low-level `Server` of a `PreflightMcp` built with `options` (for in-memory tests)."""
    return PreflightMcp(**options).server


# -- helpers ----------------------------------------------------------------------------------------


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        # The destructive and idempotent hints mean something only for tools that change things:
        # on a read-only tool they are left out (the spec calls them meaningless there).
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=None if spec.read_only else spec.destructive,
            idempotent_hint=None if spec.read_only else spec.idempotent,
            open_world_hint=spec.open_world,
        ),
        # Clients of the 2025-11-25 tasks may call a long tool as a task (see tasks/wire.py).
        execution=types.ToolExecution(task_support="optional")
        if spec.operation.name in TASK_OPERATIONS and spec.alias is None
        else None,
    )


def _alias_error(spec: ToolSpec, error: PreflightError) -> types.CallToolResult:
    """The alias's own error reply (its `from_error`), or the envelope when that fails too."""
    assert spec.alias is not None and spec.alias.from_error is not None
    try:
        reply = msgspec.to_builtins(spec.alias.from_error(error))
    except Exception:
        logger.exception("the error reply of %s failed", spec.name)
        return _reply(error_envelope(error, MCP), is_error=True)
    return _structured(reply if isinstance(reply, dict) else {"result": reply}, is_error=True)


def _structured(data: Any, *, is_error: bool) -> types.CallToolResult:
    raw = msgspec.json.encode(data)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=raw.decode())],
        structured_content=data,
        is_error=is_error,
    )


async def _call(
    ctx: ServerRequestContext[Any], method: Callable[..., Any], kwargs: dict[str, Any], *, sink: bool
) -> Any:
    """Call `method`, turning its progress events (with `sink`) into `notifications/progress`.

    The sink only queues (it is called synchronously on the loop); one task sends the queue in
    order, and the reply waits until the queue is drained, so no notification follows the result.
    While the work is quiet (a suite sleeping, an image pulling) a heartbeat repeats the last
    message every `PROGRESS_HEARTBEAT` seconds, so a host that resets its timeout on progress waits.
    """
    send, receive = anyio.create_memory_object_stream[ProgressEvent](math.inf)

    def queue(event: ProgressEvent) -> None:
        try:
            send.send_nowait(event)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # an event after the reply has nowhere to go

    extra = {"progress": _as_sink(queue)} if sink else {}
    outcome: list[Any] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(_forward, ctx, receive)
        try:
            outcome.append(await method(**kwargs, **extra))
        except Exception as exc:  # re-raised below, once the queue is drained
            failed.append(exc)
        finally:
            send.close()
    if failed:
        raise failed[0]
    return outcome[0]


def _as_sink(fn: Callable[[ProgressEvent], None]) -> ProgressSink:
    return fn


async def _forward(ctx: ServerRequestContext[Any], receive: Any) -> None:
    progress = 0.0
    total: float | None = None
    message = "working"
    quiet = 0.0
    async with receive:
        while True:
            event: ProgressEvent | None = None
            with anyio.move_on_after(PROGRESS_HEARTBEAT):
                try:
                    event = await receive.receive()
                except anyio.EndOfStream:
                    return
            if event is None:
                # Progress must grow with every notification: a heartbeat adds a sliver, which
                # keeps a `done of total` reading true.
                quiet += PROGRESS_HEARTBEAT
                progress += 0.001 if total is not None else 1
                text = f"{message} (still working, {quiet:g}s without news)"
            else:
                quiet = 0.0
                if event.done is not None and event.total is not None and event.done > progress:
                    progress, total = float(event.done), float(event.total)
                else:
                    progress = math.floor(progress) + 1 if total is None else progress + 0.001
                message = f"[{event.scope}] {event.message}" if event.scope else event.message
                text = message
            try:
                await ctx.session.report_progress(progress, total, text)
            except Exception:  # the client may be gone; the work goes on
                logger.debug("progress notification failed", exc_info=True)


def _traceparent(ctx: ServerRequestContext[Any]) -> str | None:
    """The W3C `traceparent` of the request's `_meta`, when the client sent one."""
    meta = getattr(ctx, "meta", None)
    if meta is None:
        params = getattr(ctx, "params", None)
        meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    if meta is None:
        return None
    value = meta.get("traceparent") if isinstance(meta, dict) else getattr(meta, "traceparent", None)
    if value is None and not isinstance(meta, dict):
        extra = getattr(meta, "model_extra", None) or {}
        value = extra.get("traceparent")
    return value if isinstance(value, str) else None
