"""Where an engine is, seen from this machine: its socket, its published ports, the routes between.

An engine on this machine (a unix socket) publishes ports on 127.0.0.1; a remote engine
(`tcp://H:P`, `ssh://u@H`) publishes them on H. How its containers reach back to the mocks is
the lifecycle's choice (`lifecycle/mock_address.py`), made with `route_address` and `can_bind`.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "LOOPBACK",
    "can_bind",
    "endpoint_address",
    "http_url",
    "is_loopback",
    "on_local_socket",
    "route_address",
]

LOOPBACK = "127.0.0.1"


def endpoint_address(endpoint: str | None) -> tuple[str, bool]:
    """Return where the engine's published ports are reached, and whether container IPs are routable.

    `endpoint` is a Docker host URL (`unix:///…`, `tcp://H:P`, `ssh://u@H:22`); None or a unix
    socket is this machine: 127.0.0.1, with container IPs routable (the bridge is local).
    """
    if not endpoint or endpoint.startswith(("unix://", "npipe://", "fd://")):
        return LOOPBACK, True
    host = urlsplit(endpoint if "://" in endpoint else f"tcp://{endpoint}").hostname
    return (host or LOOPBACK), False


def on_local_socket(host: str | None, context: str | None) -> bool:
    """Tell, without asking the daemon, whether the engine is a socket of this machine.

    True when `host` (else DOCKER_HOST) is a unix socket, or when nothing names an engine: no
    host, no context (nor DOCKER_CONTEXT), no current context in the docker config but `default`.
    """
    if not host and context and context != "default":
        return False  # a context named by the caller wins over DOCKER_HOST, as with `docker --context`
    host = host or os.environ.get("DOCKER_HOST", "")
    if host:
        return endpoint_address(host)[1]
    named = context or os.environ.get("DOCKER_CONTEXT")
    if named:
        return named == "default"
    config = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker") / "config.json"
    try:
        current = json.loads(config.read_text()).get("currentContext")
    except (OSError, ValueError, AttributeError):
        return not config.exists()
    return current in (None, "", "default")


def is_loopback(address: str) -> bool:
    """Tell whether `address` (an IP or a name) means this machine's loopback."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def http_url(address: str, port: int) -> str:
    """`http://address:port`, with an IPv6 address in brackets."""
    return f"http://[{address}]:{port}" if ":" in address else f"http://{address}:{port}"


def route_address(host: str) -> str | None:
    """Return this machine's source address on the route to `host`, or None when there is none.

    No packet is sent: connecting a UDP socket only asks the kernel which source address it
    would use. A name is resolved first (IPv4 only: `--add-host` and the mocks' binds use it).
    """
    try:
        infos = socket.getaddrinfo(host, 9, socket.AF_INET, socket.SOCK_DGRAM)
    except (OSError, UnicodeError):
        return None
    for *_, sockaddr in infos:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect((sockaddr[0], 9))
                return str(probe.getsockname()[0])
            except OSError:
                continue
    return None


def can_bind(address: str) -> bool:
    """Tell whether this process can listen on `address` (it is one of this machine's)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True
