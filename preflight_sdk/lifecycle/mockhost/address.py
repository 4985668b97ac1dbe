"""How an engine's containers reach back to the mocks served on this machine.

An engine on this machine's containers reach it at their bridge's gateway (`--add-host
<mock>:host-gateway`). A remote engine's containers reach this machine at `engine.mockHost` when
given, else at this machine's source address on the route to the engine: the mocks listen there
too. When neither works, setup is refused with `UNSUPPORTED_ON_ENGINE`.
"""

from __future__ import annotations

import ipaddress
import socket

import msgspec

from preflight_sdk.core.addresses import can_bind, is_loopback, route_address
from preflight_sdk.core.errors import ConfigError, InfrastructureError

__all__ = ["MockRoute", "decide_mock_route"]

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


def decide_mock_route(*, address: str, gateway: str | None, mock_host: str | None, engine: str) -> MockRoute:
    """Decide how the engine's containers reach the mocks (blocking: resolves names, binds a socket).

    Args:
        address: where the engine's published ports are reached (`endpoint_address`).
        gateway: the engine's bridge gateway, for an engine on this machine.
        mock_host: `engine.mockHost`, when given: containers reach the mocks there; the mocks
            listen on it when it is this machine's, else on loopback only (a tunnel's far end).
        engine: the engine's name, for the error.

    Raises:
        InfrastructureError: `UNSUPPORTED_ON_ENGINE` when a remote engine has no way back to this
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


def _refused(why: str, engine: str, address: str, source: str | None) -> InfrastructureError:
    return InfrastructureError(
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
