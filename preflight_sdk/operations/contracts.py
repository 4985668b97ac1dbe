"""The operations of the tool group `contracts`."""

from __future__ import annotations

from functools import partial

import anyio

from preflight_sdk.core.errors import InputError
from preflight_sdk.core.operations import operation
from preflight_sdk.core.results.contracts import ContractCheck, GeneratedCases

from .base import Operations

__all__ = ["ContractOperations"]


def _header_pairs(lines: list[str]) -> dict[str, str]:
    """`["X-Id: 7"]` as `{"X-Id": "7"}`."""
    pairs: dict[str, str] = {}
    for line in lines:
        name, found, value = line.partition(":")
        if not found or not name.strip():
            raise InputError(
                f"header {line!r} is not `Name: value`", hint='write each header as "Name: value"'
            )
        pairs[name.strip()] = value.strip()
    return pairs


class ContractOperations(Operations):
    """Contracts (tool group `contracts`): check an answer against an OpenAPI document, generate cases."""

    @operation(
        title="Check a response against a contract", read_only=True, idempotent=True, group="contracts"
    )
    async def check_response(
        self,
        service: str,
        method: str,
        path: str,
        status: int,
        body: str | None = None,
        headers: list[str] | None = None,
    ) -> ContractCheck:
        """Check a response you hold against a service's OpenAPI contract (`contract:`).

        A served contract is read from the running environment. Over MCP it is in the opt-in
        group `contracts`: `preflight-mcp --tools environment,runs,contracts`.

        Args:
            service: its name in e2e.yaml.
            method: e.g. "GET".
            path: as sent, e.g. "/orders/42".
            status: its status code.
            body: the body as text (JSON is parsed).
            headers: "Name: value" strings.

        Returns:
            The operation matched and each violation: JSON path, rule, expected, actual, the
            document's file and line.

        Example:
            `await project.check_response("orders", "GET", "/orders/42", 200, body='{"id": 42}')`
        """
        from preflight_sdk.suites.contract_tools import check_held_response, contract_of

        loaded = await self._env.ensure_loaded()
        return check_held_response(
            loaded,
            await contract_of(loaded, service, self._env),
            service=service,
            method=method,
            path=path,
            status=status,
            body=body,
            headers=_header_pairs(headers or []),
        )

    @operation(title="Generate cases from a contract", group="contracts")
    async def generate_cases(self, service: str, output: str | None = None) -> GeneratedCases:
        """Write a new YAML test file of one case per operation of a service's contract.

        A served contract is read from the running environment. Over MCP it is in the opt-in
        group `contracts`: `preflight-mcp --tools environment,runs,contracts`.

        Args:
            service: its name in e2e.yaml.
            output: the file, relative to e2e.yaml (default tests/generated/<service>.yaml); an
                existing file is never written over.

        Returns:
            The file, its cases, and the suite entry for e2e.yaml's `tests.suites`.

        Example:
            `await project.generate_cases("orders")`
        """
        from preflight_sdk.suites.contract_tools import contract_of, generate_starter_cases

        loaded = await self._env.ensure_loaded()
        contract = await contract_of(loaded, service, self._env)
        return await anyio.to_thread.run_sync(
            partial(generate_starter_cases, loaded, contract, service=service, output=output)
        )
