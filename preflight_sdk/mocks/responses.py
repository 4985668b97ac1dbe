"""Mock answers: compiled once, rendered per request only when they hold templates.

A response without `{{…}}` is encoded to bytes when the mock starts and sent as is. A response
with templates keeps its raw form and is rendered for every request, so `{{uuid}}`, `{{now}}` and
`{{counter}}` are fresh each time (never frozen at load). A value that is only a template keeps its
JSON type (`"{{request.body.n}}"` stays a number); templates work in header values too.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.config.model import MockResponse
from preflight_sdk.core.assertions import MISSING
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.core.templates import has_template, render

from .request import RequestView

__all__ = ["CompiledResponse", "encode", "json_response", "read_body_file", "template_scope"]

Head = list[tuple[bytes, bytes]]
_JSON = b"application/json"
_TEXT = b"text/plain; charset=utf-8"
_OCTETS = b"application/octet-stream"


def read_body_file(path: str) -> Any:
    """The body a `bodyFile` holds: its JSON value for a `.json` file, else its bytes.

    The loader checked the file exists (and resolved its path); reading it is what a mock start
    or reload pays, once.

    Raises:
        ConfigError: the file cannot be read, or a `.json` file is not JSON.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read body file {path}: {exc.strerror or exc}", hint="check the route's `bodyFile`"
        ) from None
    if not path.endswith(".json"):
        return data
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise ConfigError(
            f"body file {path} is not JSON: {exc}",
            hint="fix the file, or give it another extension to send it as it is",
        ) from None


class CompiledResponse:
    """One answer of a route: static bytes, or a template rendered per request."""

    __slots__ = (
        "body",
        "delay",
        "fault",
        "headers",
        "proxy",
        "static_body",
        "static_head",
        "status",
        "templated",
    )

    def __init__(self, response: MockResponse) -> None:
        self.status = response.status
        self.delay = parse_duration(response.delay, field="delay") if response.delay is not None else 0.0
        self.fault = response.fault
        self.proxy = response.proxy.rstrip("/") if response.proxy else None
        self.body = response.body if response.body_file is None else read_body_file(response.body_file)
        self.headers = dict(response.headers)
        self.templated = has_template(self.body) or has_template(self.headers)
        self.static_head: Head = []
        self.static_body = b""
        if not self.templated:
            self.static_head, self.static_body = encode(self.status, self.headers, self.body)

    def render(self, scope: Mapping[str, Any]) -> tuple[Head, bytes]:
        """Return the headers and body for one request.

        Raises:
            UnknownVariableError: a template names something the request does not have.
        """
        if not self.templated:
            return self.static_head, self.static_body
        headers = render(self.headers, scope)
        body = render(self.body, scope)
        return encode(self.status, headers, body)


def encode(status: int, headers: Mapping[str, Any], body: Any) -> tuple[Head, bytes]:
    """Return the ASGI header list and body bytes of an answer.

    A string body is sent as text (`text/plain` unless a content type is given), anything else
    but null as JSON. `content-length` is always set (no chunked encoding), except where HTTP
    forbids a body.
    """
    if body is None:
        payload, content_type = b"", None
    elif isinstance(body, bytes):  # a `bodyFile` that is not JSON: sent as it is
        payload, content_type = body, _OCTETS
    elif isinstance(body, str):
        payload, content_type = body.encode("utf-8"), _TEXT
    else:
        payload, content_type = msgspec.json.encode(body), _JSON
    head: Head = []
    has_type = False
    for name, value in headers.items():
        key = name.strip().lower()
        if key == "content-length":
            continue
        has_type = has_type or key == "content-type"
        text = value if isinstance(value, str) else _header_text(value)
        # CR/LF in a templated value would split the header (and uvicorn refuses it).
        head.append((key.encode("latin-1"), text.replace("\r", " ").replace("\n", " ").encode("utf-8")))
    if content_type is not None and not has_type:
        head.append((b"content-type", content_type))
    if status >= 200 and status not in (204, 304):
        head.append((b"content-length", str(len(payload)).encode("ascii")))
    return head, payload


def json_response(data: Any) -> tuple[Head, bytes]:
    """Return the headers and body of a JSON answer (admin endpoints, explanations, errors)."""
    payload = msgspec.json.encode(data)
    return [(b"content-type", _JSON), (b"content-length", str(len(payload)).encode("ascii"))], payload


def _header_text(value: Any) -> str:
    """A header value that is not a string: empty for null, a number as written, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return msgspec.json.encode(value).decode()  # `true`, `false`, compact objects and lists


def _uuid() -> str:
    return str(uuid.uuid4())


def _timestamp() -> int:
    return int(time.time() * 1000)


def _epoch() -> int:
    return int(time.time())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def template_scope(request: RequestView, params: Mapping[str, str], counter: int, url: str) -> dict[str, Any]:
    """Return what response templates may name for one request.

    `request.{method,path,url,params,query,headers,body}`, `uuid` (fresh per use), `timestamp`
    (epoch milliseconds), `epoch` (epoch seconds), `now` (ISO 8601 UTC) and `counter` (this
    route's hit number, from 1).
    """
    body = request.body_value
    return {
        "request": {
            "method": request.method,
            "path": request.path,
            "url": url,
            "params": dict(params),
            "query": request.query,
            "headers": request.headers,
            "body": None if body is MISSING else body,
        },
        "uuid": _uuid,
        "timestamp": _timestamp,
        "epoch": _epoch,
        "now": _now,
        "counter": counter,
    }
