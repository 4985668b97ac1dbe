"""Load the contracts e2e.yaml names (`contract:` of services and mocks) and check the mocks' routes.

A contract file that does not load is a problem of the configuration, located in the document
itself (its file, line and why). A mock route whose answer the mock's contract forbids (a status it
does not document, a body its schema refuses) is a problem at the route's line in e2e.yaml; where
no suite fails on violations (`tests.contract: warn`, or every suite's own `contract: warn`) it is
a load warning instead, and where every suite is `off` it is not checked (`_route_mode`).
A served contract (`{served: /openapi.json}`) is read by the run, after setup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.contracts import Contract, check_route, load_contract
from preflight_sdk.core import decoding
from preflight_sdk.core.yaml_source import PathKey

from .model import MockConfig, MockResponse
from .rules import service_entries
from .validate import Validator

__all__ = ["BASE_URL", "Contracts", "load_contracts"]

BASE_URL = "BASE_URL"
"""The owner name of `tests.baseUrlContract`: the API a test-only project's `path` requests reach."""


class Contracts(msgspec.Struct, frozen=True, kw_only=True):
    """The file contracts of a configuration: by service and by mock name, and the files read."""

    services: dict[str, Contract] = msgspec.field(default_factory=dict)  # BASE_URL: tests.baseUrlContract
    mocks: dict[str, Contract] = msgspec.field(default_factory=dict)
    files: list[str] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)


def load_contracts(data: dict[str, Any], root: Path, out: Validator) -> Contracts:
    """Load every file contract `data` names; problems go to `out` (documents' own lines included)."""
    tests = data.get("tests")
    mode = _route_mode(tests)
    found = Contracts()
    for entry in service_entries(data):
        raw = _raw_at(data, entry.path)
        written = raw.get("contract") if isinstance(raw, dict) else None
        if isinstance(written, str):
            contract = _load(written, root, out, (*entry.path, "contract"), f"service `{entry.name}`")
            if contract is not None:
                found.services[entry.name] = contract
                found.files.extend(contract.files)
    written = tests.get("baseUrlContract") if isinstance(tests, dict) else None
    if isinstance(written, str):
        contract = _load(written, root, out, ("tests", "baseUrlContract"), "BASE_URL")
        if contract is not None:
            found.services[BASE_URL] = contract
            found.files.extend(contract.files)
    _check_fuzz_suites(tests, data, out)
    mocks = data.get("mocks")
    for name, raw in mocks.items() if isinstance(mocks, dict) else ():
        written = raw.get("contract") if isinstance(raw, dict) else None
        if not isinstance(written, str):
            continue
        contract = _load(written, root, out, ("mocks", name, "contract"), f"mock `{name}`")
        if contract is None:
            continue
        found.mocks[str(name)] = contract
        found.files.extend(contract.files)
        if mode != "off":
            _check_routes(
                str(name), raw, contract, out, str(root), found.warnings if mode == "warn" else None
            )
    return found


def _route_mode(tests: Any) -> str:
    """What a mock route its contract forbids is: the strictest mode any suite runs with.

    A mock's routes answer every suite, so the route is an error (`fail`) when any suite fails on
    violations (its own `contract:`, else `tests.contract`), a load warning when the strictest
    is `warn`, and not checked when every suite is `off`. Without suites, the project's mode.
    """
    project = (tests.get("contract") or "fail") if isinstance(tests, dict) else "fail"
    suites = tests.get("suites") if isinstance(tests, dict) else None
    modes = [s.get("contract") or project for s in suites or [] if isinstance(s, dict)] or [project]
    return next((mode for mode in ("fail", "warn") if mode in modes), "off")


def _check_fuzz_suites(tests: Any, data: dict[str, Any], out: Validator) -> None:
    suites = tests.get("suites") if isinstance(tests, dict) else None
    with_contract = {e.name: _raw_at(data, (*e.path, "contract")) is not None for e in service_entries(data)}
    for index, raw in enumerate(suites if isinstance(suites, list) else []):
        if (
            not isinstance(raw, dict)
            or raw.get("runner") != "fuzz"
            or not isinstance(raw.get("service"), str)
        ):
            continue
        name = raw["service"]
        if name not in with_contract:
            known = ", ".join(with_contract) or "none"
            out.add(("tests", "suites", index, "service"), f"no service `{name}` (services: {known})")
        elif not with_contract[name]:
            out.add(
                ("tests", "suites", index, "service"), f"service `{name}` has no `contract:` to fuzz from"
            )


def _raw_at(data: dict[str, Any], path: PathKey) -> Any:
    value: Any = data
    for part in path:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            return None
    return value


def _load(written: str, root: Path, out: Validator, at: PathKey, owner: str) -> Contract | None:
    target = Path(written).expanduser()
    target = target if target.is_absolute() else root / target
    if not target.is_file():
        why = "is a directory" if target.is_dir() else "does not exist"
        out.add(at, f"the contract of {owner}, `{written}`, {why} (relative to e2e.yaml)")
        return None
    contract, problems = load_contract(target)
    for problem in problems:
        out.problems.append(
            msgspec.structs.replace(problem, message=f"{problem.message} (the contract of {owner})")
        )
    return contract


def _check_routes(
    name: str, raw: dict[str, Any], contract: Contract, out: Validator, root: str, warnings: list[str] | None
) -> None:
    try:
        mock = decoding.convert(raw, MockConfig, strict=False)
    except msgspec.ValidationError:
        return  # its type problems are reported already
    for index, route in enumerate(mock.routes):
        answers: list[tuple[MockResponse, PathKey]] = (
            [(route.response, ("response",))] if route.response is not None else []
        )
        answers += [(step, ("sequence", i)) for i, step in enumerate(route.sequence or [])]
        for answer, where in answers:
            if answer is None or answer.proxy or answer.fault:
                continue
            checked = check_route(
                contract,
                name,
                method=route.method,
                route=route.path,
                status=answer.status,
                headers=_headers(answer),
                body=answer.body,
                root=root,
            )
            label = f"route `{route.name}`" if route.name else f"route {route.method} {route.path}"
            for violation in checked.violations[:3]:
                message = (
                    f"{label} answers what the contract of mock `{name}` forbids: {violation.message}"
                    + (f" ({violation.place})" if violation.place else "")
                )
                path = ("mocks", name, "routes", index, *where)
                if warnings is not None:
                    location = out.source.locate(path)
                    warnings.append(f"e2e.yaml:{location.line if location else '?'}: {message}")
                else:
                    out.add(path, message)


def _headers(answer: MockResponse) -> dict[str, str]:
    headers = {key.lower(): value for key, value in answer.headers.items()}
    if "content-type" not in headers and answer.body is not None:
        headers["content-type"] = "text/plain" if isinstance(answer.body, str) else "application/json"
    return headers
