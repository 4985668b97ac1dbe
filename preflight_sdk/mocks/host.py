"""`MockHost`: a project's mocks, served from one background thread with its own event loop.

The thread runs uvicorn servers (httptools parser, uvloop loop) for every mock, so the mocks keep
answering while the caller's event loop is idle (a notebook between cells) or busy. The caller
only ever blocks a worker thread (`anyio.to_thread`): to wait for the servers to listen, and to
join the thread at stop. The thread is a daemon, so a forgotten host never keeps the interpreter
from exiting.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from preflight_sdk.config.model import MockConfig
from preflight_sdk.core.durations import parse_since
from preflight_sdk.core.errors import InfrastructureError, MockError, PreflightError, StateError
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.lifecycle import CleanAction, MockSetup
from preflight_sdk.core.results.mocks import JournalEntry, MockRequestsMock, MockRequestsResult

from .app import MockApp
from .journal import to_entry
from .listeners import bind_all, check_bind_hosts, close_all
from .proxy import Forwarder
from .record.recorder import Recorder
from .routes import CompiledMock, compile_all, compile_mock, recording_config
from .serving import Listening, Watch, serve_until
from .tls import TlsIdentity, bind_tls, hosts_of

logger = logging.getLogger("preflight_sdk.mocks")

__all__ = ["MockHost"]

_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 10.0


class MockHost:
    """The HTTP mocks of a project: start them, read what they received, reset and stop them.

    Each mock listens on 127.0.0.1 and on the extra `bind_hosts` (the Docker bridge gateway, so
    containers reach it through `--add-host <mock>:host-gateway`), never on all interfaces, with
    the same port on every address.
    """

    def __init__(
        self,
        mocks: Mapping[str, MockConfig],
        *,
        bind_hosts: Sequence[str] = ("127.0.0.1",),
        still_wanted: Callable[[], bool] | None = None,
        watch_interval: float = 1.0,
        redactor: Redactor = DEFAULT,
        admin_token: str | None = None,
        tls: TlsIdentity | None = None,
        tls_binds: Sequence[str] = (),
        tls_port: int = 443,
    ) -> None:
        """Compile the mocks' routes (no I/O; nothing listens until `start`).

        `still_wanted` (blocking, called every `watch_interval` seconds on a worker thread) lets
        the mocks stop by themselves once their environment is gone, e.g. cleaned by another
        process: the first time it returns False they stop listening. The admin endpoints show
        what they return through `redactor`; a request with `admin_token` reads the journal raw.
        With `tls`, the mocks with `hosts` also answer HTTPS on `tls_port` of each of `tls_binds`
        (one listener for all of them: each request goes to the mock its `Host` names).

        Raises:
            ConfigError: a route is invalid (bad delay, path without a leading `/`…).
            InputError: a bind address is a wildcard (`0.0.0.0`, `::`).
        """
        self._configs = dict(mocks)
        self._hosts = check_bind_hosts(bind_hosts)
        self._compiled: dict[str, CompiledMock] = compile_all(self._configs)
        self._apps: dict[str, MockApp] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._stop_event: anyio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._still_wanted = still_wanted
        self._watch_interval = watch_interval
        self._released = threading.Event()  # the environment went away: stopping by ourselves
        self.redactor = redactor
        self.admin_token = admin_token
        self.tls = tls
        self.tls_binds = list(tls_binds) if tls is not None else []
        self._tls_wanted = tls_port
        self.tls_port: int | None = None  # the HTTPS port once it listens
        self._by_host = hosts_of(self._configs)

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> list[MockSetup]:
        """Start every mock and return once all of them listen.

        Raises:
            StateError: `INVALID_STATE` when the mocks already run.
            InfrastructureError: `PORT_CONFLICT` (with the holder's pid when found); nothing is
                left running.
        """
        return await anyio.to_thread.run_sync(self._start_blocking)

    async def stop(self) -> list[CleanAction]:
        """Stop every mock and join the server thread. Safe to call twice (then `not_running`)."""
        return await anyio.to_thread.run_sync(self._stop_blocking)

    def stop_blocking(self) -> list[CleanAction]:
        """`stop` for a caller without an event loop (interpreter exit). Blocks up to 10 s."""
        return self._stop_blocking()

    def running(self) -> bool:
        """Tell whether the mocks are serving."""
        thread = self._thread
        return (
            thread is not None
            and thread.is_alive()
            and self._ready.is_set()
            and self._failure is None
            and not self._released.is_set()
        )

    # -- lookups -----------------------------------------------------------------------------

    @property
    def configs(self) -> dict[str, MockConfig]:
        """Each mock's configuration as served now (reloads included)."""
        return dict(self._configs)

    @property
    def bind_hosts(self) -> list[str]:
        """The addresses every mock listens on (127.0.0.1 first)."""
        return list(self._hosts)

    @property
    def names(self) -> list[str]:
        """The mock names, in configuration order."""
        return list(self._compiled)

    def port(self, name: str) -> int:
        """Return the port mock `name` listens on.

        Raises:
            MockError: `MOCK_NOT_FOUND` (valid names listed) or `MOCKS_NOT_RUNNING`.
        """
        return self._running_app(name).port

    def url(self, name: str) -> str:
        """Return the mock's base URL from this machine: `http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port(name)}"

    def request_count(self, name: str) -> int:
        """Return how many requests mock `name` received since start or reset (0 when not started)."""
        app = self._app(name)
        return 0 if app is None else app.journal.received

    def entries(self, name: str, since: datetime | None = None) -> list[JournalEntry]:
        """Return mock `name`'s journal, oldest first, optionally only from `since` on.

        The journal outlives `stop`, so diagnostics can read it after clean-up.
        """
        app = self._app(name)
        if app is None:
            return []
        records, _ = app.journal.snapshot(None if since is None else parse_since(since).timestamp())
        return [to_entry(record) for record in records]

    def requests(
        self, mock_name: str | None = None, since: str | None = None, clear: bool = False
    ) -> MockRequestsResult:
        """Return the requests every mock (or `mock_name`) received, optionally clearing them.

        Args:
            mock_name: one mock; all of them when omitted.
            since: only requests from this moment on: an ISO 8601 time, or a duration back from
                now such as `"30s"` or `"5m"`.
            clear: empty the journals after reading (atomically: nothing arriving meanwhile is lost).

        Raises:
            MockError: `MOCK_NOT_FOUND` listing the valid names; `MOCKS_NOT_RUNNING` when the
                mocks were never started.
            InputError: `since` is neither a time nor a duration.
        """
        names = [mock_name] if mock_name is not None else self.names
        for name in names:
            self._check_name(name)
        if not self._apps:
            raise MockError(
                "the mocks are not running",
                code="MOCKS_NOT_RUNNING",
                hint="call `setup` first: it starts them",
                details={"mocks": self.names},
            )
        since_epoch = None if since is None else parse_since(since).timestamp()
        mocks = []
        for name in names:
            app = self._apps[name]
            records, dropped = app.journal.snapshot(since_epoch, clear=clear)
            requests = [to_entry(record) for record in records]
            mocks.append(
                MockRequestsMock(
                    name=name, port=app.port, total_requests=len(requests), dropped=dropped, requests=requests
                )
            )
        return MockRequestsResult(mocks=mocks)

    def reset(self, name: str | None = None, *, keep_journal: bool = False) -> None:
        """Reset sequences, counters, `times` and (unless `keep_journal`) journals of every mock (or of `name`)."""
        for mock in [name] if name is not None else self.names:
            self._check_name(mock)
            app = self._apps.get(mock)
            if app is not None:
                app.reset(keep_journal=keep_journal)

    def reload(self, mocks: Mapping[str, MockConfig]) -> None:
        """Serve new routes for the named mocks in place: same port, journal kept, route hits reset.

        Raises:
            ConfigError: a route is invalid (nothing is changed then).
            MockError: `MOCK_NOT_FOUND` for a name this host does not serve.
        """
        for name in mocks:
            self._check_name(name)
        compiled = compile_all(mocks)  # every mock compiles before any changes
        by_host = hosts_of({**self._configs, **mocks})
        if self.tls is not None and set(by_host) != set(self._by_host):
            self.tls.cover(by_host)  # a certificate for the names added (new connections get it)
        self._by_host = by_host
        with self._lock:
            for name, mock in compiled.items():
                self._configs[name] = mocks[name]
                self._compiled[name] = mock
                app = self._apps.get(name)
                if app is not None and app.recorder is not None:  # still recording: from the new routes
                    app.replace_routes(
                        compile_mock(name, recording_config(mocks[name], app.recorder.upstream))
                    )
                elif app is not None:
                    app.replace_routes(mock)

    def record(self, name: str, upstream: str) -> Recorder:
        """Record mock `name`: e2e.yaml's own routes still answer, every other request is forwarded to
        `upstream` and kept (its recorded routes are not served meanwhile).

        Returns the recorder, which outlives `stop`. Recording again replaces the recorder.

        Raises:
            MockError: `MOCK_NOT_FOUND`, or `MOCKS_NOT_RUNNING` when the mocks do not serve.
        """
        app = self._running_app(name)
        recorder = Recorder(upstream, limit=self._configs[name].journal_limit)
        compiled = compile_mock(name, recording_config(self._configs[name], upstream))
        with self._lock:
            app.recorder = recorder
            app.replace_routes(compiled)
        return recorder

    def stop_recording(self, name: str, config: MockConfig) -> None:
        """End mock `name`'s recording and serve `config` from now on (the routes just recorded in it).

        Raises:
            ConfigError: a route of `config` is invalid (the recording goes on then).
            MockError: `MOCK_NOT_FOUND`.
        """
        self._check_name(name)
        compiled = compile_mock(name, config)
        with self._lock:
            self._configs[name] = config
            self._compiled[name] = compiled
            app = self._apps.get(name)
            if app is not None:
                app.recorder = None
                app.replace_routes(compiled)

    def recorders(self) -> dict[str, Recorder]:
        """The mocks recording now, with their recorders."""
        return {name: app.recorder for name, app in self._apps.items() if app.recorder is not None}

    def describe_routes(self, name: str) -> list[dict[str, Any]]:
        """Return mock `name`'s routes with their hit counts (as `GET /_mock/routes`)."""
        self._check_name(name)
        app = self._apps.get(name)
        hits = app.hits if app is not None else [0] * len(self._compiled[name].routes)
        return [route.describe(hits[route.index]) for route in self._compiled[name].routes]

    # -- internals ---------------------------------------------------------------------------

    def _check_name(self, name: str) -> None:
        if name not in self._compiled:
            valid = ", ".join(self.names) or "none are configured"
            raise MockError(
                f"no mock named `{name}`",
                code="MOCK_NOT_FOUND",
                hint=f"valid names: {valid}",
                details={"mock": name, "valid": self.names},
            )

    def _app(self, name: str) -> MockApp | None:
        self._check_name(name)
        return self._apps.get(name)

    def _running_app(self, name: str) -> MockApp:
        app = self._app(name)
        if app is None or not self.running():
            raise MockError(
                f"mock `{name}` is not running",
                code="MOCKS_NOT_RUNNING",
                hint="call `setup` first: it starts the mocks",
                details={"mock": name},
            )
        return app

    def _start_blocking(self) -> list[MockSetup]:
        with self._lock:
            if self.running():
                raise StateError("the mocks are already running", hint="stop them first, or keep using them")
            bound = bind_all({name: c.port for name, c in self._configs.items()}, self._hosts)
            try:
                secure = bind_tls(self.tls_binds, self._tls_wanted) if self.tls_binds else []
            except BaseException:
                close_all(bound)
                raise
            self.tls_port = secure[0].getsockname()[1] if secure else None
            self._released.clear()
            apps = {}
            forwarder = Forwarder()
            for name, sockets in bound.items():
                apps[name] = MockApp(
                    self._compiled[name],
                    sockets[0].getsockname()[1],
                    forwarder,
                    redactor=self.redactor,
                    admin_token=self.admin_token,
                )
            self._apps = apps
            self._ready = threading.Event()
            self._failure = None
            thread = threading.Thread(
                target=self._thread_main,
                args=(
                    Listening(
                        apps=apps,
                        bound=bound,
                        secure=secure,
                        forwarder=forwarder,
                        tls=self.tls,
                        by_host=lambda: self._by_host,
                    ),
                ),
                name="preflight-mocks",
                daemon=True,
            )
            self._thread = thread
            thread.start()
            if not self._ready.wait(_START_TIMEOUT) or self._failure is not None:
                failure = self._failure
                self._request_stop()
                thread.join(_STOP_TIMEOUT)
                self._thread = None
                for sockets in [*bound.values(), secure]:
                    for sock in sockets:
                        sock.close()
                if isinstance(failure, PreflightError):
                    raise failure
                raise InfrastructureError(
                    f"the mock servers did not start: {failure or 'timed out'}",
                    hint="see the error above; no mock was left running",
                ) from failure
            return [
                MockSetup(
                    name=name,
                    port=app.port,
                    status="running",
                    route_count=len(app.mock.routes),
                    url=f"http://127.0.0.1:{app.port}",
                    hosts=list(self._configs[name].hosts),
                )
                for name, app in apps.items()
            ]

    def _stop_blocking(self) -> list[CleanAction]:
        with self._lock:
            thread = self._thread
            if thread is None or not thread.is_alive():
                self._thread = None
                return [CleanAction(name=name, action="not_running") for name in self.names]
            self._request_stop()
            thread.join(_STOP_TIMEOUT)
            self._thread = None
            if thread.is_alive():
                error = f"the server thread did not finish within {_STOP_TIMEOUT:.0f}s"
                return [CleanAction(name=name, action="failed", error=error) for name in self.names]
            return [CleanAction(name=name, action="stopped") for name in self.names]

    def _request_stop(self) -> None:
        token, event = self._token, self._stop_event
        if token is None or event is None:
            return
        try:
            anyio.from_thread.run_sync(event.set, token=token)
        except anyio.RunFinishedError:
            pass  # the loop already ended

    def _thread_main(self, listening: Listening) -> None:
        try:
            anyio.run(self._serve, listening, backend="asyncio", backend_options={"use_uvloop": True})
        except BaseException as exc:  # reported to the thread that waits in start()
            self._failure = exc
        finally:
            self._token = None
            self._ready.set()

    async def _serve(self, listening: Listening) -> None:
        self._token = anyio.lowlevel.current_token()
        stop = self._stop_event = anyio.Event()
        watch = None
        if self._still_wanted is not None:
            watch = Watch(
                still_wanted=self._still_wanted, interval=self._watch_interval, released=self._released
            )
        await serve_until(listening, stop=stop, ready=self._ready, watch=watch)
