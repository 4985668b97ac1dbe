"""python-on-whales calls off the event loop, cancellable, and dying with the process that made them.

python-on-whales runs the docker CLI with `subprocess.run` and `subprocess.Popen` in the calling
thread and gives no handle to the child: a cancelled call would leave `docker build` or `docker
logs --follow` running, and a SIGKILLed preflight would leave `docker events` behind. So its
`utils` module (the one place that starts those children) gets a `Popen` that, inside a call made
here:

- records the child in the call's `Children` (a context variable, set in the worker thread), so
  cancelling the call kills it;
- starts it in its own process group, with stdin on /dev/null (never the MCP server's stdin);
- for the calls that may last (streams, waits, exec), asks the kernel for a parent-death signal
  (Linux `PR_SET_PDEATHSIG`): the child is SIGKILLed when the thread that started it ends, which
  is the whole process when it is SIGKILLed. Each call here keeps its thread alive exactly as
  long as its child (a blocking call waits for it, a stream has a thread of its own), so the
  signal never fires early. Short calls go without it: a `preexec_fn` makes Python fork the whole
  interpreter instead of using vfork, measured at +3 ms a docker call (0.6 ms -> 3.6 ms for
  `/bin/true`), and a short call ends by itself anyway.

Outside these calls the replacement behaves exactly like `subprocess.Popen`.
"""

from __future__ import annotations

import contextvars
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Iterable
from types import ModuleType
from typing import Any, Protocol, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["Children", "Killable", "call", "install", "stream", "track"]

T = TypeVar("T")

_CURRENT: contextvars.ContextVar[Children | None] = contextvars.ContextVar(
    "preflight_docker_children", default=None
)
_PR_SET_PDEATHSIG = 1
_installed = False


class Killable(Protocol):
    """What a call may leave running: a docker process, or an open response of the Engine API."""

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class Children:
    """The docker processes (and API streams) one call started; `kill` ends them (and any started later)."""

    def __init__(self, *, guard: bool = False) -> None:
        self.guard = guard  # children die with the process (PR_SET_PDEATHSIG)
        self._processes: list[Killable] = []
        self._lock = threading.Lock()
        self.killed = False

    def add(self, process: Killable) -> None:
        with self._lock:
            self._processes.append(process)
            late = self.killed
        if late:  # the call was cancelled while its thread was starting this child
            _kill(process)

    def kill(self, *, cancel: bool = True) -> None:
        """Kill the children still running; `cancel` also kills any started later and marks the call cancelled."""
        with self._lock:
            self.killed = self.killed or cancel
            processes = list(self._processes)
        for process in processes:
            if process.poll() is None:
                _kill(process)

    def reap(self) -> None:
        """Wait for every child (blocking: call it off the event loop, after `kill`)."""
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


def track(handle: Killable) -> None:
    """Make `handle` end with the call running in this thread (when it runs inside one of this module)."""
    children = _CURRENT.get()
    if children is not None:
        children.add(handle)


def _kill(process: Killable) -> None:
    try:
        process.kill()
    except OSError:
        pass


def _parent_death_signal() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def in_child() -> None:
        # Runs between fork and exec: only the prctl call and a check that the parent still lives.
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return in_child


class TrackedPopen(subprocess.Popen[bytes]):
    """`subprocess.Popen`, which inside a call of this module also registers and guards the child."""

    def __init__(self, args: Any, *rest: Any, **options: Any) -> None:
        children = _CURRENT.get()
        if children is None:
            super().__init__(args, *rest, **options)
            return
        if options.get("stdin") is None and not rest:
            options["stdin"] = subprocess.DEVNULL
        options.setdefault("process_group", 0)
        guard = _parent_death_signal() if children.guard else None
        if guard is not None and options.get("preexec_fn") is None:
            options["preexec_fn"] = guard
        super().__init__(args, *rest, **options)
        children.add(self)


def _run(
    args: Any,
    *,
    input: bytes | None = None,
    stdout: Any = None,
    stderr: Any = None,
    env: Any = None,
    pass_fds: Any = (),
    **options: Any,
) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run` as python-on-whales calls it, on `TrackedPopen`."""
    stdin = subprocess.PIPE if input is not None else None
    with TrackedPopen(
        args, stdin=stdin, stdout=stdout, stderr=stderr, env=env, pass_fds=pass_fds, **options
    ) as process:
        try:
            out, err = process.communicate(input)
        except BaseException:
            process.kill()
            raise
    return subprocess.CompletedProcess(args, process.returncode or 0, out, err)


class _Subprocess(ModuleType):
    """The `subprocess` module as python-on-whales' `utils` sees it: `run` on `TrackedPopen`."""

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)


def install() -> None:
    """Give python-on-whales' `utils` module the tracked `Popen` (idempotent)."""
    global _installed
    if _installed:
        return
    from python_on_whales import utils

    shim = _Subprocess("subprocess")
    shim.run = _run  # type: ignore[attr-defined]
    shim.Popen = TrackedPopen  # type: ignore[attr-defined]
    utils.subprocess = shim  # type: ignore[attr-defined]
    utils.Popen = TrackedPopen  # type: ignore[assignment,attr-defined]
    _installed = True


async def call(
    fn: Callable[[], T], *, limiter: anyio.CapacityLimiter | None = None, lasting: bool = False
) -> T:
    """Run a blocking python-on-whales call in a worker thread; cancelling it kills its docker process.

    `lasting` calls (a wait, an exec) also get the parent-death signal.
    """
    children = Children(guard=lasting)

    def work() -> T:
        _CURRENT.set(children)  # the worker runs in a copy of the caller's context
        return fn()

    try:
        return await anyio.to_thread.run_sync(work, limiter=limiter, abandon_on_cancel=True)
    finally:
        children.kill()


async def stream(make: Callable[[], Iterable[T]], *, buffer: int = 256) -> AsyncGenerator[T, None]:
    """Yield the items of a streaming python-on-whales call, read in a thread of its own.

    The thread lives as long as the docker process (see the module docstring). Closing the
    generator kills the process; an error of the call is raised after its last item.
    """
    children = Children(guard=True)
    send, receive = anyio.create_memory_object_stream[T](buffer)
    token = anyio.lowlevel.current_token()
    failure: list[BaseException] = []

    def pump() -> None:
        _CURRENT.set(children)
        items: Iterable[T] = ()
        try:
            items = make()
            for item in items:
                try:
                    anyio.from_thread.run_sync(send.send_nowait, item, token=token)
                except anyio.WouldBlock:
                    anyio.from_thread.run(send.send, item, token=token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.RunFinishedError):
            pass  # the reader went away: nothing to deliver to
        except BaseException as exc:
            failure.append(exc)
        finally:
            # Stopped early (the reader went away) or done: no child may outlive the stream, and
            # each is waited for here, in this thread, not left to the garbage collector.
            children.kill(cancel=False)
            close = getattr(items, "close", None)
            if close is not None:
                close()
            children.reap()
            try:
                anyio.from_thread.run_sync(send.close, token=token)
            except (anyio.RunFinishedError, RuntimeError):
                pass

    worker = threading.Thread(target=contextvars.copy_context().run, args=(pump,), daemon=True)
    worker.name = "preflight-docker-stream"
    try:
        worker.start()
        async with receive:
            async for item in receive:
                yield item
        if failure and not children.killed:
            raise failure[0]
    finally:
        children.kill()
