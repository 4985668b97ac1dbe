"""Published-port specs: `"8080:80"`, `"0:8080"` (a free host port), `"8080"`, `"127.0.0.1:8080:80/tcp"`."""

from __future__ import annotations

import re

import msgspec

__all__ = ["PortSpec", "parse_port"]

_SPEC = re.compile(
    r"^(?:(?P<ip>\d{1,3}(?:\.\d{1,3}){3}):)?(?:(?P<host>\d{1,5}):)?(?P<container>\d{1,5})(?:/(?P<proto>tcp|udp))?$"
)


class PortSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One published port. `host` 0 means "let Docker pick a free host port"."""

    container: int
    host: int = 0
    host_ip: str | None = None
    protocol: str = "tcp"

    def docker_arg(self) -> str:
        """Return the `-p` argument for this port."""
        host = f"{self.host_ip}:" if self.host_ip else ""
        host += f"{self.host}:" if self.host else ":" if self.host_ip else ""
        return f"{host}{self.container}/{self.protocol}"


def parse_port(spec: str | int) -> PortSpec:
    """Parse a port spec.

    Raises:
        ValueError: with a sentence saying what is wrong.
    """
    text = str(spec).strip()
    match = _SPEC.match(text)
    if match is None:
        if "-" in text:
            raise ValueError(f"port ranges are not supported (`{text}`); list each port")
        raise ValueError(f"`{text}` is not a port mapping; write `host:container` (e.g. `8080:80` or `0:80`)")
    container = int(match.group("container"))
    host = int(match.group("host") or 0)
    if not 1 <= container <= 65535:
        raise ValueError(f"container port {container} is out of range 1-65535")
    if not 0 <= host <= 65535:
        raise ValueError(f"host port {host} is out of range 0-65535")
    return PortSpec(
        container=container, host=host, host_ip=match.group("ip"), protocol=match.group("proto") or "tcp"
    )
