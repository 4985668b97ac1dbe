"""The CLI lane: what it assumes of python-on-whales, and children that cancelling kills."""

from __future__ import annotations

import inspect
import os
import signal
import sys
import threading
import tomllib
from contextlib import aclosing
from importlib.metadata import version
from pathlib import Path

import anyio
import pytest
from packaging.requirements import Requirement
from python_on_whales import DockerClient, utils
from python_on_whales.exceptions import DockerException, NoSuchImage

from preflight_sdk.engine import cli

ROOT = Path(__file__).resolve().parents[3]
# A stand-in docker: says its pid, then sleeps (a `logs --follow` that never ends by itself).
_SLEEPER = f"#!{sys.executable}\nimport os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def sleeper(tmp_path: Path) -> str:
    script = tmp_path / "docker"
    script.write_text(_SLEEPER)
    script.chmod(0o755)
    return str(script)


def test_the_installed_python_on_whales_is_the_one_pinned() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pin = next(
        Requirement(d) for d in pyproject["project"]["dependencies"] if d.startswith("python-on-whales")
    )
    assert pin.specifier.contains(version("python-on-whales")), pin


def test_python_on_whales_still_runs_each_call_as_a_blocking_process_with_no_way_to_cancel() -> None:
    # `cli.call` abandons a cancelled call's thread; that is right only while a call is a plain
    # blocking `subprocess.run` that ends by itself and takes no timeout or cancel token.
    assert not inspect.iscoroutinefunction(utils.run)
    assert not {"timeout", "cancel", "process"} & set(inspect.signature(utils.run).parameters)
    # The lasting calls are run from the client's own command line, and fail with its typed errors.
    client = DockerClient(client_call=["docker"], host="tcp://192.0.2.2:2375")
    command = [str(part) for part in client.client_config.docker_cmd]
    assert Path(command[0]).name == "docker" and command[1:] == ["--host", "tcp://192.0.2.2:2375"]
    error = utils.get_docker_exception_type(b"Error response from daemon: No such image: x")
    assert issubclass(error, NoSuchImage)
    made = error(["docker"], 1, b"", b"No such image: x")
    assert (made.return_code, made.stderr) == (1, "No such image: x")


# The stream's `Popen` is dropped while its process still runs: the warning is the point.
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_python_on_whales_streams_leave_their_process_running_when_closed(sleeper: str) -> None:
    # Why `logs --follow`, events, builds and pulls are children of our own: closing
    # python-on-whales' stream does not end its docker process. When this fails, they need not be.
    pieces = utils.stream_stdout_and_stderr([sleeper])
    pid = int(next(iter(pieces))[1])
    pieces.close()  # type: ignore[attr-defined]
    try:
        assert _alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


@pytest.mark.anyio
async def test_a_closed_or_cancelled_child_is_killed_and_leaves_no_thread(sleeper: str) -> None:
    threads = {t.ident for t in threading.enumerate()}
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    # What this process already runs (a session's second daemon, an sshd) is not this test's.
    earlier = set(children.read_text().split())
    async with aclosing(cli.lines([sleeper])) as pieces:
        async for _, first in pieces:
            closed = int(first)
            break
    with anyio.move_on_after(0.5) as scope:
        await cli.run([sleeper])
    assert scope.cancelled_caught
    assert not _alive(closed)
    kids = set(children.read_text().split()) - earlier
    assert not [pid for pid in map(int, kids) if _alive(pid)], "a cancelled child still runs"
    left = {t.ident for t in threading.enumerate() if t.name == "preflight-docker-child"} - threads
    assert not left


@pytest.mark.anyio
async def test_a_failing_command_raises_python_on_whales_typed_error_with_its_stderr(tmp_path: Path) -> None:
    script = tmp_path / "docker"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.exit('Error response from daemon: No such image: x')\n"
    )
    script.chmod(0o755)
    with pytest.raises(DockerException) as caught:
        await cli.run([str(script)])
    assert isinstance(caught.value, NoSuchImage) and caught.value.return_code == 1
    assert "No such image: x" in (caught.value.stderr or "")
