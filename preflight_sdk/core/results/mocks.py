"""What the mocks recorded: `mock_requests` results and the journal entries behind them.

Timestamps are ISO 8601 strings in UTC with milliseconds; `epochMs` is the same moment in
milliseconds since the Unix epoch (handy for windows such as "requests during this case").
"""

from __future__ import annotations

from typing import Any, Literal

from .base import Part, Result

__all__ = [
    "ClosestRoute",
    "JournalEntry",
    "MockAnswer",
    "MockRequestsMock",
    "MockRequestsResult",
    "RecordedRequest",
]

BodyEncoding = Literal["json", "text", "base64"]


class ClosestRoute(Part, frozen=True, kw_only=True):
    """A route that came close to answering an unmatched request, and why it did not.

    The same items as `closestRoutes` in the body of the mock's 404 answer.

    Attributes:
        route: the route as `METHOD /path` (`ANY` for any method).
        index: its position in `mocks.<name>.routes` (0-based).
        name: its `name`, when it has one.
        why: every reason it did not match, e.g. `method POST != GET`,
            `path segment 1 'refunds' != 'charges'`, `body.type: expected "create", got "update"`.
    """

    route: str
    index: int
    name: str | None = None
    why: list[str]


class MockAnswer(Part, frozen=True, kw_only=True):
    """What a mock sent back to a request.

    Attributes:
        status: the status sent.
        headers: the response headers, names in lower case.
        body: the body (its JSON value when it parses, else text, else base64; see `bodyEncoding`).
        body_encoding: how to read `body` (absent for an empty body).
        body_size: the body's size in bytes.
        body_truncated: only the first 256 KiB were kept.
    """

    status: int
    headers: dict[str, str]
    body: Any = None
    body_encoding: BodyEncoding | None = None
    body_size: int = 0
    body_truncated: bool = False


class RecordedRequest(Part, frozen=True, kw_only=True):
    """One request a mock received, and what the mock did with it.

    Attributes:
        method: HTTP method, upper case.
        url: the full URL as the client addressed it (`http://host:port/path?query`).
        path: the path, percent-decoded.
        query: query parameters; a repeated parameter keeps every value as a list.
        headers: request headers, names in lower case (a repeated header is joined with ", ").
        body: the body: its JSON value when it parses as JSON (`bodyEncoding` "json"), else its
            text ("text"), else base64 ("base64" for binary); null when the request had no body.
        body_encoding: how to read `body` (absent for an empty body).
        form: the fields of an `application/x-www-form-urlencoded` body.
        body_size: the body's size in bytes.
        body_truncated: only the first 256 KiB of a larger body were kept (or, for `bodyNote`,
            its first 4,096 characters).
        body_note: why a body was kept as text although it looks like JSON (nested too deep).
        matched_route: the route that answered: its `name`, else `METHOD /path`; absent when none did.
        closest_routes: for a request no route matched (the mock answered 404): the routes
            closest to matching, closest first (at most 3), each with why it did not match (the
            404 body's `closestRoutes`); an empty list when the mock has no routes. Absent for
            matched requests and for unmatched ones forwarded to the mock's `proxy`.
        route_recorded: when the route that answered was recorded (`run --record`), ISO 8601;
            absent for a route written by hand.
        route_index: that route's position in `mocks.<name>.routes` (0-based; recorded routes
            come after e2e.yaml's own).
        params: path parameters of the matched route (`:id` → `{"id": "42"}`).
        status: the status sent; null while the request is still being answered, and for
            `fault: reset` / `fault: timeout`, which send no response.
        fault: the fault the route played (`reset` or `timeout`).
        proxied_to: the URL the request was forwarded to, for proxied requests.
        error: what went wrong while answering (an unknown template variable, an unreachable
            proxy target).
        timestamp: when the request arrived (ISO 8601, UTC).
        epoch_ms: the same moment in milliseconds since the epoch.
        duration_ms: time from arrival to the end of the answer, in milliseconds.
        sequence_step: for a route with a `sequence`, the 0-based step that answered.
        response: what the mock answered (status, headers, body); absent while unanswered and
            for faults, which send nothing.
    """

    method: str
    url: str
    path: str
    query: dict[str, str | list[str]]
    headers: dict[str, str]
    body: Any
    status: int | None
    timestamp: str
    epoch_ms: int
    body_encoding: BodyEncoding | None = None
    form: dict[str, str | list[str]] | None = None
    body_size: int = 0
    body_truncated: bool = False
    body_note: str | None = None
    matched_route: str | None = None
    route_recorded: str | None = None
    closest_routes: list[ClosestRoute] | None = None
    route_index: int | None = None
    params: dict[str, str] | None = None
    fault: Literal["reset", "timeout"] | None = None
    proxied_to: str | None = None
    error: str | None = None
    duration_ms: float | None = None
    sequence_step: int | None = None
    response: MockAnswer | None = None


JournalEntry = RecordedRequest
"""A journal entry is a recorded request (it carries `epochMs` for time windows)."""


class MockRequestsMock(Part, frozen=True, kw_only=True):
    """The requests one mock recorded, oldest first.

    Attributes:
        name: the mock's name in e2e.yaml.
        port: the host port it listens on.
        total_requests: how many requests are listed here.
        dropped: how many older requests the bounded journal discarded (see `journalLimit`).
        requests: the recorded requests, oldest first.
    """

    name: str
    port: int
    total_requests: int
    requests: list[RecordedRequest]
    dropped: int = 0


class MockRequestsResult(Result, frozen=True, kw_only=True):
    """The requests the project's mocks received (every mock, or the one asked for)."""

    mocks: list[MockRequestsMock]
