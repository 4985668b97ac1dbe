"""Mocks that outlive the command that started them: one detached mock host process per project.

A kept environment (`setup`, `up`, `run --keep`, an MCP server leaving its environment running)
must go on answering its containers' calls to the mocks after the process that started them
exits. Mocks first run in that process (`MockHost`, a thread: cheapest for the inner loop); when
it exits with the environment still up, `hand_off` stops them and starts the same mocks, on the
same ports and addresses, in a process of its own (`python -m preflight_sdk.mocks.serve`) in a
new session, so no terminal signal or closing pipe of the caller reaches it. That process serves
until the environment is gone (`clean` stops it; it also stops by itself within a second once the
state file no longer names its session) and answers the admin endpoints like any mock, so
`status`, `mock_requests` and the run's reset reach it over HTTP from any process.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from preflight_sdk.config.model import MockConfig
from preflight_sdk.core.errors import MockError, PreflightError

if TYPE_CHECKING:
    import httpx

    from .host import MockHost

logger = logging.getLogger("preflight_sdk.mocks")

__all__ = ["DetachedSpec", "hand_off", "is_detached_host", "keep_on_exit", "spawn_detached", "stop_detached"]

SERVE_MODULE = "preflight_sdk.mocks.serve"
_READY_TIMEOUT = 20.0
_STOP_TIMEOUT = 5.0


class DetachedSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What a detached mock host serves, the session it serves for, and how it shows what it holds.

    Handed to the host on its standard input, never written to disk: the routes may hold values
    interpolated from the environment (`{{env.API_KEY}}`), and `redact_values` are secrets.
    """

    mocks: dict[str, MockConfig]
    bind_hosts: list[str]
    state_file: str  # `.preflight/state.json` of the checkout
    session_id: str  # the host stops once the state file names another session (or is gone)
    redact_names: list[str] = msgspec.field(default_factory=list)  # the redaction policy's names
    redact_values: list[str] = msgspec.field(default_factory=list)  # ...and its secret values
    admin_token: str | None = None  # with it, the admin endpoints read the journal as recorded
    tls_folder: str | None = None  # the project's CA (`.preflight/tls`), for the mocks with `hosts`
    tls_binds: list[str] = msgspec.field(default_factory=list)  # where they answer HTTPS
    tls_port: int = 443


def spawn_detached(spec: DetachedSpec, folder: str | os.PathLike[str]) -> int:
    """Start a detached mock host serving `spec` and return its pid once every mock answers.

    Every mock must have its port set (the ports the containers already use). The spec goes to
    the host on its standard input; its command line names the state file and session it serves
    (so `clean` can tell it from another checkout's), and its log is `folder/mocks.log`. Blocking.

    Raises:
        MockError: `MOCKS_NOT_RUNNING` when the host exited or did not answer in time (the last
            lines of its log in the message); nothing is left running then.
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    (path / "mocks.json").unlink(missing_ok=True)  # where earlier versions wrote the spec, secrets and all
    log_file = path / "mocks.log"
    with open(log_file, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", SERVE_MODULE, "--state", spec.state_file, "--session", spec.session_id],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
            start_new_session=True,  # no SIGHUP/SIGINT of the caller's terminal reaches it
            close_fds=True,
            cwd=str(path),
        )
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # a host that died at once: said below
        process.stdin.write(msgspec.json.encode(spec))
    with contextlib.suppress(BrokenPipeError):
        process.stdin.close()
    ports = {name: mock.port for name, mock in spec.mocks.items()}
    if _answers_in_time(process, ports):
        return process.pid
    if process.poll() is None:
        process.kill()
    process.wait()
    tail = log_file.read_text(errors="replace").splitlines()[-10:]
    raise MockError(
        "the detached mock host did not start: " + (" | ".join(tail) or "no output"),
        code="MOCKS_NOT_RUNNING",
        hint=f"see {log_file}; `setup` starts the mocks again in its own process",
        details={"ports": ports},
    )


def is_detached_host(pid: int, state_file: str | None = None) -> bool:
    """Whether process `pid` is a detached mock host (its command line names the serve module),
    and, with `state_file`, one that serves the environment of that state file."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if SERVE_MODULE.encode() not in argv:
        return False
    if state_file is None:
        return True
    served = argv[argv.index(b"--state") + 1] if b"--state" in argv[:-1] else None
    return served is not None and os.path.abspath(os.fsdecode(served)) == os.path.abspath(state_file)


def stop_detached(pid: int, *, state_file: str) -> bool:
    """Stop the detached mock host `pid` of the environment `state_file` (SIGTERM, then SIGKILL);
    False when no such host runs as `pid`.

    The pid is checked first to be a mock host serving that very environment: a recorded pid
    reused by another process, or the host of another checkout named in a stale or copied state
    file, is never signalled. Blocking (at most a few seconds).
    """
    if pid <= 0 or pid == os.getpid() or not is_detached_host(pid, state_file):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_TIMEOUT
    while time.monotonic() < deadline:
        if not is_detached_host(pid):
            return True
        _reap(pid)
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)
    return True


def _reap(pid: int) -> None:
    """Collect `pid` if it is our own child (a host this process spawned), so it is not a zombie."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _answers_in_time(process: subprocess.Popen[bytes], ports: Mapping[str, int]) -> bool:
    """Poll every mock's health endpoint until all answer as themselves, the host exits or time is up."""
    import httpx  # lazy: only a hand-off pays for it

    # trust_env=False: the host is on loopback, never behind the caller's HTTP(S)_PROXY.
    with httpx.Client(timeout=1.0, trust_env=False) as client:
        deadline = time.monotonic() + _READY_TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            if all(_answers(client, name, port) for name, port in ports.items()):
                return True
            time.sleep(0.02)
    return False


def _answers(client: httpx.Client, name: str, port: int) -> bool:
    """Whether the mock `name` answers its health endpoint on `port`."""
    import httpx

    try:
        response = client.get(f"http://127.0.0.1:{port}/_mock/health")
    except httpx.HTTPError:
        return False
    if response.status_code != 200:
        return False
    try:
        return bool(msgspec.json.decode(response.content).get("name") == name)
    except (msgspec.DecodeError, AttributeError):
        return False  # something else listens on the port


def hand_off(
    host: MockHost, *, state_file: str, session_id: str, folder: str | os.PathLike[str]
) -> int | None:
    """Move `host`'s running mocks into a detached host on the same ports; return its pid.

    None when `host` does not serve (stopped, or its environment was cleaned). Blocking: the
    mocks stop here, then answer again from the new process within a fraction of a second.
    """
    if not host.running():
        return None
    ports = {name: host.port(name) for name in host.names}
    spec = DetachedSpec(
        mocks={name: msgspec.structs.replace(mock, port=ports[name]) for name, mock in host.configs.items()},
        bind_hosts=host.bind_hosts,
        state_file=state_file,
        session_id=session_id,
        redact_names=list(host.redactor.words),
        redact_values=list(host.redactor.values),
        admin_token=host.admin_token,
        tls_folder=str(Path(host.tls.ca.cert).parent) if host.tls is not None else None,
        tls_binds=host.tls_binds,
        tls_port=host.tls_port or 443,
    )
    host.stop_blocking()
    return spawn_detached(spec, folder)


class _Kept(msgspec.Struct, frozen=True):
    host: MockHost
    state_file: str
    session_id: str
    folder: str
    wanted: Callable[[], bool]  # still kept now? (the environment runs for this session)
    record: Callable[[int], None]  # note the detached host's pid where other processes look


_kept: dict[str, _Kept] = {}
_kept_lock = threading.Lock()


def keep_on_exit(
    host: MockHost,
    *,
    state_file: str,
    session_id: str,
    folder: str,
    wanted: Callable[[], bool],
    record: Callable[[int], None],
) -> None:
    """Hand `host` off to a detached host when this interpreter exits, if `wanted()` then says so.

    One entry per state file: a later host of the same checkout replaces the earlier one. Called
    at exit, `wanted` decides (the environment is still running for this session) and `record`
    stores the new pid (in the state file). Nothing is done for a host that no longer serves.
    """
    with _kept_lock:
        if not _kept:
            atexit.register(_hand_off_all)
        _kept[state_file] = _Kept(host, state_file, session_id, folder, wanted, record)


def _hand_off_all() -> None:
    with _kept_lock:
        entries = list(_kept.values())
        _kept.clear()
    for entry in entries:
        try:
            if not entry.host.running() or not entry.wanted():
                continue
            pid = hand_off(
                entry.host, state_file=entry.state_file, session_id=entry.session_id, folder=entry.folder
            )
            if pid is not None:
                entry.record(pid)
        except (PreflightError, OSError) as exc:  # at exit: say why, never raise
            logger.warning("the mocks could not be kept running after exit: %s", exc)
