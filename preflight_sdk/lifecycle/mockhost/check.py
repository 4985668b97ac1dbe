"""`check_mock`: a mock's routes, recorded and hand-written, sent to the real upstream (see `mocks.record.check`)."""

from __future__ import annotations

from preflight_sdk.config import LoadedConfig
from preflight_sdk.config.mocks.recorded import read_route_file, route_file_path
from preflight_sdk.core.errors import InputError, MockError
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.recording import MockCheckResult

from .recording import checked_url

__all__ = ["check_mock"]


def _headers(given: list[str] | None) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in given or []:
        name, sep, value = item.partition(":")
        if not sep or not name.strip() or any(c in item for c in "\r\n"):
            raise InputError(
                f"`{item[:60]}` is not a header",
                hint='write each as "Name: value", e.g. "Authorization: Bearer sk_test_…"',
            )
        headers[name.strip()] = value.strip()
    return headers


async def check_mock(
    loaded: LoadedConfig,
    mock_name: str,
    *,
    upstream: str | None,
    headers: list[str] | None,
    timeout: float = 10.0,
) -> MockCheckResult:
    """Check mock `mock_name`'s routes against its upstream (see `Project.check_mock`)."""
    from preflight_sdk.mocks.record.check import CheckedRoute, check_routes

    mocks = loaded.config.mocks
    if mock_name not in mocks:
        raise MockError(
            f"no mock named `{mock_name}`",
            code="MOCK_NOT_FOUND",
            hint=f"valid mocks: {', '.join(mocks) or 'none are declared'}",
            details={"mock": mock_name, "valid": list(mocks)},
        )
    mock = mocks[mock_name]
    recorded, _ = read_route_file(route_file_path(loaded.path, mock_name))
    base = upstream or (recorded.upstream if recorded is not None else None) or mock.proxy
    if not base:
        raise InputError(
            f"mock `{mock_name}` has no upstream to check against",
            hint=f"pass `upstream` (the real service's base URL) or set `mocks.{mock_name}.proxy` in e2e.yaml",
            details={"mock": mock_name},
        )
    routes = [
        CheckedRoute(index=i, route=r, source="recorded" if r.recorded is not None else "hand-written")
        for i, r in enumerate(mock.routes)
    ]
    sent = _headers(headers)
    redactor = loaded.redactor
    given = [part for value in sent.values() for part in (value, value.split(" ", 1)[-1])]
    masked = Redactor(redactor.words, (*redactor.values, *given))
    return await check_routes(
        mock_name,
        routes,
        upstream=checked_url(base, mock_name),
        headers=sent,
        redactor=masked,
        timeout=timeout,
    )
