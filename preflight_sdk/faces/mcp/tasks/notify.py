"""Task status pushed to the clients that asked for it, in the form of their generation.

- **2026-07-28**: a client opens `subscriptions/listen` with `notifications: {taskIds: [...]}`; the
  stream is acknowledged with the task ids honored, then carries `notifications/tasks` with the
  full task (its `result` once completed, its `error` once failed): the task as it stands when the
  stream opens, then at each change of its status or status message.
- **2025-11-25**: the session that asked for a task gets `notifications/tasks/status` at each
  change of that task.

A watcher per task reads it about once a second (so a status message moving with every case
is sent at most once a second), whichever server runs it, and stops once it has ended or nobody
listens. Sending is best effort: a closed session or a slow client never reaches the call path.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import MCPError, types
from mcp.server import ServerRequestContext
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from preflight_sdk.runs.detached import Background

from .state import TaskView
from .support import TaskSupport

__all__ = ["TaskListen", "TaskNotifier"]

logger = logging.getLogger("preflight_sdk.faces.mcp")

# How often a watched task is read: also the most often a moving status message is sent.
WATCH_EVERY = 1.0
# A send that takes longer than this (a client that stopped reading) is given up.
SEND_LIMIT = 5.0
# The most task ids one listen stream follows, and the updates it holds for a slow reader.
MAX_TASK_IDS = 100
STREAM_BUFFER = 256

Listener = Callable[[TaskView], Awaitable[None]]
Wire = Callable[[TaskView], dict[str, Any]]


class _Notification(BaseModel):
    """A notification the SDK's typed union does not name (the session sends any such model)."""

    method: str
    params: dict[str, Any]


class TaskNotifier:
    """Watches the tasks somebody listens to; calls each listener when its task changes."""

    def __init__(self, support: TaskSupport) -> None:
        self.support = support
        self._listeners: dict[str, dict[object, Listener]] = {}
        self._background = Background()

    def watch(self, task_id: str, listener: Listener, *, seen: TaskView | None = None) -> Callable[[], None]:
        """Call `listener` with the task at each change (and now, unless it is as `seen`); returns stop."""
        token = object()
        listeners = self._listeners.setdefault(task_id, {})
        first = not listeners
        listeners[token] = listener
        if first:
            self._background.spawn(lambda: self._watch(task_id, seen), name=f"watch-{task_id}")
        elif seen is None:
            self._background.spawn(lambda: self._tell_now(task_id, listener), name=f"tell-{task_id}")

        def stop() -> None:
            self._listeners.get(task_id, {}).pop(token, None)

        return stop

    async def _tell_now(self, task_id: str, listener: Listener) -> None:
        """A listener joining a watched task gets the task as it stands, as the first one did."""
        try:
            view = await self.support.view(task_id)
        except MCPError:
            return
        await _send_safely(listener, view)

    async def _watch(self, task_id: str, seen: TaskView | None) -> None:
        last = _state(seen) if seen is not None else None
        read = self.support.view  # at once first; then each read waits up to a second for the end
        try:
            while self._listeners.get(task_id):
                try:
                    view = await read(task_id)
                    read = self._settled
                except MCPError:
                    return  # no such task: nothing will ever be sent for it
                if _state(view) != last:
                    last = _state(view)
                    for listener in list(self._listeners.get(task_id, {}).values()):
                        await _send_safely(listener, view)
                if view.finished:
                    return
        except Exception:  # a watcher must never take the server down
            logger.warning("watching the task %s failed", task_id, exc_info=True)
        finally:
            self._listeners.pop(task_id, None)

    async def _settled(self, task_id: str) -> TaskView:
        return await self.support.settled(task_id, WATCH_EVERY)

    def tell_session(self, ctx: ServerRequestContext[Any], started: TaskView, wire: Wire) -> None:
        """2025-11-25: send `notifications/tasks/status` (the task as `wire` writes it) to `ctx`'s session."""
        session = ctx.session

        async def send(view: TaskView) -> None:
            await session.send_notification(
                _notification("notifications/tasks/status", wire(view))  # type: ignore[arg-type]
            )

        if not started.finished:
            self.watch(started.task_id, send, seen=started)


class TaskListen:
    """Serves `subscriptions/listen` (2026-07-28): one stream of `notifications/tasks` per call."""

    def __init__(self, notifier: TaskNotifier, wire: Wire) -> None:
        self.notifier = notifier
        self.wire = wire  # the task as the notification carries it

    async def __call__(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Acknowledge the task ids followed, then send each one's changes until the stream ends."""
        subscription_id = ctx.request_id
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found: subscriptions/listen")
        if subscription_id is None:
            raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
        task_ids = _task_ids(params.notifications)
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        send, receive = anyio.create_memory_object_stream[TaskView](STREAM_BUFFER)

        async def queue(view: TaskView) -> None:
            try:
                send.send_nowait(view)
            except (anyio.WouldBlock, anyio.ClosedResourceError):
                pass  # a client that stopped reading misses a step; it can still ask tasks/get

        # Watch before the ack goes out so no change falls between them; the ack is still the
        # first frame, since only this handler writes the stream.
        stops = [self.notifier.watch(task_id, queue) for task_id in task_ids]
        # The tool list never changes while a server lives: a listChanged subscription is honored
        # and never fires (serving listen makes the SDK advertise tools.listChanged).
        honored = types.SubscriptionFilter.model_validate(
            {"taskIds": task_ids, "toolsListChanged": params.notifications.tools_list_changed or None}
        )
        try:
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(
                    params=types.SubscriptionsAcknowledgedNotificationParams(
                        notifications=honored, _meta=meta
                    )
                ),
                related_request_id=subscription_id,
            )
            async with receive:
                async for view in receive:
                    task = {**self.wire(view), "_meta": meta}
                    await ctx.session.send_notification(
                        _notification("notifications/tasks", task),  # type: ignore[arg-type]
                        related_request_id=subscription_id,
                    )
        finally:
            for stop in stops:
                stop()
            send.close()
        return types.SubscriptionsListenResult(_meta=meta)


def _task_ids(requested: types.SubscriptionFilter) -> list[str]:
    """The task ids a listen request names (`notifications.taskIds`), deduplicated, at most 100."""
    named = (requested.model_extra or {}).get("taskIds")
    if not isinstance(named, list):
        return []
    ids = list(dict.fromkeys(item for item in named if isinstance(item, str)))
    if len(ids) > MAX_TASK_IDS:
        raise MCPError(types.INVALID_PARAMS, f"A stream follows at most {MAX_TASK_IDS} tasks, not {len(ids)}")
    return ids


def _state(view: TaskView) -> tuple[str, str | None]:
    return view.status, view.status_message


def _notification(method: str, params: dict[str, Any]) -> _Notification:
    return _Notification(method=method, params=params)


async def _send_safely(listener: Listener, view: TaskView) -> None:
    """One send, bounded; a closed or stuck session is ignored."""
    try:
        with anyio.move_on_after(SEND_LIMIT):
            await listener(view)
    except Exception:
        logger.debug("a task notification for %s could not be sent", view.task_id, exc_info=True)
