"""Compose `ports` (short and long syntax, ranges) → e2e.yaml port specs (`[ip:]host:container[/proto]`).

By default every published port gets a free host port (`0:<container>`), so two sessions or two
checkouts run side by side; `compose.hostPorts: asWritten` keeps the host ports the file names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["translate_ports"]

_SHORT = re.compile(
    r"^(?:(?P<ip>\d{1,3}(?:\.\d{1,3}){3}):)?(?:(?P<host>\d*(?:-\d+)?):)?(?P<container>\d+(?:-\d+)?)(?:/(?P<proto>tcp|udp))?$"
)
_LONG_KEYS = frozenset({"target", "published", "host_ip", "protocol", "mode", "name", "app_protocol"})


_ASIDE = {
    "mode": "ports are published on this engine's host (swarm's `ingress` does not apply)",
    "name": "a port's name and protocol label are metadata nothing in the container reads",
    "app_protocol": "a port's name and protocol label are metadata nothing in the container reads",
}


def translate_ports(
    ports: list[Any],
    *,
    keep_host: bool,
    path: tuple[str | int, ...],
    report: Callable[..., None],
    warn: Callable[[tuple[str | int, ...], str, str], None] | None = None,
) -> list[str]:
    """Return the port specs; a malformed entry is reported at its index, metadata keys warned about."""
    specs: list[str] = []
    for index, entry in enumerate(ports):
        where = (*path, index)
        if isinstance(entry, dict):
            for key in entry:
                if key not in _LONG_KEYS and not str(key).startswith("x-"):
                    report((*where, key), f"`{key}` is not supported by preflight", key=True)
                elif key in _ASIDE and warn is not None and not (key == "mode" and entry[key] == "host"):
                    warn((*where, key), f"ports.{key}", _ASIDE[key])
            target = str(entry.get("target", ""))
            published = str(entry.get("published") or "")
            ip, proto = entry.get("host_ip"), entry.get("protocol") or "tcp"
        else:
            match = _SHORT.match(str(entry).strip())
            if match is None:
                report(where, f"`{entry}` is not a port mapping (`[ip:][host:]container[/protocol]`)")
                continue
            target, published = match.group("container"), match.group("host") or ""
            ip, proto = match.group("ip"), match.group("proto") or "tcp"
        if proto not in ("tcp", "udp"):
            report(where, f"protocol `{proto}` is not supported (tcp or udp)")
            continue
        containers = _range(target)
        hosts = _range(published) if published and keep_host else []
        if containers is None or hosts is None or (hosts and len(hosts) not in (1, len(containers))):
            report(where, f"`{entry}`: the port range does not match its container range")
            continue
        for offset, container in enumerate(containers):
            host = hosts[offset] if len(hosts) > 1 else hosts[0] + offset if hosts else 0
            prefix = f"{ip}:" if ip else ""
            specs.append(f"{prefix}{host}:{container}/{proto}")
    return specs


def _range(text: str) -> list[int] | None:
    if not text:
        return []
    first, _, last = text.partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        return None
    start, end = int(first), int(last or first)
    if end < start or end - start > 1000:
        return None
    return list(range(start, end + 1))
