"""The stdio transport that `verify` hands to the official MCP client.

It does what `mcp.client.stdio.stdio_client` does (spawn in a new session, newline-delimited
JSON-RPC over the pipes, close stdin then SIGTERM then SIGKILL on exit) and records what a
verifier needs and the SDK keeps to itself:

- the process (pid = process group id, exit status) and a marker in its environment, so every
  descendant can be found and stopped afterwards (`procs`);
- each stdout line that is not JSON (stdout pollution) and each JSON line that is not a JSON-RPC
  message, verbatim;
- the raw result of every request, so a listing the client rejects as spec-invalid can still be
  checked tool by tool;
- the processes still alive after the shutdown sequence.

stderr goes to the file the caller passes, never to our own stderr.
"""

from __future__ import annotations

import json
import math
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp.shared.message import SessionMessage

from .procs import kill_pids, living_processes, signal_group

__all__ = ["MAX_RECORDED", "STDIN_GRACE", "TERM_GRACE", "Recorder", "stdio_transport"]

STDIN_GRACE = 1.0
"""Seconds a server gets to exit on its own after its stdin closes (the spec's polite step)."""

TERM_GRACE = 2.0
"""Seconds between SIGTERM to the process group and SIGKILL."""

_REAP_WAIT = 2.0
_DRAIN_WAIT = 0.2
_POLL = 0.02
_MAX_RECORDED_LINE = 500
MAX_RECORDED = 20
"""Stray stdout lines kept verbatim; the rest are only counted (a chatty server must not fill memory)."""


class Recorder:
    """What the transport saw of one server; read by the session once the transport has closed.

    Attributes:
        marker: the value of the marker variable given to the server's environment.
        process: the spawned process, once spawned.
        phase: what the client is waiting for (for timeout messages).
        handshake_done: whether initialize (or discover) completed.
        server_gone: whether the server exited or closed its stdout before the shutdown began;
            a connection lost this way is the server's doing, not ours.
        stray_lines: the first `MAX_RECORDED` stdout lines that are not JSON, in order.
        stray_count: how many such lines there were in all.
        invalid_messages: the first `MAX_RECORDED` stdout lines that are JSON but not JSON-RPC.
        leftovers: pids still alive after the shutdown sequence.
    """

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.process: Process | None = None
        self.phase = "spawn"
        self.handshake_done = False
        self.server_gone = False
        self.shutting_down = False
        self.stray_lines: list[str] = []
        self.stray_count = 0
        self.invalid_messages: list[str] = []
        self.leftovers: list[int] = []
        self._methods: dict[str | int, str] = {}
        self._results: list[tuple[str, dict[str, Any] | None]] = []

    @property
    def pid(self) -> int | None:
        """The server's pid (also its process group id), once spawned."""
        return self.process.pid if self.process is not None else None

    @property
    def returncode(self) -> int | None:
        """The server's exit status, or None while it runs (or before it started)."""
        return self.process.returncode if self.process is not None else None

    def last_result(self, method: str) -> dict[str, Any] | None:
        """Return the raw `result` of the latest answered request for `method` (None for an error)."""
        for name, result in reversed(self._results):
            if name == method:
                return result if isinstance(result, dict) else None
        return None

    def _sent(self, message: SessionMessage) -> None:
        root = message.message
        if isinstance(root, types.JSONRPCRequest):
            self._methods[root.id] = root.method
            if root.method != "tools/list":  # the session names tools/list pages itself
                self.phase = root.method

    def _received(self, line: str) -> SessionMessage | None:
        try:
            data = json.loads(line)
        except ValueError:
            self.stray_count += 1
            if len(self.stray_lines) < MAX_RECORDED:
                self.stray_lines.append(line[:_MAX_RECORDED_LINE])
            return None
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValueError:
            if len(self.invalid_messages) < MAX_RECORDED:
                self.invalid_messages.append(line[:_MAX_RECORDED_LINE])
            return None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            method = self._methods.pop(message.id, None)
            if method is not None:
                result = data.get("result") if isinstance(message, types.JSONRPCResponse) else None
                self._results.append((method, result))
        return SessionMessage(message)


@asynccontextmanager
async def stdio_transport(
    argv: list[str],
    *,
    cwd: Path | None,
    env: dict[str, str],
    errlog: IO[bytes],
    recorder: Recorder,
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """Spawn `argv` in a new session and yield the client's (read, write) streams.

    Raises:
        OSError: the command cannot be started (not found, not executable, bad cwd).
    """
    process = await anyio.open_process(argv, cwd=cwd, env=env, stderr=errlog, start_new_session=True)
    recorder.process = process
    recorder.phase = "initialize"
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        deliver = True
        buffer = ""
        try:
            async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                lines = (buffer + chunk).split("\n")
                buffer = lines.pop()
                for line in lines:
                    text = line.rstrip("\r")
                    message = recorder._received(text) if text.strip() else None
                    if message is None or not deliver:
                        continue
                    try:
                        await read_writer.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        # The session is gone; keep draining so a server blocked on a full
                        # stdout pipe can still see its stdin close and exit.
                        deliver = False
            if buffer.strip():
                recorder._received(buffer)
            if not recorder.shutting_down:
                recorder.server_gone = True
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass  # our own shutdown closed the pipe under the read
        finally:
            await read_writer.aclose()

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    recorder._sent(message)
                    payload = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((payload + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading: end the session instead of letting a request hang.
            await read_writer.aclose()

    async def exit_watcher() -> None:
        # A server that exits while a child still holds its stdout gives the reader no EOF;
        # without this, the session would wait for the deadline instead of reporting the exit.
        await _exited(process, math.inf)
        await anyio.sleep(_DRAIN_WAIT)  # let the reader deliver what the server wrote last
        if not recorder.shutting_down:
            recorder.server_gone = True
            await read_writer.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        tg.start_soon(exit_watcher)
        try:
            yield read_stream, write_stream
        finally:
            # Shielded: a deadline that fired must not leave the server (or its children) running.
            with anyio.CancelScope(shield=True):
                write_stream.close()
                read_stream.close()
                await stop_server(process, recorder)
            tg.cancel_scope.cancel()


async def stop_server(process: Process, recorder: Recorder) -> None:
    """Close stdin, wait, SIGTERM, wait, SIGKILL; then do the same for any process left behind.

    "The group" here is the server's process group plus every process carrying the marker, so a
    child that left the group is signalled at the same moment as the rest.
    """
    recorder.shutting_down = True
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if not await _exited(process, STDIN_GRACE):
        await _signal_all(process.pid, recorder.marker, signal.SIGTERM)
        if not await _exited(process, TERM_GRACE):
            await _signal_all(process.pid, recorder.marker, signal.SIGKILL)
            await _exited(process, _REAP_WAIT)
    # The server is gone; its children may not be (a server that exits cleanly on EOF leaves
    # them running). Give them the same polite-then-forceful treatment.
    remaining = await _living(process.pid, recorder.marker)
    if remaining:
        await _signal_all(process.pid, recorder.marker, signal.SIGTERM)
        remaining = await _wait_gone(process.pid, recorder.marker, TERM_GRACE)
    if remaining:
        await _signal_all(process.pid, recorder.marker, signal.SIGKILL)
        remaining = await _wait_gone(process.pid, recorder.marker, _REAP_WAIT)
    recorder.leftovers = remaining
    for stream in (process.stdout, process.stdin):
        if stream is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()
    _close_transport(process)


async def _signal_all(pgid: int, marker: str, sig: signal.Signals) -> None:
    signal_group(pgid, sig)
    kill_pids(await _living(None, marker), sig)


async def _exited(process: Process, within: float) -> bool:
    # Poll returncode rather than wait(): on 3.11+ wait() also waits for pipe EOF, which a child
    # holding the pipe would delay indefinitely.
    deadline = anyio.current_time() + within
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_POLL)
    return True


async def _living(pgid: int | None, marker: str) -> list[int]:
    return await anyio.to_thread.run_sync(lambda: living_processes(pgid=pgid, marker=marker))


async def _wait_gone(pgid: int, marker: str, within: float) -> list[int]:
    deadline = anyio.current_time() + within
    while True:
        remaining = await _living(pgid, marker)
        if not remaining or anyio.current_time() >= deadline:
            return remaining
        await anyio.sleep(_POLL * 5)


def _close_transport(process: Process) -> None:
    """Close asyncio's subprocess transport now rather than at garbage collection (a ResourceWarning)."""
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):
            close()
