"""Put the project's services and mocks where an imported file's requests name a host.

A request's URL starts with a host (`http://localhost:8080/orders`) or a variable that holds one
(`{{baseUrl}}/orders`). It goes to a service (then the case sends `path: /orders` to it, through
its base URL) or to a mock (`{{mocks.<name>.url}}/orders`) when one of these holds, in order:

1. asked: the `hosts` argument names it (`{"localhost:8080": "orders"}`, a bare host, the full
   origin, or the variable's name `baseUrl`);
2. by name: the host is a service's or a mock's name, or a service's container name;
3. by port: its port (80 and 443 when none is written) is one service's or mock's port
   (published or in the container);
4. the only service: it is a loopback host, or a variable with no value, and the project has
   exactly one service.

Otherwise the URL stays as written (a variable without a value is read from the environment).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import InputError

__all__ = ["Placed", "Target", "check_asked", "place", "targets_of"]

_LOOPBACK = {"localhost", "127.0.0.1", "0.0.0.0", "[::1]", "::1"}
_ORIGIN = re.compile(r"^(?P<origin>[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)(?P<rest>.*)$", re.DOTALL)
_VARIABLE = re.compile(r"^\{\{\s*(?P<name>[^{}]+?)\s*\}\}(?P<rest>.*)$", re.DOTALL)


class Target(msgspec.Struct, frozen=True, kw_only=True):
    """A service or a mock a host can become, with the names and ports it answers to."""

    kind: Literal["service", "mock"]
    name: str
    aliases: list[str] = msgspec.field(default_factory=list)
    ports: list[int] = msgspec.field(default_factory=list)


class Placed(msgspec.Struct, frozen=True, kw_only=True):
    """Where one request goes: `to` a service (with its `path`) or a mock (a `url`), or its `url` as written."""

    found: str
    how: str
    to: Target | None = None
    path: str | None = None
    url: str | None = None

    @property
    def service(self) -> str | None:
        """The service the request goes to, if it goes to one."""
        return self.to.name if self.to is not None and self.to.kind == "service" else None

    @property
    def target(self) -> str | None:
        """`service <name>` or `mock <name>`, as the result says it."""
        return f"{self.to.kind} {self.to.name}" if self.to is not None else None


def targets_of(loaded: LoadedConfig | None) -> list[Target]:
    """The project's services and mocks as targets (none without an e2e.yaml)."""
    if loaded is None:
        return []
    targets = []
    for service in loaded.services:
        ports = [port for spec in service.container.ports for port in _ports(spec)]
        if service.container.healthcheck is not None and service.container.healthcheck.port:
            ports.append(service.container.healthcheck.port)
        aliases = [service.container.name] if service.container.name else []
        targets.append(Target(kind="service", name=service.name, aliases=aliases, ports=sorted(set(ports))))
    for name, mock in loaded.config.mocks.items():
        targets.append(Target(kind="mock", name=name, ports=[mock.port] if mock.port else []))
    return targets


def _ports(spec: str) -> list[int]:
    """The ports a `ports:` entry names: `8080`, `0:8080`, `127.0.0.1:8081:8080/tcp` (0 is none)."""
    parts = spec.split("/")[0].split(":")
    return [int(p) for p in parts if p.isdigit() and 0 < int(p) < 65536]


def check_asked(asked: Mapping[str, str], targets: list[Target]) -> None:
    """Refuse a `hosts` entry that names no service or mock.

    Raises:
        InputError: `INVALID_INPUT`, with the names there are.
    """
    names = {t.name for t in targets}
    for host, name in asked.items():
        if name not in names:
            raise InputError(
                f"hosts: `{host}` is given to `{name}`, which is neither a service nor a mock of this project",
                hint=f"services and mocks: {', '.join(sorted(names)) or '(none: the project has no e2e.yaml services)'}",
                details={"host": host, "valid": sorted(names)},
            )


def place(url: str, variables: Mapping[str, Any], targets: list[Target], asked: Mapping[str, str]) -> Placed:
    """Where the request to `url` goes (see the module's rules)."""
    variable = _VARIABLE.match(url)
    if variable is not None:
        name, rest = variable.group("name"), variable.group("rest")
        found = "{{" + name + "}}"
        chosen = _asked(asked, [name, found], targets)
        if chosen is not None:
            return _to(chosen, found, "asked", _prefix_of(variables.get(name)) + rest)
        value = variables.get(name)
        if isinstance(value, str) and _ORIGIN.match(value):
            inner = place(value + rest, variables, targets, asked)
            kept = (
                url if inner.url is not None and inner.target is None else inner.url
            )  # unmatched: as written
            return msgspec.structs.replace(
                inner, found=found, how=f"{inner.how} (its value {value})", url=kept
            )
        services = [t for t in targets if t.kind == "service"]
        if value is None and len(services) == 1:
            return _to(services[0], found, "the only service", rest)
        return Placed(found=found, how="not matched: kept as a variable", url=url)
    origin = _ORIGIN.match(url)
    if origin is None:  # a path only (`.http` files may leave the host to the tool)
        services = [t for t in targets if t.kind == "service"]
        if len(services) == 1:
            return _to(services[0], "(no host)", "the only service", url)
        return Placed(found="(no host)", how="not matched: no host and not one service", url=url)
    return _place_origin(origin.group("origin"), origin.group("rest"), targets, asked, url)


def _place_origin(
    origin: str, rest: str, targets: list[Target], asked: Mapping[str, str], url: str
) -> Placed:
    parts = urlsplit(origin)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = 0
    netloc = parts.netloc.rsplit("@", 1)[-1].lower()
    chosen = _asked(asked, [origin, netloc, host], targets)
    if chosen is not None:
        return _to(chosen, origin, "asked", rest)
    named = [t for t in targets if host == t.name.lower() or host in (a.lower() for a in t.aliases)]
    if len(named) == 1:
        return _to(named[0], origin, "by name", rest)
    by_port = [t for t in targets if port in t.ports]
    if len(by_port) == 1:
        return _to(by_port[0], origin, f"by port {port}", rest)
    services = [t for t in targets if t.kind == "service"]
    if host in _LOOPBACK and len(services) == 1:
        return _to(services[0], origin, "the only service", rest)
    why = "not matched: kept as written" if targets else "not matched: the project has no services or mocks"
    return Placed(found=origin, how=why, url=url)


def _asked(asked: Mapping[str, str], keys: list[str], targets: list[Target]) -> Target | None:
    lowered = {key.lower(): value for key, value in asked.items()}
    for key in keys:
        name = asked.get(key) or lowered.get(key.lower())
        if name is not None:
            return next((t for t in targets if t.name == name), None)
    return None


def _to(target: Target, found: str, how: str, rest: str) -> Placed:
    path = rest if rest.startswith("/") else "/" + rest
    if target.kind == "mock":
        url = (
            "{{mocks."
            + target.name
            + ".url}}"
            + (rest if rest.startswith(("/", "?")) or not rest else "/" + rest)
        )
        return Placed(found=found, how=how, to=target, url=url)
    return Placed(found=found, how=how, to=target, path=path)


def _prefix_of(value: Any) -> str:
    """The path a base-URL variable's value carries (`http://h/api` → `/api`)."""
    if isinstance(value, str) and (match := _ORIGIN.match(value)) is not None:
        return match.group("rest").rstrip("/")
    return ""
