"""`mock_requests`: what the mocks received, from this process or from the one serving them."""

from __future__ import annotations

import msgspec

from preflight_sdk.core.errors import MockError
from preflight_sdk.core.redaction import Redactor, redact_recorded
from preflight_sdk.core.results.mocks import MockRequestsMock, MockRequestsResult

from ..session.context import ProjectContext

__all__ = ["mock_requests"]


async def mock_requests(
    ctx: ProjectContext, *, mock_name: str | None, since: str | None, clear: bool
) -> MockRequestsResult:
    """Return the recorded requests (see `Project.mock_requests`)."""
    loaded = await ctx.ensure_loaded(persist=False)
    names = list(loaded.config.mocks)
    if mock_name is not None and mock_name not in names:
        raise MockError(
            f"no mock named `{mock_name}`" if names else "this project declares no mocks",
            code="MOCK_NOT_FOUND",
            hint=f"valid mocks: {', '.join(names)}" if names else "declare mocks under `mocks:` in e2e.yaml",
            details={"mock": mock_name, "valid": names},
        )
    host = ctx.mocks
    if host is not None and host.running():
        result: MockRequestsResult = host.requests(mock_name, since, clear)
        return _redacted(result, loaded.redactor)
    records = {r.name: r.port for r in ctx.require_session().mocks}
    if not names or not records:
        raise MockError(
            "the mocks are not running",
            code="MOCKS_NOT_RUNNING",
            hint="call `setup` first: it starts the mocks",
            details={"mocks": names},
        )
    from preflight_sdk.mocks import fetch_requests

    wanted = [mock_name] if mock_name is not None else names
    mocks: list[MockRequestsMock] = []
    for name in wanted:
        if name not in records:
            raise MockError(
                f"mock `{name}` is not running", code="MOCKS_NOT_RUNNING", hint="call `setup` again"
            )
        mocks.append(await fetch_requests(records[name], name, since, clear))
    return _redacted(MockRequestsResult(mocks=mocks), loaded.redactor)


def _redacted(result: MockRequestsResult, redactor: Redactor) -> MockRequestsResult:
    """The result as every output shows it: secrets replaced by the project's policy."""
    mocks = [
        msgspec.structs.replace(mock, requests=[redact_recorded(r, redactor) for r in mock.requests])
        for mock in result.mocks
    ]
    return msgspec.structs.replace(result, mocks=mocks)
