"""Rules for `mocks.<name>.hosts`: real host names a mock stands in for over HTTPS.

Containers resolve each name to the mock (an `/etc/hosts` entry), so a name must be a host name
(no IP address, no wildcard, not `localhost`), and it must not also be a service, a container,
an alias, a mock or another mock's host: a container could not tell which one it calls.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import msgspec

from preflight_sdk.core import decoding

from ..validate import Validator

__all__ = ["check_mock_hosts"]

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def _problem(name: str) -> str | None:
    """Why `name` cannot be a host a mock stands in for (None when it can)."""
    if "*" in name:
        return "a wildcard cannot be resolved through /etc/hosts: list each name"
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return "an IP address is reached as it is; give the host name the service calls"
    lowered = name.lower().rstrip(".")
    if lowered == "localhost" or lowered.endswith(".localhost"):
        return "`localhost` is the container itself"
    if len(lowered) > 253 or not all(_LABEL.match(label) for label in lowered.split(".")):
        return "not a host name (letters, digits and `-` in dot-separated labels)"
    return None


def _named(data: dict[str, Any]) -> dict[str, str]:
    """Every name a container already resolves in this project, and what it is."""
    taken: dict[str, str] = {}
    services = data.get("services")
    entries: list[tuple[str, Any]] = []
    if isinstance(services, dict):
        entries = [(str(k), v) for k, v in services.items()]
    elif isinstance(services, list):
        entries = [(str(v.get("name", "")), v) for v in services if isinstance(v, dict)]
    single = data.get("service")
    if isinstance(single, dict):
        entries.append((str(single.get("name") or "app"), single))
    for name, body in entries:
        taken.setdefault(name.lower(), f"the service `{name}`")
        container = body.get("container") if isinstance(body, dict) else None
        if isinstance(container, dict):
            if isinstance(container.get("name"), str):
                taken.setdefault(container["name"].lower(), f"the container name of service `{name}`")
            for alias in container.get("aliases") or []:
                if isinstance(alias, str):
                    taken.setdefault(alias.lower(), f"an alias of service `{name}`")
    for mock in data.get("mocks") or {}:
        taken.setdefault(str(mock).lower(), f"the mock `{mock}`")
    return taken


def check_mock_hosts(data: dict[str, Any], out: Validator) -> None:
    """Add a problem to `out` for every `hosts` entry that is no host name or names something else."""
    mocks = data.get("mocks")
    if not isinstance(mocks, dict):
        return
    taken = _named(data)
    claimed: dict[str, str] = {}
    for mock, raw in mocks.items():
        hosts = raw.get("hosts") if isinstance(raw, dict) else None
        try:
            names = decoding.convert(hosts, list[str]) if hosts is not None else []
        except msgspec.ValidationError:
            continue  # the type is reported by the schema walk
        for index, host in enumerate(names):
            where = ("mocks", mock, "hosts", index)
            why = _problem(host)
            key = host.lower().rstrip(".")
            if why is None and key in taken:
                why = f"is also {taken[key]}; containers could not tell them apart"
            if why is None and key in claimed:
                why = f"is already a host of {claimed[key]}"
            if why is not None:
                out.add(where, f"host `{host}` {why}" if why.startswith("is ") else f"host `{host}`: {why}")
            claimed.setdefault(key, f"the mock `{mock}`")
