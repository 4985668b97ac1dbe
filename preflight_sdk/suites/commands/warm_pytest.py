"""pytest suites run by an interpreter kept warm between runs, like a fork server.

A cold `python -m pytest` spends most of its time importing pytest and its plugins (about 1 s of
the 1.2 s a two-test suite takes when the interpreter has hypothesis, anyio, xdist, respx
installed). Where a next run is expected (the environment is kept, in a long-lived process: the
MCP server, a notebook, `watch`), a server started in the background after a pytest suite ran
imports them once, in the suite's own interpreter, and forks one child per later run
(`warm_pytest_server.py`, standard library only). The child imports conftest.py and the tests
itself, so every edit is seen; it runs pytest exactly as `python -m pytest` does.

A server is used only for the interpreter, working directory and environment it was started with
(the values preflight sets per run, `PREFLIGHT_*`, `TRACEPARENT` and the other variables of
`RunEnvironment.process_env`, aside), and only while no file it imported changed (it checks
before each fork: a `pip install` or an edited plugin is seen). Otherwise, or when it is still
warming up or died, the suite runs cold as before and a fresh server is started afterwards. A
timeout or a cancellation kills the child's process group. A server exits when the process that
started it does (end of file on its stdin), on `clean`, and when its project goes away; a
project keeps at most four (about 60 MB each), the least recently used idle one making room.

`PREFLIGHT_WARM_PYTEST=0` turns it off.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import weakref
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from preflight_sdk.processes.commands import Completed
from preflight_sdk.processes.groups import ProcessGroups

__all__ = ["WarmPytest", "warm_enabled"]

_SERVER = Path(__file__).with_name("warm_pytest_server.py")
# Runs the server's file as `__main__` in any Python 3.8+ (no preflight needed there): a short
# command line for `ps`, and tracebacks that name the file.
_BOOT = "import sys; p = sys.argv.pop(1); exec(compile(open(p, 'rb').read(), p, 'exec'))"
_PER_RUN_PREFIX = "PREFLIGHT_"
_OUTPUT_LIMIT = 256_000  # bytes kept of each stream: the end, where pytest's summary is
_LINE_LIMIT = 1 << 16
_START_FAILURES = 2  # a server that never comes up this many times is not tried again
_MAX_SERVERS = 4  # per project (about 60 MB each): the least recently used idle one makes room
_REAP = 5.0

Key = tuple[str, str, tuple[tuple[str, str], ...]]


def warm_enabled() -> bool:
    """Whether warm pytest servers may be used (`PREFLIGHT_WARM_PYTEST=0` turns them off)."""
    return os.environ.get("PREFLIGHT_WARM_PYTEST", "1").strip().lower() not in ("0", "false", "no", "off")


class _Server:
    """One warm interpreter: its process (stdin a pipe only we hold) and its private folder."""

    def __init__(
        self, process: subprocess.Popen[bytes], folder: str, groups: ProcessGroups | None = None
    ) -> None:
        self.process = process
        self.folder = folder
        self.groups = groups  # where its process group is recorded (stopped by `clean` if we die)
        self.socket = os.path.join(folder, "socket")
        self.served = False  # it was seen ready: it may have children of its own sessions

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def ready(self) -> bool:
        ready = self.alive and os.path.exists(self.socket)
        self.served = self.served or ready
        return ready

    def stop(self) -> None:
        """End of file on its stdin: a serving server kills its running children and exits at
        once. One still warming up is killed with its process group (its probe child)."""
        serving = self.served or self.ready
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=1 if serving else 0)
        except subprocess.TimeoutExpired:
            _kill_group(self.process.pid)
            self.process.wait()
        if self.groups is not None:
            self.groups.forget(self.process.pid)
        shutil.rmtree(self.folder, ignore_errors=True)


class WarmPytest:
    """The warm pytest servers of one project: one per interpreter, directory and environment."""

    def __init__(self) -> None:
        self._servers: dict[Key, _Server] = {}
        self._retired: list[_Server] = []  # stale ones, ending with their last child
        self._failures: dict[Key, int] = {}
        self._busy: dict[Key, int] = {}  # runs in flight per server
        self._finalizer = weakref.finalize(self, _stop_all, self._servers, self._retired)
        # The project's record of running process groups (set by the runner that knows the project).
        self.groups: ProcessGroups | None = None

    async def run(
        self,
        python: str,
        args: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        per_run: Collection[str],
        timeout: float,
        scratch: Path,
    ) -> Completed | None:
        """Run `python -m pytest ARGS` in a child of the warm server; None when no server can be used.

        `per_run` names the variables whose values may differ from the server's.

        Raises:
            TimeoutError: when `timeout` passes first (the child's process group is killed).
        """
        full = {**os.environ, **env}
        key = _key(python, cwd, full, per_run)
        server = self._servers.get(key)
        if server is None or not server.ready:
            return None
        self._servers[key] = self._servers.pop(key)  # the most recently used last
        request = {
            "args": args,
            "cwd": str(cwd),
            "env": full,
            "stdout": str(scratch / "stdout"),
            "stderr": str(scratch / "stderr"),
        }
        self._busy[key] = self._busy.get(key, 0) + 1
        try:
            code = await self._request(key, server, request, timeout)
        finally:
            self._busy[key] -= 1
        if code is None:
            return None
        return Completed(
            returncode=code,
            stdout=await anyio.to_thread.run_sync(_tail, scratch / "stdout"),
            stderr=await anyio.to_thread.run_sync(_tail, scratch / "stderr"),
        )

    async def _request(
        self, key: Key, server: _Server, request: dict[str, Any], timeout: float
    ) -> int | None:
        """Send one run; return its exit status, or None when the server could not run it."""
        pid: int | None = None
        try:
            with anyio.fail_after(timeout):
                stream = await anyio.connect_unix(server.socket)
                async with stream:
                    await stream.send(json.dumps(request).encode() + b"\n")
                    lines = BufferedByteReceiveStream(stream)
                    first = await _message(lines)
                    if first is None or "pid" not in first:
                        self._retire(key, server)  # stale, or gone
                        return None
                    pid = int(first["pid"])
                    if self.groups is not None:
                        self.groups.record(pid, "pytest-run")
                    try:
                        last = await _message(lines)
                    except BaseException:
                        _kill_group(pid)
                        with anyio.CancelScope(shield=True), anyio.move_on_after(_REAP):
                            await _message(lines)  # the server reaped it
                        raise
                    if last is None or "exit" not in last:  # the server died under the run
                        _kill_group(pid)
                        self._retire(key, server)
                        return None
                    return int(last["exit"])
        except TimeoutError:
            raise  # an OSError too, but the run's own deadline: not the server's failure
        except OSError:
            if pid is not None:
                _kill_group(pid)
            self._retire(key, server)
            return None
        finally:
            if pid is not None and self.groups is not None:
                self.groups.forget(pid)

    def prepare(self, python: str, cwd: Path, env: Mapping[str, str], per_run: Collection[str]) -> None:
        """Start a server for this suite's interpreter, directory and environment unless one runs.

        It warms up in the background: the next run uses it once it is ready.
        """
        self._reap()
        full = {**os.environ, **env}
        key = _key(python, cwd, full, per_run)
        server = self._servers.get(key)
        if server is not None:
            if server.alive:
                return
            del self._servers[key]
            if not os.path.exists(server.socket):
                self._failures[key] = self._failures.get(key, 0) + 1  # died warming up
            server.stop()
        if self._failures.get(key, 0) >= _START_FAILURES or not self._make_room():
            return
        folder = tempfile.mkdtemp(prefix="preflight-pytest-")
        quiet = {name: value for name, value in full.items() if not _per_run(name, per_run)}
        if self.groups is not None:
            quiet.update(self.groups.mark())
        try:
            with open(os.path.join(folder, "server.log"), "wb") as log:
                process = subprocess.Popen(
                    [python, "-c", _BOOT, str(_SERVER), folder],
                    cwd=cwd,
                    env=quiet,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,  # a Ctrl-C at the terminal is not for it
                )
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            self._failures[key] = _START_FAILURES
            return
        if self.groups is not None:
            self.groups.record(process.pid, "warm-pytest")
        self._servers[key] = _Server(process, folder, self.groups)

    def _make_room(self) -> bool:
        """Stop the least recently used idle servers past the limit; False when all are busy."""
        while len(self._servers) >= _MAX_SERVERS:
            idle = next((key for key in self._servers if not self._busy.get(key)), None)
            if idle is None:
                return False
            self._servers.pop(idle).stop()
        return True

    def _retire(self, key: Key, server: _Server) -> None:
        if self._servers.get(key) is server:
            del self._servers[key]
            self._retired.append(server)

    def _reap(self) -> None:
        for server in [s for s in self._retired if not s.alive]:
            self._retired.remove(server)
            server.stop()

    def close(self) -> None:
        """Stop every server (their running children are killed)."""
        self._finalizer()

    @property
    def pids(self) -> list[int]:
        """The process ids of the servers still running."""
        return [s.process.pid for s in [*self._servers.values(), *self._retired] if s.alive]

    @property
    def ready_pids(self) -> list[int]:
        """The process ids of the servers that take runs now (warmed up, not stale)."""
        return [s.process.pid for s in self._servers.values() if s.ready]


def _stop_all(servers: dict[Key, _Server], retired: list[_Server]) -> None:
    for server in [*servers.values(), *retired]:
        server.stop()
    servers.clear()
    retired.clear()


def _per_run(name: str, per_run: Collection[str]) -> bool:
    return name.startswith(_PER_RUN_PREFIX) or name == "TRACEPARENT" or name in per_run


def _key(python: str, cwd: Path, env: Mapping[str, str], per_run: Collection[str]) -> Key:
    kept = tuple(sorted((k, v) for k, v in env.items() if not _per_run(k, per_run)))
    return (python, str(cwd), kept)


async def _message(lines: BufferedByteReceiveStream) -> dict[str, Any] | None:
    """The server's next message; None when it closed the connection."""
    try:
        raw = await lines.receive_until(b"\n", _LINE_LIMIT)
    except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError, anyio.DelimiterNotFound):
        return None
    message = json.loads(raw)
    return message if isinstance(message, dict) else None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _tail(path: Path) -> str:
    """The end of an output file, at most `_OUTPUT_LIMIT` bytes of it."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - _OUTPUT_LIMIT))
            data = file.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return text if size <= _OUTPUT_LIMIT else "…" + text
