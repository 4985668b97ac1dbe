"""The admin endpoints under `/_mock/`, compatible with the original Preflight mocks.

| endpoint | answer |
|---|---|
| `GET /_mock/health` | `{status: "ok", name, port, uptime (s), routeCount, requestCount}` |
| `GET /_mock/requests[?since=30s\\|ISO][&clear=true]` | `{mock, port, count, dropped, requests}` |
| `DELETE /_mock/requests` | `{message: "cleared"}` |
| `GET /_mock/routes` | `{routes: [{index, method, path, name?, when?, status\\|sequence, times?, hits}]}` |
| `POST /_mock/reset[?keepJournal=true]` | `{message: "reset"}`: sequences, counters, `times`, journal start over |

Admin requests are not journaled.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from preflight_sdk.core.durations import parse_since
from preflight_sdk.core.errors import InputError

from .journal import to_entry
from .request import parse_query
from .responses import json_response

if TYPE_CHECKING:
    from .app import MockApp, Receive, Scope, Send

__all__ = ["ENDPOINTS", "handle_admin"]

ENDPOINTS = (
    "GET /_mock/health",
    "GET /_mock/requests",
    "DELETE /_mock/requests",
    "GET /_mock/routes",
    "POST /_mock/reset",
)


async def handle_admin(app: MockApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one admin request."""
    while (await receive()).get("more_body", False):  # drain the body; none is used
        pass
    method: str = scope["method"]
    path = scope["path"].rstrip("/")
    status, data = _dispatch(app, method, path, scope.get("query_string", b""))
    head, payload = json_response(data)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": payload})


def _dispatch(app: MockApp, method: str, path: str, query_string: bytes) -> tuple[int, Any]:
    if path == "/_mock/health" and method in ("GET", "HEAD"):
        return 200, {
            "status": "ok",
            "name": app.name,
            "port": app.port,
            "uptime": round(time.monotonic() - app.started, 3),
            "routeCount": len(app.mock.routes),
            "requestCount": app.journal.received,
        }
    if path == "/_mock/requests" and method in ("GET", "HEAD"):
        return _requests(app, parse_query(query_string))
    if path == "/_mock/requests" and method == "DELETE":
        app.journal.clear()
        return 200, {"message": "cleared"}
    if path == "/_mock/routes" and method in ("GET", "HEAD"):
        hits = app.hits
        return 200, {"routes": [route.describe(hits[route.index]) for route in app.mock.routes]}
    if path == "/_mock/reset" and method == "POST":
        keep = str(parse_query(query_string).get("keepJournal", "false")).lower() in ("1", "true", "yes")
        app.reset(keep_journal=keep)
        return 200, {"message": "reset"}
    known = {e.split(" ", 1)[1] for e in ENDPOINTS}
    status = 405 if path in known else 404
    return status, {
        "error": "method not allowed" if status == 405 else "unknown admin endpoint",
        "request": {"method": method, "path": path},
        "endpoints": list(ENDPOINTS),
    }


def _requests(app: MockApp, query: dict[str, str | list[str]]) -> tuple[int, Any]:
    since = query.get("since")
    clear = str(query.get("clear", "false")).lower() in ("1", "true", "yes")
    since_epoch: float | None = None
    if isinstance(since, str) and since:
        try:
            since_epoch = parse_since(since).timestamp()
        except InputError as exc:
            return 400, {"error": exc.message, "hint": exc.hint}
    records, dropped = app.journal.snapshot(since_epoch, clear=clear)
    requests = [to_entry(record) for record in records]
    return 200, {
        "mock": app.name,
        "port": app.port,
        "count": len(requests),
        "dropped": dropped,
        "requests": requests,
    }
