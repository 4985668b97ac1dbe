"""Reading a mock's journal over HTTP, from a process that did not start the mocks.

The CLI run after the MCP server (or a second notebook kernel) only knows each mock's port from
the state file; `fetch_requests` asks the mock's admin endpoint, and checks that the port still
serves the mock it expects (a port reused by something else must not pass for it).
"""

from __future__ import annotations

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.durations import parse_since
from preflight_sdk.core.errors import MockError
from preflight_sdk.core.results.mocks import MockRequestsMock, RecordedRequest

from .admin import TOKEN_HEADER

__all__ = ["fetch_requests"]


class _Journal(msgspec.Struct, kw_only=True, rename="camel"):
    mock: str | None = None
    count: int = 0
    dropped: int = 0
    requests: list[RecordedRequest] = msgspec.field(default_factory=list)


async def fetch_requests(
    port: int, name: str, since: str | None, clear: bool, *, token: str | None = None
) -> MockRequestsMock:
    """Return the requests mock `name` (listening on 127.0.0.1:`port`) recorded.

    Args:
        port: the mock's host port.
        name: the mock's name; the answer must come from that mock.
        since: only requests from then on: ISO 8601, or a duration back from now (`"30s"`).
        clear: empty the journal in the same call (nothing arriving meanwhile is lost).
        token: the mocks' admin token: with it the journal comes as recorded (a run's checks
            compare what was sent), without it with secrets masked.

    Raises:
        MockError: `MOCKS_NOT_RUNNING` when nothing (or another mock) answers on the port.
        InputError: `since` is neither a time nor a duration.
    """
    import httpx

    params: dict[str, str] = {}
    if since is not None:
        params["since"] = parse_since(since).isoformat()
    if clear:
        params["clear"] = "true"
    url = f"http://127.0.0.1:{port}/_mock/requests"
    try:
        async with httpx.AsyncClient(timeout=10.0, trust_env=False) as client:
            headers = {TOKEN_HEADER: token} if token else {}
            response = await client.get(url, params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise MockError(
            f"mock `{name}` does not answer on port {port} ({type(exc).__name__})",
            code="MOCKS_NOT_RUNNING",
            hint="the process serving the mocks has ended (killed, or the environment was cleaned): "
            "`status` or `run` starts them again on the same ports, or call setup",
            details={"mock": name, "port": port},
        ) from exc
    journal: _Journal | None = None
    if response.status_code == 200:
        try:
            journal = decoding.decode(response.content, _Journal)
        except msgspec.DecodeError:
            journal = None
    if journal is None or journal.mock != name:
        served = f"mock `{journal.mock}`" if journal is not None and journal.mock else "something else"
        raise MockError(
            f"port {port} serves {served}, not mock `{name}` (HTTP {response.status_code})",
            code="MOCKS_NOT_RUNNING",
            hint="the mocks of this project are no longer running; run setup again",
            details={"mock": name, "port": port, "status": response.status_code},
        )
    return MockRequestsMock(
        name=name,
        port=port,
        total_requests=len(journal.requests),
        dropped=journal.dropped,
        requests=journal.requests,
    )
