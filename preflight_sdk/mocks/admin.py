"""The admin endpoints under `/_mock/`, compatible with the original Preflight mocks.

| endpoint | answer |
|---|---|
| `GET /_mock/health` | `{status: "ok", name, port, uptime (s), routeCount, requestCount}` |
| `GET /_mock/requests[?since=30s\\|ISO][&clear=true]` | `{mock, port, count, dropped, requests}` |
| `DELETE /_mock/requests` | `{message: "cleared"}` |
| `GET /_mock/routes` | `{routes: [{index, method, path, name?, when?, status\\|sequence, times?, hits}]}` |
| `POST /_mock/reset[?keepJournal=true]` | `{message: "reset"}`: sequences, counters, `times`, journal start over |

Admin requests are not journaled. They are answered only when they come from this machine
(the connection arrived on a loopback address, from one): a container reaches the mocks on the
Docker bridge gateway and gets 403 there, so no other project's container can read a journal or
empty it before an `expect.mock` check. What they return goes through the project's redaction
policy; a request carrying the host's admin token (`X-Preflight-Token`, which only preflight's
own processes hold, in `.preflight/mocks/admin-token`) reads the journal as recorded, for the
checks of a run.
"""

from __future__ import annotations

import hmac
import os
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from preflight_sdk.core.addresses import is_loopback
from preflight_sdk.core.durations import parse_since
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.redaction import redact_recorded

from .journal import to_entry
from .request import parse_query
from .responses import json_response

if TYPE_CHECKING:
    from .app import MockApp, Receive, Scope, Send

__all__ = [
    "ENDPOINTS",
    "TOKEN_HEADER",
    "admin_token_file",
    "ensure_admin_token",
    "handle_admin",
    "read_admin_token",
]

TOKEN_HEADER = "x-preflight-token"
_TOKEN_FILE = "admin-token"

ENDPOINTS = (
    "GET /_mock/health",
    "GET /_mock/requests",
    "DELETE /_mock/requests",
    "GET /_mock/routes",
    "POST /_mock/reset",
)


def admin_token_file(folder: str | os.PathLike[str]) -> Path:
    """Where the admin token of a checkout's mocks is kept (`folder` is `.preflight/mocks`)."""
    return Path(folder) / _TOKEN_FILE


def read_admin_token(folder: str | os.PathLike[str]) -> str | None:
    """The admin token kept in `folder`, or None when there is none (or it cannot be read)."""
    try:
        text = admin_token_file(folder).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def ensure_admin_token(folder: str | os.PathLike[str]) -> str:
    """The admin token kept in `folder`, made (readable by this user alone) when there is none."""
    found = read_admin_token(folder)
    if found is not None:
        return found
    token = secrets.token_urlsafe(24)
    path = admin_token_file(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w", encoding="ascii") as out:
        out.write(token)
    return token


def _from_this_machine(scope: Scope) -> bool:
    """Whether the connection arrived on a loopback address, from one (never a container's)."""
    server, client = scope.get("server"), scope.get("client")
    if not server or not client:
        return False
    return is_loopback(str(server[0])) and is_loopback(str(client[0]))


def _holds_token(app: MockApp, scope: Scope) -> bool:
    token = app.admin_token
    if not token:
        return False
    for name, value in scope["headers"]:
        if name == TOKEN_HEADER.encode():
            return hmac.compare_digest(value, token.encode())
    return False


async def handle_admin(app: MockApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one admin request (only from this machine: 403 from anywhere else)."""
    while (await receive()).get("more_body", False):  # drain the body; none is used
        pass
    method: str = scope["method"]
    path = scope["path"].rstrip("/")
    if not _from_this_machine(scope):
        status, data = (
            403,
            {
                "error": "the admin endpoints answer this machine only",
                "hint": "read the mock's requests from where preflight runs (`mock_requests`)",
            },
        )
    else:
        status, data = _dispatch(
            app, method, path, scope.get("query_string", b""), raw=_holds_token(app, scope)
        )
    head, payload = json_response(data)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": payload})


def _dispatch(app: MockApp, method: str, path: str, query_string: bytes, *, raw: bool) -> tuple[int, Any]:
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
        return _requests(app, parse_query(query_string), raw=raw)
    if path == "/_mock/requests" and method == "DELETE":
        app.journal.clear()
        return 200, {"message": "cleared"}
    if path == "/_mock/routes" and method in ("GET", "HEAD"):
        hits = app.hits
        redactor = app.redactor
        routes = [route.describe(hits[route.index]) for route in app.mock.routes]
        # A route's conditions may name a credential (`when.headers.Authorization`).
        return 200, {"routes": [redactor.scrub(redactor.body(route)) for route in routes]}
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


def _requests(app: MockApp, query: dict[str, str | list[str]], *, raw: bool) -> tuple[int, Any]:
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
    if not raw:
        requests = [redact_recorded(entry, app.redactor) for entry in requests]
    return 200, {
        "mock": app.name,
        "port": app.port,
        "count": len(requests),
        "dropped": dropped,
        "requests": requests,
    }
