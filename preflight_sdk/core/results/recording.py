"""What recorded mocks did in a run, and what `check_mock` found against the real upstream.

`MockRecording` is one mock's part of a run (or of a clean that ended a recording): it `recorded`
(its calls went to the upstream and became routes in its route file) or `replayed` (it answered
from routes recorded earlier). `MockCheckResult` is a drift check: each route's request sent to
the real upstream, and where the real answer now differs from the route's.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from preflight_sdk.core.errors import ErrorInfo

from .base import Part, Result

__all__ = ["Difference", "MockCheckResult", "MockRecording", "RouteCheck"]


class MockRecording(Part, frozen=True, kw_only=True):
    """What one mock's recorded routes did in a run.

    Attributes:
        mock: the mock's name.
        mode: `recorded` (its calls were forwarded to the upstream and written as routes) or
            `replayed` (it answered from routes recorded earlier; hand-written routes first).
        file: the route file, relative to the project.
        routes: recorded routes in the file (after writing, for `recorded`).
        recorded_at: when the newest of those routes was recorded (ISO 8601).
        upstream: the real service recorded from.
        exchanges: calls recorded in this run (`recorded` only).
        added: routes new to the file, as `METHOD /path` (with conditions).
        replaced: routes whose answers changed, replaced in the file.
        unchanged: routes recorded again with the same answers (kept as they were).
        kept: routes of the file this recording did not see (kept as they were).
        failed: calls the upstream did not answer (the mock answered 502; not recorded).
        left_out: calls over the recording's bounds (not recorded).
        written: whether the route file was written (not when nothing was recorded, nor when
            the run did not finish: a cancelled run leaves the file as it was).
        error: why the recording could not be completed (the upstream unreachable, a route
            file that cannot be read or written), as a coded error.
    """

    mock: str
    mode: Literal["recorded", "replayed"]
    file: str
    routes: int = 0
    recorded_at: str | None = None
    upstream: str | None = None
    exchanges: int = 0
    added: list[str] = msgspec.field(default_factory=list)
    replaced: list[str] = msgspec.field(default_factory=list)
    unchanged: int = 0
    kept: int = 0
    failed: int = 0
    left_out: int = 0
    written: bool = False
    error: ErrorInfo | None = None


class Difference(Part, frozen=True, kw_only=True):
    """One way the real answer differs from the route's.

    Attributes:
        kind: `status`, `contentType`, `added` (a field the route does not have), `removed` (a
            field of the route the real answer lacks) or `type` (a field of another JSON type).
        path: where, as a JSON path (`$.data[].amount`); absent for status and content type.
        expected: what the route says (a status, a media type, a JSON type).
        actual: what the upstream answered.
    """

    kind: Literal["status", "contentType", "added", "removed", "type"]
    path: str | None = None
    expected: Any = None
    actual: Any = None


class RouteCheck(Part, frozen=True, kw_only=True):
    """One route of the mock checked against the real upstream.

    Attributes:
        index: the route's position among the mock's routes (recorded ones after e2e.yaml's).
        route: the route as `METHOD /path`.
        source: `recorded` (from the route file) or `hand-written` (from e2e.yaml).
        request: the request sent (method and target, secrets masked).
        status: `ok` (the real answer agrees), `drift` (see `differences`), `error` (the upstream
            could not be asked or did not answer) or `skipped` (see `reason`).
        http_status: the status the upstream answered.
        differences: how the real answer differs (at most 20; `truncated` when more).
        reason: why the route was skipped, or what the error was.
        truncated: more differences were found than are listed.
    """

    index: int
    route: str
    source: Literal["recorded", "hand-written"]
    status: Literal["ok", "drift", "error", "skipped"]
    request: str | None = None
    http_status: int | None = None
    differences: list[Difference] = msgspec.field(default_factory=list)
    reason: str | None = None
    truncated: bool = False


class MockCheckResult(Result, frozen=True, kw_only=True):
    """A mock's routes checked against the real service they stand in for.

    `status` is `ok` when every checked route agrees, `drift` when one differs, `error` when the
    upstream could not be asked at all. The CLI exits 1 unless `ok`.
    """

    mock: str
    upstream: str
    status: Literal["ok", "drift", "error"]
    summary: str
    routes: list[RouteCheck]
    checked: int = 0
    drifted: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def ok(self) -> bool:
        """Whether every checked route still agrees with the upstream."""
        return self.status == "ok"
