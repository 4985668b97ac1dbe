"""Addresses of this machine and the hosts it talks to: loopback, URLs, routes, what it can bind.

Plain IP and socket questions, asked by the engine (where a remote engine's containers reach this
machine), the lifecycle (where the mocks listen) and the runners (service URLs). No packet is sent.
"""

from __future__ import annotations

import ipaddress
import socket

__all__ = ["can_bind", "http_url", "is_loopback", "route_address"]


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
