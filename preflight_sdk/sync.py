"""`SyncProject`: every `Project` operation as a blocking call, for code that cannot `await`.

```python
project = Project.open("docs/examples/shop")
with project.sync as p:          # cleans up on exit, like `async with`
    p.build()
    p.setup()
    report = p.run()
```

The operations run on a private event loop in a background thread (an anyio blocking portal),
started on first use and kept for the object's life, so the HTTP mocks and everything else the
project started stay alive between calls. This works in a plain script, from worker threads, and
inside a Jupyter kernel, whose own loop is already running (no `asyncio.run`, no nest_asyncio).

The methods are generated from `Project` by reflection: each public coroutine becomes a blocking
method with the same signature and docstring, each public async generator a blocking iterator.
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import anyio.from_thread

from preflight_sdk.core.operations import public_members
from preflight_sdk.core.progress import resolve_sink

if TYPE_CHECKING:
    from preflight_sdk.project import Project

__all__ = ["SyncProject"]

_PROGRESS = "progress"
_UNWIND_TIMEOUT = 30.0
_POLL = 0.1
_OPEN: weakref.WeakSet[SyncProject] = weakref.WeakSet()


class _Run:
    """One blocking call in flight: its cancel scope on the loop, and whether it has finished."""

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.cancelled = False
        self.finished = threading.Event()


class SyncProject:
    """A `Project` whose operations block until done: `project.sync.build()`.

    Get it from `Project.sync`. Close it with `close()` or use it as a context manager (leaving
    the `with` block also cleans the environment, when this object started it); whatever is still
    open is closed at interpreter exit. Interrupting a call (Ctrl-C, the notebook's stop button)
    cancels the operation on the background loop before the interrupt propagates.
    """

    def __init__(self, project: Project) -> None:
        self._project = project
        self._lock = threading.Lock()
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._portal_cm: AbstractContextManager[anyio.from_thread.BlockingPortal] | None = None

    @property
    def project(self) -> Project:
        """The asynchronous `Project` behind this object."""
        return self._project

    @property
    def closed(self) -> bool:
        """Whether the background loop is not running (it starts again on the next call)."""
        return self._portal is None

    def __repr__(self) -> str:
        return f"<SyncProject {self._project.path!r}>"

    @property
    def portal(self) -> anyio.from_thread.BlockingPortal:
        """The anyio blocking portal of the background loop (started on first use).

        Use it to run your own async code next to the project's, e.g. to enter an async
        context manager for the loop's lifetime: `sync.portal.wrap_async_context_manager(cm)`.
        """
        return self._get_portal()

    def _get_portal(self) -> anyio.from_thread.BlockingPortal:
        with self._lock:
            if self._portal is None:
                cm = anyio.from_thread.start_blocking_portal(name="preflight-sync")
                self._portal = cm.__enter__()
                self._portal_cm = cm
                _OPEN.add(self)
            return self._portal

    def call(self, fn: Callable[..., Awaitable[Any]], /, *args: Any, **kwargs: Any) -> Any:
        """Run the coroutine function `fn(*args, **kwargs)` on the background loop and return its result.

        An exception raised here while waiting (`KeyboardInterrupt`) cancels the operation and
        waits for it to unwind (up to 30 s) before propagating.
        """
        portal = self._get_portal()
        run = _Run()

        async def guarded() -> Any:
            try:
                with anyio.CancelScope() as scope:
                    run.scope = scope
                    if run.cancelled:
                        scope.cancel()
                    return await fn(*args, **kwargs)
            finally:
                run.finished.set()

        def cancel() -> bool:  # runs on the loop's thread, like `guarded`: no race
            run.cancelled = True
            if run.scope is not None:
                run.scope.cancel()
            return run.scope is not None

        try:
            future: Future[Any] = portal.start_task_soon(guarded)
            # Wake up regularly: a signal handled by another thread (a kernel interrupt) is only
            # acted on when this thread runs Python code again.
            while not wait_futures([future], timeout=_POLL).done:
                pass
            return future.result()
        except BaseException:
            if not run.finished.is_set():
                started = True
                with contextlib.suppress(Exception):
                    started = portal.call(cancel)
                run.finished.wait(_UNWIND_TIMEOUT if started else _POLL * 10)
            raise

    def iterate(self, agen: Any) -> Iterator[Any]:
        """Drive the async iterator `agen` on the background loop, yielding its items here."""
        try:
            while True:
                try:
                    item = self.call(agen.__anext__)
                except StopAsyncIteration:
                    return
                yield item
        finally:
            if self._portal is not None:
                self.call(agen.aclose)

    def close(self) -> None:
        """Stop the background loop (the environment keeps running; `clean()` removes it).

        The HTTP mocks this project serves keep answering until `clean()` or interpreter exit.
        """
        with self._lock:
            cm, portal = self._portal_cm, self._portal
            self._portal_cm = self._portal = None
        _OPEN.discard(self)
        if cm is not None and portal is not None:
            # Cancel what still runs on the loop (an operation left behind by a crashed caller, a
            # wrapped context manager) instead of waiting for it forever.
            with contextlib.suppress(RuntimeError):
                portal.call(portal.stop, True)
            cm.__exit__(None, None, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.call(self._project.__aexit__, exc_type, exc, tb)
        finally:
            self.close()

    # Blocking methods (`build`, `setup`, `run`…) are added below by `_reflect`.
    def __getattr__(self, name: str) -> Any:  # pragma: no cover - only for type checkers
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _blocking(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(method)
    has_progress = _PROGRESS in signature.parameters

    def call(self: SyncProject, *args: Any, **kwargs: Any) -> Any:
        if has_progress:
            # Inside Jupyter the live view must be displayed from the thread running the cell
            # (so it lands in that cell's output), not from the background loop's thread.
            bound = signature.bind(self._project, *args, **kwargs)
            value = bound.arguments.get(_PROGRESS)
            if value is None or value is True:
                sink = resolve_sink(value, name)
                if sink is not None:
                    bound.arguments[_PROGRESS] = sink
                    args, kwargs = bound.args[1:], bound.kwargs
        return self.call(getattr(self._project, name), *args, **kwargs)

    return _copy_metadata(call, name, method)


def _iterating(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: SyncProject, *args: Any, **kwargs: Any) -> Iterator[Any]:
        return self.iterate(getattr(self._project, name)(*args, **kwargs))

    return _copy_metadata(call, name, method)


def _copy_metadata(fn: Callable[..., Any], name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    fn.__name__ = name
    fn.__qualname__ = f"SyncProject.{name}"
    fn.__doc__ = method.__doc__
    fn.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    fn.__annotations__ = dict(getattr(method, "__annotations__", {}))
    fn.__wrapped_operation__ = method  # type: ignore[attr-defined]
    return fn


def _reflect() -> None:
    from preflight_sdk.project import Project

    # The same scanner as the CLI and MCP registry: every face sees the same operations.
    for member in public_members(Project):
        wrap = _iterating if member.kind == "generator" else _blocking
        setattr(SyncProject, member.name, wrap(member.name, member.function))


def _close_all() -> None:
    for sync in list(_OPEN):
        sync.close()


_reflect()
atexit.register(_close_all)
