"""The docker CLI off the event loop: python-on-whales' short calls, and lasting command lines that cancelling kills.

Short calls (inspect, list, create, remove, version) use python-on-whales in a worker thread. It
runs the CLI with `subprocess.run` in the calling thread and gives no handle to the child, so such
a call cannot be cancelled through its public API: a cancelled caller abandons the thread
(`abandon_on_cancel`) and the docker process ends by itself (about 29 ms for `docker ps`). Every
call as a killable child of our own (`anyio.open_process`) was measured at 27.7 ms against 21.0
ms for `subprocess.run` of the same `docker ps -q` (median of 15, load 4.5): 7 ms more a call,
and no typed answers. The pin on python-on-whales in pyproject.toml and
`tests/unit/engine/test_cli.py` hold these assumptions.

Calls that may last (build, pull, push, `logs --follow`, events, `wait`, `exec`) run the client's
own command line (`client_config.docker_cmd`) as a child of our own: its own process group, stdin
on /dev/null, and a parent-death signal (Linux `PR_SET_PDEATHSIG`), so a SIGKILLed preflight
leaves no `docker events` behind. Closing the stream or cancelling kills the child. Its errors are
python-on-whales' typed exceptions (`get_docker_exception_type`): one `translate` reads both kinds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["call", "lines", "run"]

T = TypeVar("T")
_PR_SET_PDEATHSIG = 1
_END = ("", b"")  # the pump's last item


async def call(fn: Callable[[], T], *, limiter: anyio.CapacityLimiter | None = None) -> T:
    """Run a blocking python-on-whales call in a worker thread (abandoned, not waited for, when cancelled)."""
    return await anyio.to_thread.run_sync(fn, limiter=limiter, abandon_on_cancel=True)


def _parent_death_signal() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    # ctypes is loaded here, where a child is about to be started, not by every process that
    # imports the engine (`preflight status` never starts one).
    import ctypes

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


def _failure(argv: Sequence[str], code: int, stdout: bytes, stderr: bytes) -> Exception:
    from python_on_whales.utils import get_docker_exception_type

    error: Exception = get_docker_exception_type(stderr)(list(argv), code, stdout, stderr)
    return error


async def lines(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, chunks: bool = False, buffer: int = 256
) -> AsyncGenerator[tuple[str, bytes], None]:
    """Yield `(stream, line)` pairs (or, with `chunks`, the bytes as read) of a docker command line.

    The child dies when the generator is closed or its reader cancelled. A non-zero exit raises
    python-on-whales' exception for it after the last item, unless the reader left first.
    """
    send, receive = anyio.create_memory_object_stream[tuple[str, bytes]](buffer)
    token = anyio.lowlevel.current_token()
    started: list[subprocess.Popen[bytes]] = []
    lock = threading.Lock()
    closed = threading.Event()
    ended: list[Exception | None] = []

    def deliver(item: tuple[str, bytes]) -> None:
        try:
            anyio.from_thread.run(send.send, item, token=token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.RunFinishedError, RuntimeError):
            closed.set()

    def read(pipe: Any, name: str, kept: bytearray | None) -> None:
        with pipe:
            for piece in iter((lambda: pipe.read1(65536)) if chunks else pipe.readline, b""):
                if kept is not None and len(kept) < 1 << 20:
                    kept.extend(piece)
                if not closed.is_set():
                    deliver((name, piece))

    def pump() -> None:
        error: Exception | None = None
        try:
            with lock:
                if closed.is_set():
                    return
                process = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env={**os.environ, **env} if env else None,
                    process_group=0,
                    preexec_fn=_parent_death_signal(),
                )
                started.append(process)
            stderr = bytearray()
            other = threading.Thread(target=read, args=(process.stderr, "stderr", stderr), daemon=True)
            other.start()
            read(process.stdout, "stdout", None)
            other.join()
            code = process.wait()
            if code != 0:
                error = _failure(argv, code, b"", bytes(stderr))
        except OSError as exc:
            error = exc
        finally:
            ended.append(error)
            if not closed.is_set():
                deliver(_END)

    def kill() -> None:
        closed.set()
        with lock:
            for process in started:
                if process.poll() is None:
                    process.kill()

    worker = threading.Thread(target=pump, daemon=True, name="preflight-docker-child")
    worker.start()
    try:
        async with receive:
            async for item in receive:
                if item is _END:
                    break
                yield item
        if ended and ended[0] is not None:
            raise ended[0]
    finally:
        kill()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(worker.join, 5)
        send.close()


async def run(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> str:
    """Run a docker command line that may last, killed when cancelled; return its stdout.

    A non-zero exit raises python-on-whales' exception for it (its stderr included).
    """
    out = bytearray()
    async for source, piece in lines(argv, env=env, chunks=True):
        if source == "stdout":
            out.extend(piece)
    return out.decode("utf-8", "replace")
