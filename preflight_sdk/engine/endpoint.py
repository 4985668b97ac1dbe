"""Where an engine is, seen from this machine, and how its containers reach back to the mocks.

An engine on this machine (a unix socket) publishes ports on 127.0.0.1 and its containers reach
this machine at their bridge's gateway (`--add-host <mock>:host-gateway`). A remote engine
(`tcp://H:P`, `ssh://u@H`) publishes ports on H, and its containers reach this machine at
`engine.mockHost` when given, else at this machine's source address on the route to H: the
mocks listen there too. When neither works, setup is refused with `UNSUPPORTED_ON_ENGINE`.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from preflight_sdk.core.errors import ConfigError, EnvironmentError_

__all__ = [
    "LOOPBACK",
    "MockRoute",
    "can_bind",
    "decide_mock_route",
    "endpoint_address",
    "http_url",
    "is_loopback",
    "on_local_socket",
    "route_address",
]

LOOPBACK = "127.0.0.1"
_MOCK_HOST_HINT = (
    "set `engine.mockHost` in e2e.yaml to an address of this machine that the engine's containers "
    "can reach (or the far end of a tunnel such as `ssh -R`); see docs/engines.md, 'Remote engines'"
)


class MockRoute(msgspec.Struct, frozen=True, kw_only=True):
    """How an engine's containers reach the mocks served in this process.

    Attributes:
        address: what each container's `--add-host <mock>:…` points at (`host-gateway` for an
            engine on this machine).
        binds: addresses the mocks listen on besides 127.0.0.1.
    """

    address: str
    binds: tuple[str, ...] = ()


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


def decide_mock_route(*, address: str, gateway: str | None, mock_host: str | None, engine: str) -> MockRoute:
    """Decide how the engine's containers reach the mocks (blocking: resolves names, binds a socket).

    Args:
        address: where the engine's published ports are reached (`endpoint_address`).
        gateway: the engine's bridge gateway, for an engine on this machine.
        mock_host: `engine.mockHost`, when given: containers reach the mocks there; the mocks
            listen on it when it is this machine's, else on loopback only (a tunnel's far end).
        engine: the engine's name, for the error.

    Raises:
        EnvironmentError_: `UNSUPPORTED_ON_ENGINE` when a remote engine has no way back to this
            machine; `CONFIG_INVALID` when `mock_host` names nothing.
    """
    if mock_host:
        resolved = _ipv4(mock_host)
        if resolved is None:
            raise ConfigError(
                f"engine.mockHost `{mock_host}` is not an IPv4 address and does not resolve to one",
                hint="give the address as the engine's containers reach this machine, e.g. 10.0.0.5",
                details={"mockHost": mock_host},
            )
        return MockRoute(address=resolved, binds=(resolved,) if can_bind(resolved) else ())
    if is_loopback(address):
        return MockRoute(address="host-gateway", binds=(gateway,) if gateway else ())
    source = route_address(address)
    if source is None or is_loopback(source):
        why = (
            f"this machine has no route to the engine's host {address}"
            if source is None
            else f"the route to the engine's host {address} leaves through loopback"
        )
        raise _refused(why, engine, address, source)
    if not can_bind(source):
        raise _refused(f"the mocks cannot listen on {source}", engine, address, source)
    return MockRoute(address=source, binds=(source,))


def _refused(why: str, engine: str, address: str, source: str | None) -> EnvironmentError_:
    return EnvironmentError_(
        f"mocks reached from containers are not supported on engine {engine}: {why}",
        code="UNSUPPORTED_ON_ENGINE",
        hint=_MOCK_HOST_HINT,
        details={
            "engine": engine,
            "feature": "mocks reached from containers",
            "engineAddress": address,
            "routeAddress": source,
        },
    )


def _ipv4(host: str) -> str | None:
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET)
    except (OSError, UnicodeError):
        return None
    return str(infos[0][4][0]) if infos else None
