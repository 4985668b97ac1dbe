"""Check, before starting anything, that the fixed host ports a project publishes are free."""

from __future__ import annotations

import errno
import socket

from ..config import LoadedConfig, parse_port
from ..errors import EnvironmentError_

__all__ = ["check_host_ports", "port_in_use"]


def port_in_use(port: int, host: str = "0.0.0.0") -> bool:
    """Tell whether binding `host:port` (TCP) fails because something holds it."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((host, port))
    except OSError as exc:
        return exc.errno in (errno.EADDRINUSE, errno.EACCES)
    finally:
        probe.close()
    return False


async def check_host_ports(loaded: LoadedConfig) -> None:
    """Raise `PORT_CONFLICT` for the first fixed host port of a service that is already taken."""
    for service in loaded.services:
        for spec in service.container.ports:
            port = parse_port(spec)
            if port.host and port_in_use(port.host, port.host_ip or "0.0.0.0"):
                holder = _holder(port.host)
                who = f" by {holder['command']} (pid {holder['pid']})" if holder else ""
                raise EnvironmentError_(
                    f"host port {port.host} of service `{service.name}` is already in use{who}",
                    code="PORT_CONFLICT",
                    hint="stop what holds it, or publish `0:<container port>` to let Docker pick a free host port",
                    details={"port": port.host, "service": service.name, "holder": holder},
                )


def _holder(port: int) -> dict[str, object] | None:
    try:
        from ..mocks.ports import port_holder
    except ImportError:
        return None
    found = port_holder(port)
    if found is None:
        return None
    return found if isinstance(found, dict) else {"pid": getattr(found, "pid", None), "command": getattr(found, "command", None)}
