"""Check, before starting anything, that the fixed host ports a project publishes are free."""

from __future__ import annotations

import errno
import socket

import anyio

from preflight_sdk.config import LoadedConfig, parse_port
from preflight_sdk.core.addresses import is_loopback
from preflight_sdk.core.errors import InfrastructureError

__all__ = ["check_host_ports", "port_in_use", "refuse_loopback_ports"]


def port_in_use(port: int, host: str = "0.0.0.0") -> bool:
    """Tell whether binding `host:port` (TCP) fails because something holds it."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As Docker (and most servers) do: connections in TIME_WAIT on the port do not block a bind,
    # only a live listener does.
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host, port))
    except OSError as exc:
        return exc.errno in (errno.EADDRINUSE, errno.EACCES)
    finally:
        probe.close()
    return False


async def check_host_ports(loaded: LoadedConfig, *, grace: float = 1.5) -> None:
    """Raise `PORT_CONFLICT` for the first fixed host port of a service that is already taken.

    A port held by a container removed a moment ago is released asynchronously by Docker's
    proxy, so a busy port is re-checked for `grace` seconds before it counts as a conflict.
    """
    for service in loaded.services:
        for spec in service.container.ports:
            port = parse_port(spec)
            if port.host and await _still_busy(port.host, port.host_ip or "0.0.0.0", grace):
                holder = _holder(port.host)
                who = f" by {holder['command']} (pid {holder['pid']})" if holder else ""
                raise InfrastructureError(
                    f"host port {port.host} of service `{service.name}` is already in use{who}",
                    code="PORT_CONFLICT",
                    hint="stop what holds it, or publish `0:<container port>` to let Docker pick a free host port",
                    details={"port": port.host, "service": service.name, "holder": holder},
                )


def refuse_loopback_ports(loaded: LoadedConfig, address: str) -> None:
    """Raise `UNSUPPORTED_ON_ENGINE` for a port published on loopback by an engine on another machine.

    `127.0.0.1:8080:80` binds the engine machine's loopback: nothing here could reach it.
    """
    for service in loaded.services:
        for spec in service.container.ports:
            port = parse_port(spec)
            if port.host_ip and is_loopback(port.host_ip):
                raise InfrastructureError(
                    f"service `{service.name}` publishes `{spec}` on the loopback of the engine at "
                    f"{address}, which this machine cannot reach",
                    code="UNSUPPORTED_ON_ENGINE",
                    hint=f"publish it without an address (`{port.host or 0}:{port.container}`): "
                    f"it is then reached at {address}",
                    details={"service": service.name, "port": spec, "engineAddress": address},
                )


async def _still_busy(port: int, host: str, grace: float) -> bool:
    deadline = anyio.current_time() + grace
    while port_in_use(port, host):
        if anyio.current_time() >= deadline:
            return True
        await anyio.sleep(0.05)
    return False


def _holder(port: int) -> dict[str, object] | None:
    from preflight_sdk.mocks.listeners import find_port_holder  # lazy: /proc scanning only on a conflict

    found = find_port_holder(port)
    return {"pid": found.pid, "command": found.command} if found is not None else None
