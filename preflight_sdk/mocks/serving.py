"""The mock host's server loop: one uvicorn server per mock (and one for HTTPS at `hosts`), until stopped.

Runs on the host's own thread and event loop (see `host`). The servers are started on sockets
bound beforehand, the `Date` header is refreshed once a second, and an optional watch stops
everything once the environment is gone. Stopping cancels every pending delay, fault and proxy
call first, so shutdown never waits for them.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec

from .tls import HostDispatch

if TYPE_CHECKING:
    from .app import MockApp
    from .proxy import Forwarder
    from .tls import TlsIdentity

logger = logging.getLogger("preflight_sdk.mocks")

__all__ = ["Listening", "Watch", "serve_until"]

_DATE_TICK = 1.0
_TLS_HEADER_TIMEOUT = 10.0


class Listening(msgspec.Struct, frozen=True, kw_only=True):
    """What one start of a mock host serves: each mock's app and sockets, the HTTPS sockets of
    `hosts` (with the certificate), the forwarder they share, and which mock each host name is."""

    apps: dict[str, MockApp]
    bound: dict[str, list[socket.socket]]
    secure: list[socket.socket]
    forwarder: Forwarder
    tls: TlsIdentity | None
    by_host: Callable[[], Mapping[str, str]]


class Watch(msgspec.Struct, frozen=True, kw_only=True):
    """Stop the mocks the first time `still_wanted()` (blocking, every `interval` seconds) says no."""

    still_wanted: Callable[[], bool]
    interval: float
    released: threading.Event  # set when the watch stopped them


async def serve_until(
    listening: Listening, *, stop: anyio.Event, ready: threading.Event, watch: Watch | None
) -> None:
    """Serve until `stop` is set (or `watch` gives up), setting `ready` once every server listens."""
    servers: list[tuple[Any, list[socket.socket]]] = []
    apps = listening.apps
    try:
        for name, app in apps.items():
            server = await _listen(app, listening.bound[name], app.mock.header_timeout)
            app.servers.append(server)
            servers.append((server, listening.bound[name]))
        if listening.secure and listening.tls is not None:
            dispatch = HostDispatch(apps, listening.by_host)
            server = await _listen(dispatch, listening.secure, _TLS_HEADER_TIMEOUT, ssl=listening.tls.context)
            for app in apps.values():
                app.servers.append(server)  # a fault over HTTPS finds its connection there
            servers.append((server, listening.secure))
        ready.set()
        async with anyio.create_task_group() as group:
            group.start_soon(_tick, [s for s, _ in servers])
            if watch is not None:
                group.start_soon(_watch, watch, stop)
            await stop.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            for app in apps.values():
                app.cancel_waits()
            async with anyio.create_task_group() as group:
                for server, sockets in servers:
                    group.start_soon(server.shutdown, sockets)
            await listening.forwarder.aclose()


async def _listen(app: Any, sockets: list[socket.socket], header_timeout: float, *, ssl: Any = None) -> Any:
    """Start a uvicorn server for `app` on `sockets` (TLS with the `ssl` context) and return it."""
    import uvicorn

    from .limits import protocol_with_header_deadline

    config = uvicorn.Config(
        app,
        http=protocol_with_header_deadline(header_timeout),
        loop="uvloop",
        ws="none",
        lifespan="off",
        interface="asgi3",
        proxy_headers=False,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    config.load()
    config.ssl = ssl  # set after load: uvicorn reads it when the server starts
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=sockets)
    await server.on_tick(0)  # sets the Date/Server headers before the first answer
    return server


async def _watch(watch: Watch, stop: anyio.Event) -> None:
    while True:
        await anyio.sleep(watch.interval)
        if not await anyio.to_thread.run_sync(watch.still_wanted):
            logger.warning("the mocks' environment was removed by another process: stopping them")
            watch.released.set()
            stop.set()
            return


async def _tick(servers: list[Any]) -> None:
    # uvicorn's own main loop would also refresh the Date header, but polls every 100 ms.
    while True:
        await anyio.sleep(_DATE_TICK)
        for server in servers:
            await server.on_tick(0)
