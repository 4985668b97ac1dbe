"""`run_command`: a suite's command (or a check's) as a child that cancelling kills, with its process group.

The command runs in a session of its own; whatever it leaves running when it ends, times out or
is cancelled is killed with it, so a cancelled MCP call or a Ctrl-C leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence

import anyio
import msgspec
from anyio.abc import ByteReceiveStream

__all__ = ["Completed", "run_command"]


class Completed(msgspec.Struct, frozen=True, kw_only=True):
    """A finished child process."""

    returncode: int
    stdout: str
    stderr: str


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
    another process can stop it, see `groups`).

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
                    # A command that exits without reading its input is no error (anyio 4.11 lets
                    # the pipe's ConnectionResetError through instead of BrokenResourceError).
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
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
