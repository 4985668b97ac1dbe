"""`run_command`: a command that times out, is cancelled or leaves children behind takes them all with it."""

from __future__ import annotations

import os
import sys

import anyio
import pytest

from preflight_sdk.processes.commands import run_command


@pytest.mark.anyio
async def test_run_command_times_out_and_kills_the_child() -> None:
    begun = anyio.current_time()
    with pytest.raises(TimeoutError):
        await run_command([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.3)
    assert anyio.current_time() - begun < 5


def _gone(pid: int) -> bool:
    """Whether `pid` no longer runs (absent, or a zombie waiting for its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def _until_gone(pid: int) -> bool:
    with anyio.move_on_after(5):
        while not _gone(pid):
            await anyio.sleep(0.05)
    return _gone(pid)


@pytest.mark.anyio
async def test_run_command_kills_what_the_command_left_running_and_does_not_wait_for_it() -> None:
    # The background sleep holds the command's stdout open: without killing it, reading the
    # output to its end would wait the whole 300 s.
    with anyio.fail_after(10):
        done = await run_command(["sh", "-c", "sleep 300 & echo $!; echo done >&2"], input=b"ignored")
    pid = int(done.stdout.strip())
    assert (done.returncode, done.stderr) == (0, "done\n")
    assert await _until_gone(pid), "the leftover sleep was killed"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["timeout", "cancel"])
async def test_run_command_stopped_early_kills_the_command_and_its_children(
    tmp_path: os.PathLike[str], how: str
) -> None:
    pidfile = os.path.join(tmp_path, "pids")
    argv = ["sh", "-c", f"sleep 300 & echo $$ $! > {pidfile}; wait"]
    with anyio.fail_after(10):
        if how == "timeout":
            with pytest.raises(TimeoutError):
                await run_command(argv, timeout=0.5)
        else:
            with anyio.move_on_after(0.5):
                await run_command(argv)
    with open(pidfile) as pids:
        shell, sleeper = (int(p) for p in pids.read().split())
    assert await _until_gone(shell) and await _until_gone(sleeper)
