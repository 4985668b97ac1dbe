"""Cross-field rules of e2e.yaml: names, `dependsOn`, ports, health probes, mock routes, suites.

Each entry (a service, a mock, a suite) is converted on its own, and the rules run over every entry
whose types are right, so a file with a typo in one service, an unknown `dependsOn` name, a cycle,
a duplicated suite id and a missing suite file reports all of them at once. Each problem is placed
at the JSON path of the offending value (indexes are those of the file).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.yaml_source import PathKey, format_path

from .mocks.hosts import check_mock_hosts
from .model import (
    ContainerConfig,
    MockConfig,
    ResetMode,
    ResetSteps,
    ServiceBody,
    ServiceConfig,
    SingleServiceConfig,
    SuiteConfig,
)
from .port_specs import PortSpec, parse_port
from .reset_rules import check_resets
from .validate import Validator, did_you_mean

__all__ = ["ServiceEntry", "check_rules", "service_entries"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "ANY"}


class ServiceEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A well-typed service of the file with the path it was written at."""

    name: str
    path: PathKey
    container: ContainerConfig
    depends_on: list[str]
    keyed: bool
    kind: str = "service"
    reset: ResetMode | ResetSteps = "auto"


def service_entries(data: dict[str, Any]) -> list[ServiceEntry]:
    """Return every well-typed service of `data` (single, list or map form), in file order."""
    single = data.get("service")
    if single is not None:
        parsed = _convert(single, SingleServiceConfig)
        if parsed is None:
            return []
        name = parsed.name or parsed.container.name or "app"
        return [_entry(parsed, name, ("service",), keyed=False)]
    services = data.get("services")
    if isinstance(services, list):
        listed = ((_convert(item, ServiceConfig), index) for index, item in enumerate(services))
        return [_entry(s, s.name, ("services", index), keyed=False) for s, index in listed if s is not None]
    if isinstance(services, dict):
        keyed = ((_convert(item, ServiceBody), key) for key, item in services.items())
        return [_entry(body, key, ("services", key), keyed=True) for body, key in keyed if body is not None]
    return []


def _entry(
    service: ServiceBody | SingleServiceConfig, name: str, path: PathKey, *, keyed: bool
) -> ServiceEntry:
    """The entry of one service of any form (the single form has no dependencies and no kind)."""
    depends_on, kind = (
        ([], "service") if isinstance(service, SingleServiceConfig) else (service.depends_on, service.kind)
    )
    return ServiceEntry(
        name=name,
        path=path,
        container=service.container,
        depends_on=list(depends_on),
        keyed=keyed,
        kind=kind,
        reset=service.reset,
    )


def check_rules(data: dict[str, Any], out: Validator, *, root: Path) -> None:
    """Add a problem to `out` for every cross-field rule the file breaks."""
    if data.get("service") is not None and data.get("services") is not None:
        out.add(("service",), "use either `service` (one) or `services` (several), not both", key=True)
    services = service_entries(data)
    _check_names(services, out)
    _check_depends_on(services, out, declared=_declared_names(data))
    _check_broken_depends_on(data, {s.path for s in services}, out, declared=_declared_names(data))
    host_ports = _check_containers(services, out)
    check_resets(services, out)
    mocks = data.get("mocks")
    if isinstance(mocks, dict):
        for name, raw in mocks.items():
            mock = _convert(raw, MockConfig)
            if mock is not None:
                _check_mock(str(name), mock, services, host_ports, out)
        check_mock_hosts(data, out)
    tests = data.get("tests")
    suites = tests.get("suites") if isinstance(tests, dict) else None
    if isinstance(suites, list):
        _check_suites(suites, out, root, services=_declared_names(data))
        _check_touches(suites, out, _declared_names(data) | set(mocks if isinstance(mocks, dict) else ()))


def _convert(value: Any, typ: type[Any]) -> Any:
    # Lax, like the final conversion: a templated `"9081"` is the port 9081 here too.
    try:
        return decoding.convert(value, typ, strict=False)
    except msgspec.ValidationError:
        return None


def _check_names(services: list[ServiceEntry], out: Validator) -> None:
    seen: set[str] = set()
    containers: set[str] = set()
    for entry in services:
        if entry.keyed and not _NAME.match(entry.name):
            out.add(
                entry.path,
                f"service name `{entry.name}` may only hold letters, digits, `_`, `.` and `-`",
                key=True,
            )
        if entry.name in seen:
            out.add((*entry.path, "name"), f"service name `{entry.name}` is used twice")
        seen.add(entry.name)
        if entry.container.name:
            if entry.container.name in containers:
                out.add(
                    (*entry.path, "container", "name"),
                    f"container name `{entry.container.name}` is used twice",
                )
            containers.add(entry.container.name)


def _declared_names(data: dict[str, Any]) -> set[str]:
    """Every service name the file declares, including services whose own fields are wrong."""
    services = data.get("services")
    if isinstance(services, dict):
        return {str(key) for key in services}
    if isinstance(services, list):
        return {str(item["name"]) for item in services if isinstance(item, dict) and "name" in item}
    single = data.get("service")
    if isinstance(single, dict):
        return {str(single.get("name") or "app")}
    return set()


def _check_broken_depends_on(
    data: dict[str, Any], checked: set[tuple[Any, ...]], out: Validator, *, declared: set[str]
) -> None:
    """Unknown `dependsOn` names of the services that have errors of their own, so that every
    problem of the file is reported at once (not these only after the others are fixed)."""
    services = data.get("services")
    items: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(services, dict):
        items = [(("services", str(key)), item) for key, item in services.items()]
    elif isinstance(services, list):
        items = [(("services", index), item) for index, item in enumerate(services)]
    names = sorted(declared)
    for path, item in items:
        if path in checked or not isinstance(item, dict) or not isinstance(item.get("dependsOn"), list):
            continue
        for index, dependency in enumerate(item["dependsOn"]):
            if isinstance(dependency, str) and dependency not in declared:
                out.add(
                    (*path, "dependsOn", index),
                    f"`{dependency}` is not a service",
                    suggestion=did_you_mean(dependency, names),
                )


def _check_depends_on(services: list[ServiceEntry], out: Validator, *, declared: set[str]) -> None:
    """Unknown names, self-dependencies and cycles. A dependency on a service that is declared but
    has errors of its own is not reported again: its own errors are the root cause."""
    names = [s.name for s in services]
    paths = {s.name: s.path for s in services}
    graph: dict[str, list[str]] = {}
    for entry in services:
        graph[entry.name] = []
        for index, dependency in enumerate(entry.depends_on):
            where = (*entry.path, "dependsOn", index)
            if dependency == entry.name:
                out.add(where, f"service `{entry.name}` depends on itself")
            elif dependency in declared and dependency not in names:
                continue  # the service exists but is broken: its own error says why
            elif dependency not in names:
                out.add(where, f"`{dependency}` is not a service", suggestion=did_you_mean(dependency, names))
            else:
                graph[entry.name].append(dependency)
    # Depth-first search; each cycle is reported once, at the service that closes it.
    state: dict[str, int] = {}
    reported: set[frozenset[str]] = set()

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycle = [*trail[trail.index(nxt) :], nxt]
                if frozenset(cycle) not in reported:
                    reported.add(frozenset(cycle))
                    out.add((*paths[nxt], "dependsOn"), "dependency cycle: " + " -> ".join(cycle))
            elif state.get(nxt) is None:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for name in names:
        if state.get(name) is None:
            visit(name, [name])


HostPorts = dict[tuple[int, str], PathKey]
"""Published host ports by (port, protocol), with where each was first published."""


def _check_containers(services: list[ServiceEntry], out: Validator) -> HostPorts:
    host_ports: HostPorts = {}
    for entry in services:
        container = entry.container
        parsed: list[PortSpec] = []
        for index, spec in enumerate(container.ports):
            where = (*entry.path, "container", "ports", index)
            try:
                port = parse_port(spec)
            except ValueError as exc:
                out.add(where, str(exc))
                continue
            parsed.append(port)
            slot = (port.host, port.protocol)
            if port.host:
                if slot in host_ports:
                    earlier = format_path(host_ports[slot])
                    out.add(where, f"host port {port.host} is already published at {earlier}")
                else:
                    host_ports[slot] = where
        _check_health(entry, parsed, out)
    return host_ports


def _check_health(entry: ServiceEntry, parsed: list[PortSpec], out: Validator) -> None:
    health = entry.container.healthcheck
    if health is None:
        return
    where = (*entry.path, "container", "healthcheck")
    if health.path is not None and health.tcp is not None:
        out.add(where, "give either `path` (HTTP probe) or `tcp` (TCP probe), not both")
    if health.path is not None and not health.path.startswith("/"):
        out.add((*where, "path"), f"`{health.path}` must start with `/`")
    published = {p.container for p in parsed}
    probe_port = health.tcp if health.tcp is not None else health.port
    if probe_port is not None and parsed and probe_port not in published:
        out.add(
            (*where, "tcp" if health.tcp is not None else "port"),
            f"container port {probe_port} is not published by `ports` of service `{entry.name}`, "
            "so the host cannot probe it",
        )
    if not entry.container.ports:
        out.add(
            where,
            f"service `{entry.name}` publishes no port, so the host cannot probe its health; add `ports`",
        )


def _check_mock(
    name: str, mock: MockConfig, services: list[ServiceEntry], host_ports: HostPorts, out: Validator
) -> None:
    path: PathKey = ("mocks", name)
    taken = {s.name for s in services} | {s.container.name for s in services if s.container.name}
    if not _NAME.match(name):
        out.add(path, f"mock name `{name}` may only hold letters, digits, `_`, `.` and `-`", key=True)
    if name in taken:
        out.add(
            path,
            f"mock name `{name}` is also a service or container name; containers could not tell them apart",
            key=True,
        )
    if mock.port:
        slot = (mock.port, "tcp")
        if slot in host_ports:
            out.add(
                (*path, "port"), f"host port {mock.port} is already used at {format_path(host_ports[slot])}"
            )
        else:
            host_ports[slot] = (*path, "port")
    for index, route in enumerate(mock.routes):
        where = (*path, "routes", index)
        if route.method.upper() not in _METHODS:
            out.add(
                (*where, "method"),
                f"`{route.method}` is not an HTTP method",
                suggestion=did_you_mean(route.method.upper(), _METHODS),
            )
        if not route.path.startswith("/"):
            out.add((*where, "path"), f"`{route.path}` must start with `/`")
        if route.response is None and route.sequence is None:
            out.add(where, "a route needs a `response` or a `sequence`")
        if route.response is not None and route.sequence is not None:
            out.add(where, "give either `response` or `sequence`, not both")
        if route.sequence is not None and not route.sequence:
            out.add((*where, "sequence"), "a sequence needs at least one response")
        if route.loop and route.sequence is None:
            out.add((*where, "loop"), "`loop` only applies to a `sequence`")


def _check_suites(suites: list[Any], out: Validator, root: Path, *, services: set[str]) -> None:
    seen: dict[str, int] = {}
    for index, raw in enumerate(suites):
        where: PathKey = ("tests", "suites", index)
        suite_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(suite_id, str):
            if suite_id in seen:
                out.add(
                    (*where, "id"), f"suite id `{suite_id}` is already used by suite #{seen[suite_id] + 1}"
                )
            else:
                seen[suite_id] = index
        suite = _convert(raw, SuiteConfig)
        if suite is not None:
            _check_suite_target(suite, where, out, root)
            if suite.service is not None and services and suite.service not in services:
                guess = did_you_mean(suite.service, services)
                out.add(
                    (*where, "service"),
                    f"no service `{suite.service}` (services: {', '.join(sorted(services)) or 'none'})",
                    suggestion=guess,
                )


def _check_touches(suites: list[Any], out: Validator, names: set[str]) -> None:
    """Every name a suite's `touches:` gives is a service or a mock."""
    for index, raw in enumerate(suites):
        touches = raw.get("touches") if isinstance(raw, dict) else None
        if not isinstance(touches, list):
            continue
        for position, name in enumerate(touches):
            if isinstance(name, str) and name not in names:
                out.add(
                    ("tests", "suites", index, "touches", position),
                    f"`{name}` is neither a service nor a mock",
                    suggestion=did_you_mean(name, sorted(names)),
                )


def _check_suite_target(suite: SuiteConfig, where: PathKey, out: Validator, root: Path) -> None:
    runner = suite.runner
    if runner == "yaml" and not suite.file:
        out.add(where, f"suite `{suite.id}` (runner yaml) needs a `file`")
    if runner == "pytest" and not suite.file:
        out.add(where, f"suite `{suite.id}` (runner pytest) needs a `file` (a test file or directory)")
    if runner in ("shell", "exec") and not (suite.file or suite.command):
        out.add(where, f"suite `{suite.id}` (runner {runner}) needs a `command` or a script `file`")
    if runner == "fuzz" and not suite.service:
        out.add(where, f"suite `{suite.id}` (runner fuzz) needs a `service` (one with a `contract:`)")
    if suite.python is not None and runner not in ("pytest", "playwright"):
        out.add((*where, "python"), f"`python` is for pytest suites; runner `{runner}` does not use it")
    if suite.junit is not None and runner not in ("shell", "exec"):
        out.add((*where, "junit"), f"`junit` is for shell suites; runner `{runner}` reads its own report")
    if runner in ("yaml", "pytest", "playwright") and suite.command:
        out.add((*where, "command"), f"`command` is for shell suites; runner `{runner}` uses `file`")
    if suite.service is not None and runner == "yaml":
        out.add(
            (*where, "service"),
            "`service` is for pytest, shell and playwright suites (BASE_URL's service) and fuzz suites",
        )
    if suite.file:
        target = Path(suite.file).expanduser()
        target = target if target.is_absolute() else root / target
        if not target.exists():
            out.add((*where, "file"), f"`{suite.file}` does not exist (looked for {target})")
