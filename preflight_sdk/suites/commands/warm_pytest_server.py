"""A warm pytest: pytest and its plugins imported once, one forked child per run.

preflight never imports this module: it runs this file in a suite's own interpreter (any
virtualenv, Python 3.8+, standard library only) as `python -c <exec this file> FILE DIR`, with
its stdin a pipe preflight holds (EOF: preflight is gone, so this process kills its running
children and exits), in the suite's working directory and environment (less the values
preflight sets per run).

Warming up does what `python -m pytest` does before it reads the project: import pytest, fill
`importlib.metadata`'s caches and load every `pytest11` entry-point plugin through pytest's own
configuration code (so the plugins' modules are assertion-rewritten exactly as in a cold run), in
an empty scratch directory, then undo that configuration. No conftest.py or test file is imported
here: each child imports them, so edits are always seen.

Then it serves requests on the unix socket DIR/socket (bound under another name and renamed once
listening: the socket existing means ready). One request per connection, one JSON line each way:

    -> {"args": [...], "cwd": "...", "env": {...}, "stdout": "path", "stderr": "path"}
    <- {"pid": N}            the child runs (in its own session: its process group is N)
    <- {"exit": CODE}        how it ended (negative: killed by that signal, like Popen)
    <- {"stale": "reason"}   instead of a pid: a module file it imported changed; it exits
                             once its running children have ended, and a new one must be started

A connection closed before its child ended kills the child's process group.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import sys
import tempfile
import threading
import traceback
import warnings
from typing import Any

_LINE_LIMIT = 1 << 24


def main() -> None:
    here = sys.argv[1]
    parent = os.dup(0)  # the pipe preflight holds; fd 0 itself becomes /dev/null
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.close(null)
    if sys.path and sys.path[0] == "":
        sys.path[0] = os.getcwd()  # `python -m` puts the working directory itself there
    _warm()
    if threading.active_count() > 1:
        sys.stderr.write("a plugin started a thread on import: forking would not be safe\n")
        sys.exit(3)
    watched = _Watched()
    gc.collect()
    if hasattr(gc, "freeze"):
        gc.freeze()  # the children then leave the warm objects' pages shared
    _Server(here, parent, watched).serve()


def _warm() -> None:
    """Import what every run of pytest imports, the way it imports it."""
    import importlib.metadata

    import pytest  # noqa: F401

    importlib.metadata.entry_points()
    saved = (list(sys.path), list(sys.meta_path), os.getcwd(), list(warnings.filters), sys.argv)
    with tempfile.TemporaryDirectory(prefix="preflight-warm-") as scratch:
        with open(os.path.join(scratch, "pytest.ini"), "w") as ini:
            ini.write("[pytest]\n")
        with open(os.path.join(scratch, "test_warm.py"), "w") as test:
            test.write("def test_passes():\n    assert True\n\n\ndef test_fails():\n    assert [1] == [2]\n")
        try:
            from _pytest.config import _prepareconfig

            probe = _probe(scratch)  # meanwhile, in parallel
            # pytest's own start-up, up to loading the plugins: with its assertion-rewriting
            # import hook installed, as in a cold run (their modules are rewritten the same way).
            config = _prepareconfig([scratch, "-p", "no:cacheprovider", "--capture=no", "-q"])
            try:
                for name in _probed(probe):
                    try:
                        importlib.import_module(name)
                    except BaseException:
                        pass
            finally:
                finish = getattr(config, "_ensure_unconfigure", None)
                if finish is not None:
                    finish()
        except BaseException:  # an older or newer pytest: only pytest itself is warm
            traceback.print_exc()
        finally:
            sys.path[:], sys.meta_path[:], sys.argv = saved[0], saved[1], saved[4]
            os.chdir(saved[2])
            warnings.filters[:] = saved[3]  # type: ignore[index]


def _probe(scratch: str) -> tuple[int, int]:
    """Find the modules a whole pytest session imports beyond its start-up (plugins import some
    lazily, e.g. while reporting): run one in a forked child, on a passing and a failing test.
    Returns the child's pid and the pipe it writes their names to."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (1, 2):
                os.dup2(null, fd)
            os.chdir(scratch)
            junit = os.path.join(scratch, "junit.xml")
            pytest_main = sys.modules["pytest"].main
            pytest_main(
                [scratch, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "-o", "junit_logging=all"]
            )
            names = [
                name
                for name, module in list(sys.modules.items())
                if not str(getattr(module, "__file__", "") or "").startswith(scratch)
                and name not in ("__main__", "__mp_main__")
            ]
            with os.fdopen(write, "w") as out:
                out.write("\n".join(names))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _probed(probe: tuple[int, int]) -> list[str]:
    """The names the probe found that this process has not imported (in their import order)."""
    pid, read = probe
    with os.fdopen(read) as found:
        names = [name for name in found.read().split("\n") if name and name not in sys.modules]
    os.waitpid(pid, 0)
    return names


class _Watched:
    """What this process imported, to see a change before each fork: every module file (its
    modification time and size), and the names importable from each directory on sys.path (a
    package installed or removed, a module added that would shadow another, a `.pth` file)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, int]] = {}
        for module in list(sys.modules.values()):
            name = getattr(module, "__file__", None)
            if isinstance(name, str):
                self.files[name] = _mark(name)
        self.folders: dict[str, tuple[int, frozenset[str]]] = {}
        for entry in sys.path:
            if isinstance(entry, str) and entry and os.path.isdir(entry):
                self.folders[entry] = (_mark(entry)[0], _importable(entry))
        for entry in list(self.folders):
            for pth in (name for name in self.folders[entry][1] if name.endswith(".pth")):
                self.files[os.path.join(entry, pth)] = _mark(os.path.join(entry, pth))

    def changed(self) -> str | None:
        """The first path that changed since the snapshot (None: nothing did)."""
        for path, mark in self.files.items():
            if _mark(path) != mark:
                return path
        for folder, (mtime, names) in list(self.folders.items()):
            now = _mark(folder)[0]
            if now != mtime:
                if _importable(folder) != names:
                    return folder
                self.folders[folder] = (now, names)  # only other files came or went
        return None


def _importable(folder: str) -> frozenset[str]:
    """The entries of a sys.path directory that matter to an import or to the plugins found there."""
    found = set()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return frozenset()
    for entry in entries:
        name = entry.name
        if name.endswith((".pth", ".dist-info", ".egg-info", ".egg-link", ".egg")):
            found.add(name)
        elif name.endswith((".py", ".pyc", ".so", ".pyd")) and name.split(".")[0].isidentifier():
            found.add(name)
        elif name.isidentifier() and name != "__pycache__" and entry.is_dir():
            found.add(name)
    return frozenset(found)


def _mark(path: str) -> tuple[int, int]:
    try:
        found = os.stat(path)
    except OSError:
        return (-1, -1)
    return (found.st_mtime_ns, found.st_size)


class _Server:
    def __init__(self, here: str, parent: int, watched: _Watched) -> None:
        self.watched = watched
        self.parent = parent
        self.path = os.path.join(here, "socket")
        self.listener: socket.socket | None = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path + ".new")
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.signal(signal.SIGCHLD, lambda number, frame: None)
        signal.set_wakeup_fd(self.wake_write, warn_on_full_buffer=False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(parent, selectors.EVENT_READ, "parent")
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "child")
        self.pending: dict[socket.socket, bytes] = {}  # connections whose request is incomplete
        self.running: dict[int, socket.socket | None] = {}  # child pid -> its connection
        os.rename(self.path + ".new", self.path)

    def serve(self) -> None:
        """Serve until preflight goes away (or, stale, until the last child ended); then no child
        of this server is left running, whatever went wrong."""
        try:
            while self.listener is not None or self.running:
                for key, _ in self.selector.select():
                    what = key.data
                    if what == "parent":
                        if not os.read(self.parent, 4096):
                            return
                    elif what == "accept":
                        self.accept()
                    elif what == "child":
                        _drain(self.wake_read)
                        self.reap()
                    else:
                        self.receive(key.fileobj, what)  # type: ignore[arg-type]
        finally:
            self.stop()

    def accept(self) -> None:
        if self.listener is None:
            return
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        conn.setblocking(False)
        self.pending[conn] = b""
        self.selector.register(conn, selectors.EVENT_READ, "request")

    def receive(self, conn: socket.socket, what: str) -> None:
        try:
            data = conn.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if what == "running":
            if not data:  # the caller went away (cancelled, timed out, died): so does its run
                self.selector.unregister(conn)
                conn.close()
                for pid, owner in list(self.running.items()):
                    if owner is conn:
                        self.running[pid] = None
                        _kill_group(pid)
            return
        buffer = self.pending[conn] + data
        if not data or len(buffer) > _LINE_LIMIT:
            self.drop(conn)
            return
        if b"\n" not in buffer:
            self.pending[conn] = buffer
            return
        del self.pending[conn]
        self.selector.unregister(conn)
        try:
            request = json.loads(buffer.split(b"\n", 1)[0])
        except ValueError:
            conn.close()
            return
        self.start(conn, request)

    def drop(self, conn: socket.socket) -> None:
        self.pending.pop(conn, None)
        self.selector.unregister(conn)
        conn.close()

    def start(self, conn: socket.socket, request: dict[str, Any]) -> None:
        conn.setblocking(True)
        changed = self.watched.changed()
        if changed is not None:
            try:
                _send(conn, {"stale": f"{changed} changed since it was imported"})
            except OSError:
                pass
            conn.close()
            self.close_listener()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                self.forget(conn)
                code = _child(request)
            finally:
                os._exit(code)
        self.running[pid] = conn
        try:
            _send(conn, {"pid": pid})
        except OSError:  # the caller is gone already: so is its run
            self.running[pid] = None
            conn.close()
            _kill_group(pid)
        else:
            conn.setblocking(False)
            self.selector.register(conn, selectors.EVENT_READ, "running")
        self.reap()  # a child that ended before its connection was watched

    def forget(self, conn: socket.socket) -> None:
        """In a child: drop everything of the server (signal handling, descriptors)."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.selector.close()
        for fd in (self.parent, self.wake_read, self.wake_write):
            os.close(fd)
        for other in [conn, *self.pending, *(c for c in self.running.values() if c is not None)]:
            other.close()
        if self.listener is not None:
            self.listener.close()

    def reap(self) -> None:
        while self.running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.running.pop(pid, None)
            if conn is not None:
                self.selector.unregister(conn)
                try:
                    conn.setblocking(True)
                    _send(conn, {"exit": _exit_code(status)})
                except OSError:
                    pass
                conn.close()

    def close_listener(self) -> None:
        """Take no new request (this process is stale): it ends with its last child."""
        if self.listener is None:
            return
        self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def stop(self) -> None:
        self.close_listener()
        for pid in list(self.running):
            _kill_group(pid)
        for pid in list(self.running):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _child(request: dict[str, Any]) -> int:
    """Run pytest as `python -m pytest ARGS` would, in this forked process; return its exit status."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    if sys.path and not getattr(sys.flags, "safe_path", False):
        sys.path[0] = os.getcwd()
    sys.argv = ["pytest", *request["args"]]  # runpy sets argv[0] to pytest's __main__.py
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = [sys.orig_argv[0], "-m", "pytest", *request["args"]]
    code = 0
    try:
        import runpy

        runpy.run_module("pytest", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = _system_exit(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    # What the interpreter does on its way out: wait for threads, run atexit, flush.
    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except BaseException:
        pass
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    return code


def _system_exit(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    sys.stderr.write(f"{exc.code}\n")
    return 1


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


if __name__ == "__main__":
    main()
