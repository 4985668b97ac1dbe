"""The contract operations a caller asks for directly: check a response it holds, write starter cases.

`check_response` is for what is not a YAML case: a pytest test, a shell script or an agent that
made a request itself and holds the answer. `generate_cases` writes a runnable YAML test file of
one case per operation of a service's contract, and never writes over a file. Both read a file
contract as loaded with e2e.yaml, and a served one from the running environment (`contract_of`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from preflight_sdk.config import LoadedConfig
from preflight_sdk.config.model import ServedContract
from preflight_sdk.contracts import Contract, check_response
from preflight_sdk.contracts.generate import StarterCase, starter_cases
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.results.contracts import ContractCheck, GeneratedCase, GeneratedCases

from .served_contracts import RunningServices, served_by_environment

__all__ = ["check_held_response", "contract_of", "generate_starter_cases"]


async def contract_of(loaded: LoadedConfig, service: str, environment: RunningServices) -> Contract:
    """The contract of `service`: its file, or the document it serves (fetched from the running environment).

    Raises:
        InputError: `INVALID_INPUT` when there is no such service or it has no contract.
        StateError: `NOT_RUNNING` for a served contract while the environment does not run.
        InfrastructureError: `CONTRACT_UNAVAILABLE` for a served contract that cannot be fetched or loaded.
    """
    found = loaded.contracts.services.get(service)
    if found is not None:
        return found
    with_contract = sorted(
        [
            *loaded.contracts.services,
            *(s.name for s in loaded.services if isinstance(s.contract, ServedContract)),
        ]
    )
    configured = loaded.service(service)
    if configured is None:
        hint = (
            f"services with a contract: {', '.join(with_contract) or 'none (add `contract:` to a service)'}"
        )
        raise InputError(f"no service `{service}` in e2e.yaml", hint=hint, details={"valid": with_contract})
    if isinstance(configured.contract, ServedContract):
        return await served_by_environment(environment, service, configured.contract.served)
    raise InputError(
        f"service `{service}` has no `contract:`",
        hint="add `contract: path/to/openapi.yaml` (OpenAPI 3.0 or 3.1) to the service in e2e.yaml",
        details={"valid": with_contract},
    )


def check_held_response(
    loaded: LoadedConfig,
    contract: Contract,
    *,
    service: str,
    method: str,
    path: str,
    status: int,
    body: str | None,
    headers: dict[str, str],
) -> ContractCheck:
    """Check a response the caller holds against `service`'s contract."""
    lowered = {name.lower(): value for name, value in headers.items()}
    parsed: Any = body
    if body:
        media = lowered.get("content-type", "")
        if not media or "json" in media:
            try:
                parsed = json.loads(body)
                lowered.setdefault("content-type", "application/json")
            except ValueError:
                parsed = body
    checked = check_response(
        contract,
        service,
        method=method,
        path=path,
        status=status,
        headers=lowered,
        body=parsed or None,
        root=loaded.root,
    )
    shown = checked.operation or f"{method.upper()} {path}"
    if checked.violations:
        first = checked.violations[0]
        where = f" ({first.place})" if first.place else ""
        more = f" (+{len(checked.violations) - 1} more)" if len(checked.violations) > 1 else ""
        summary = f"{shown} → {status} breaks {service}'s contract: {first.message}{where}{more}"
    else:
        summary = f"{shown} → {status} conforms to {service}'s contract"
    return ContractCheck(
        service=service,
        file=_relative(contract.path, loaded.root),
        summary=summary,
        violations=checked.violations,
        operation=checked.operation,
        status=checked.status,
    )


def generate_starter_cases(
    loaded: LoadedConfig, contract: Contract, *, service: str, output: str | None
) -> GeneratedCases:
    """Write one starter case per operation of `service`'s contract to a new YAML test file.

    Raises:
        InputError: `INVALID_INPUT` for a file that exists already (it is never written over).
    """
    relative = output or f"tests/generated/{_slug(service)}.yaml"
    target = loaded.resolve(relative)
    if target.exists():
        free = _free_name(target)
        raise InputError(
            f"{relative} exists already; generated cases never write over a file",
            hint=f"pass another `output`, e.g. {_relative(str(free), loaded.root)}",
            details={"file": str(target)},
        )
    cases = starter_cases(contract)
    document = {
        "name": f"{contract.title} (generated from its contract)",
        "description": f"One starter case per operation of {_relative(contract.path, loaded.root)}; "
        "every answer is also checked against the contract.",
        "service": service,
        "cases": [_yaml_case(case) for case in cases],
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    with target.open("x", encoding="utf-8") as handle:  # "x": fails rather than write over a file
        handle.write(text)
    written = _relative(str(target), loaded.root)
    suite_id = f"{_slug(service)}-generated"
    return GeneratedCases(
        service=service,
        file=written,
        summary=f"wrote {len(cases)} case(s) from {_relative(contract.path, loaded.root)} to {written}",
        suite=f"- {{id: {suite_id}, file: {written}}}",
        cases=[
            GeneratedCase(
                name=c.name, operation=c.operation, request=f"{c.method} {c.path}", statuses=c.statuses
            )
            for c in cases
        ],
    )


def _yaml_case(case: StarterCase) -> dict[str, Any]:
    request: dict[str, Any] = {"method": case.method, "path": case.path}
    if case.query:
        request["query"] = case.query
    if case.headers:
        request["headers"] = case.headers
    if case.has_body:
        request["json"] = case.body
    expect: dict[str, Any] = {}
    if case.statuses:
        expect["status"] = case.statuses[0] if len(case.statuses) == 1 else case.statuses
    entry: dict[str, Any] = {"name": case.name, "request": request}
    if expect:
        entry["expect"] = expect
    return entry


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "service"


def _free_name(target: Path) -> Path:
    for number in range(2, 1000):
        candidate = target.with_name(f"{target.stem}-{number}{target.suffix}")
        if not candidate.exists():
            return candidate
    return target.with_name(f"{target.stem}-new{target.suffix}")


def _relative(path: str, root: str) -> str:
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path
