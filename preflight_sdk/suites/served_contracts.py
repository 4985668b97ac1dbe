"""Contracts a running service serves itself (`contract: {served: /openapi.json}`).

Such a document exists only while the service runs: a run fetches it once, after setup, before
its suites (`RunContracts.fetch_served`), and `check_response` and `generate_cases` fetch it from
the running environment. A document that cannot be fetched (no published port, no answer, an
error status, too large) or does not load is `CONTRACT_UNAVAILABLE`, naming the URL and why.
"""

from __future__ import annotations

from typing import Protocol

import anyio
import httpx

from preflight_sdk.contracts import Contract, load_contract_text
from preflight_sdk.core.errors import InfrastructureError, StateError
from preflight_sdk.core.results.lifecycle import ServiceSetup

__all__ = ["RunningServices", "fetch_served", "served_by_environment"]

_TIMEOUT = 10.0  # the whole fetch: connect, answer and body
_LIMIT = 16 * 1024 * 1024  # bytes: a document larger than this is not an API description
_SAVE_IT = "or save the document in the project and name the file in `contract:`"
# Fetched documents by (container id, URL): a pytest session checks many responses against one.
_FETCHED: dict[tuple[str, str], Contract] = {}
_FETCHED_LIMIT = 16


class RunningServices(Protocol):
    """Where the environment's services run now (the lifecycle's `Environment` is one)."""

    async def service_now(self, service: str) -> tuple[str, ServiceSetup | None]:
        """The lifecycle state, and `service`'s container when it runs now (else None)."""
        ...


async def fetch_served(service: str, base_url: str | None, path: str) -> Contract:
    """Fetch and load the contract `service` serves at `path` of `base_url`.

    Raises:
        InfrastructureError: `CONTRACT_UNAVAILABLE`, naming the URL and why it could not be used.
    """
    if not base_url:
        raise InfrastructureError(
            f"service `{service}` serves its contract at {path}, but publishes no port to fetch it from",
            code="CONTRACT_UNAVAILABLE",
            hint=f"publish the service's port (`container.ports` in e2e.yaml), {_SAVE_IT}",
            details={"service": service, "path": path},
        )
    url = base_url.rstrip("/") + path
    text, why = await _get(url)
    if text is None:
        raise InfrastructureError(
            f"cannot fetch the contract service `{service}` serves at {url}: {why}",
            code="CONTRACT_UNAVAILABLE",
            hint=f"check that `{service}` serves its OpenAPI document at {path} once it is ready, {_SAVE_IT}",
            details={"service": service, "url": url},
            retryable=True,
        )
    contract, problems = await anyio.to_thread.run_sync(load_contract_text, text, url)
    if contract is None:
        shown = "; ".join(p.render() for p in problems[:3]) + (
            f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        raise InfrastructureError(
            f"the contract service `{service}` serves at {url} does not load: {shown}",
            code="CONTRACT_UNAVAILABLE",
            hint=f"fix the document `{service}` serves (OpenAPI 3.0 or 3.1, referring only to itself), {_SAVE_IT}",
            details={"service": service, "url": url, "problems": [p.render() for p in problems[:20]]},
        )
    return contract


async def _get(url: str) -> tuple[str | None, str]:
    """The body at `url` as text, or None and why (bounded in time and size)."""
    try:
        with anyio.fail_after(_TIMEOUT):
            async with (
                httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=True) as client,
                client.stream(
                    "GET", url, headers={"Accept": "application/json, application/yaml, */*"}
                ) as reply,
            ):
                if reply.status_code >= 400:
                    return None, f"GET answered {reply.status_code} {reply.reason_phrase}".rstrip()
                body = bytearray()
                async for chunk in reply.aiter_bytes():
                    body += chunk
                    if len(body) > _LIMIT:
                        return None, f"the document is larger than {_LIMIT // (1024 * 1024)} MB"
                return body.decode(reply.encoding or "utf-8", errors="replace"), ""
    except TimeoutError:
        return None, f"no whole answer within {_TIMEOUT:g}s"
    except httpx.HTTPError as exc:
        return None, str(exc) or type(exc).__name__


async def served_by_environment(environment: RunningServices, service: str, path: str) -> Contract:
    """The contract `service` serves, fetched from the running environment (for a caller outside a run).

    Raises:
        StateError: `NOT_RUNNING` when the environment does not run (or the service is not in it).
        InfrastructureError: `CONTRACT_UNAVAILABLE` when the document cannot be fetched or loaded.
    """
    state, running = await environment.service_now(service)
    if running is None and state != "running":
        raise StateError(
            f"service `{service}` serves its contract at {path}: reading it needs the running environment "
            f"(state: {state})",
            code="NOT_RUNNING",
            hint=f"call `setup` first, {_SAVE_IT}",
            details={"service": service, "state": state},
        )
    if running is None:
        raise StateError(
            f"service `{service}` serves its contract at {path}, and its container does not run",
            code="NOT_RUNNING",
            hint=f"read `logs {service}`, then `setup` again, {_SAVE_IT}",
            details={"service": service},
        )
    key = (running.container_id or "", f"{running.url}{path}")
    cached = _FETCHED.get(key)
    if cached is not None:
        return cached
    contract = await fetch_served(service, running.url, path)
    if len(_FETCHED) >= _FETCHED_LIMIT:
        _FETCHED.pop(next(iter(_FETCHED)))
    _FETCHED[key] = contract
    return contract
