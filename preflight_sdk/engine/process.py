"""Child processes that can be cancelled, with output delivered as whole lines.

Long or streaming docker commands (build, logs -f, exec, events) run here instead of in a thread:
when the caller's scope is cancelled, the child is killed, so a cancelled MCP call or a Ctrl-C
leaves no `docker build` running. Output is split on newlines across chunk boundaries, so no line
is ever torn in two (the original Preflight split per chunk).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Literal

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, Process

__all__ = ["Completed", "LineSplitter", "iter_lines", "reap", "run_command", "stream_command"]

Stream = Literal["stdout", "stderr"]


class Completed(msgspec.Struct, frozen=True, kw_only=True):
    """A finished child process."""

    returncode: int
    stdout: str
    stderr: str


class LineSplitter:
    """Accumulate bytes and hand out complete lines (CR LF, LF and lone CR all end a line).

    A CR LF torn between two chunks ends one line, not two: a chunk that ends with CR hands its
    line out at once and the LF that may open the next chunk is then skipped.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._after_cr = False

    def feed(self, chunk: bytes) -> list[str]:
        """Add `chunk`; return the lines it completed."""
        if not chunk:
            return []
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the second half of a CR LF whose CR ended the previous chunk
        self._after_cr = chunk.endswith(b"\r")
        self._buffer += chunk
        if b"\n" not in chunk and b"\r" not in chunk:
            return []  # the buffer holds no line end either: nothing completed
        *complete, self._buffer = self._buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return [line.decode("utf-8", "replace") for line in complete]

    def flush(self) -> list[str]:
        """Return the last, unterminated line (if any)."""
        rest, self._buffer = self._buffer, b""
        self._after_cr = False
        return [rest.decode("utf-8", "replace")] if rest else []


async def iter_lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    """Yield whole lines from a byte stream until it ends."""
    splitter = LineSplitter()
    async for chunk in stream:
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.flush():
        yield line


def _environment(extra: Mapping[str, str] | None) -> dict[str, str] | None:
    if not extra:
        return None
    return {**os.environ, **extra}


async def run_command(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    input: bytes | None = None,
    timeout: float | None = None,
    on_start: Callable[[int], None] | None = None,
) -> Completed:
    """Run `argv` to completion and capture its output (killed on cancellation or timeout).

    `on_start(pgid)` is called once the command runs, with its process group (to record it where
    another process can stop it, see `process_groups`).

    The command runs in a session of its own, and whatever it started that still runs when it
    ends, times out or is cancelled (its process group: a test's server, a `sleep &`) is killed
    with it: nothing is left behind, and no leftover holding its output open makes this wait.

    Raises:
        TimeoutError: when `timeout` (seconds) passes first.
        OSError: when the program cannot be started.
    """
    process = await anyio.open_process(
        list(argv),
        env=_environment(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
        start_new_session=True,
    )
    if on_start is not None:
        on_start(process.pid)
    out, err = bytearray(), bytearray()

    async def drain(stream: ByteReceiveStream | None, sink: bytearray) -> None:
        if stream is not None:
            async for chunk in stream:
                sink.extend(chunk)

    try:
        with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain, process.stdout, out)
                tg.start_soon(drain, process.stderr, err)
                if input is not None and process.stdin is not None:
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await process.stdin.send(input)
                    await process.stdin.aclose()
                await process.wait()
                _kill_group(process.pid)  # its leftovers: their copies of the pipes close too
    finally:
        with anyio.CancelScope(shield=True):
            _kill_group(process.pid)
            await process.aclose()
    assert process.returncode is not None
    return Completed(
        returncode=process.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )


def _kill_group(pgid: int) -> None:
    """SIGKILL every process left in the process group `pgid` (none left: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def stream_command(
    argv: Sequence[str],
    on_line: Callable[[Stream, str], None],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> int:
    """Run `argv`, calling `on_line(stream, line)` for every whole output line; return its exit code."""
    async with await anyio.open_process(
        list(argv), env=_environment(env), cwd=cwd, stdin=subprocess.DEVNULL
    ) as process:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_pump, process.stdout, "stdout", on_line)
                tg.start_soon(_pump, process.stderr, "stderr", on_line)
            return await process.wait()
        except BaseException:
            await reap(process)
            raise


async def _pump(
    stream: ByteReceiveStream | None, name: Stream, on_line: Callable[[Stream, str], None]
) -> None:
    if stream is None:
        return
    async for line in iter_lines(stream):
        on_line(name, line)


async def reap(process: Process) -> None:
    """Kill `process` if it still runs and wait for it, even while being cancelled."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass
            with anyio.move_on_after(5):
                await process.wait()
