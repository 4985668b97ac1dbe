"""Recorded exchanges as the derivation reads them: parsed once, credentials found, answers kept.

Secrets are handled here, before anything is derived: the values a request sent under a secret
name (an `Authorization` header, an `api_key` field, a `token` parameter) join the project's
known secret values, so they are masked by value wherever they appear (an answer echoing a key
included); secret-named request fields never become conditions, and secret-named answer fields and
headers are written as `[redacted]` (headers: dropped).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from preflight_sdk.core.redaction import REDACTED, Redactor

from ..request import parse_body, parse_headers, parse_query, split_path
from .noise import dropped_header
from .recorder import Exchange

__all__ = ["Seen", "read_exchanges", "recording_redactor"]

AnswerKind = Literal["json", "text", "bytes", "none"]


class Seen(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded exchange, parsed and redacted (see the module docstring).

    Attributes:
        method: the request method.
        segments: the request path's segments (percent-decoded).
        query: the query parameters (secret-named ones removed).
        body: what conditions and templates see of the request body: its JSON value, a form's
            fields, or short text; None without body (or for a binary one). Secrets removed.
        target: the request's path and query, as recorded (secrets masked).
        status: the upstream's status.
        headers: the answer headers worth writing (lower-case names).
        answer: the answer body: a JSON value, text, bytes, or None.
        kind: how to read `answer`.
        epoch: when the request arrived.
    """

    method: str
    segments: list[str]
    query: dict[str, str | list[str]]
    body: Any
    target: str
    status: int
    headers: dict[str, str]
    answer: Any
    kind: AnswerKind
    epoch: float


_SCHEMES = ("bearer ", "basic ", "token ", "digest ")


def recording_redactor(base: Redactor, exchanges: list[Exchange]) -> Redactor:
    """`base` plus the values the recorded requests sent under secret names (credentials)."""
    found: set[str] = set()
    for exchange in exchanges:
        headers = parse_headers(exchange.headers)
        for name, text in headers.items():
            if base.secret(name):
                found.update(_credential(text))
        for name, value in parse_query(exchange.query_string).items():
            if base.secret(name):
                found.update([value] if isinstance(value, str) else value)
        parsed = parse_body(exchange.body, headers.get("content-type"))
        found.update(_secret_leaves(base, parsed.form if parsed.form is not None else parsed.value))
    if not found:
        return base
    return Redactor(base.words, (*base.values, *sorted(found)))


def _credential(value: str) -> list[str]:
    """A header's secret values: the whole value, and the credential after its scheme."""
    values = [value.strip()]
    lowered = value.lower()
    for scheme in _SCHEMES:
        if lowered.startswith(scheme):
            values.append(value[len(scheme) :].strip())
    return [v for v in values if v]


def _secret_leaves(redactor: Redactor, value: Any, depth: int = 0) -> list[str]:
    if depth > 32:
        return []
    if isinstance(value, dict):
        found: list[str] = []
        for key, item in value.items():
            if isinstance(key, str) and redactor.secret(key):
                found += [
                    str(v) for v in (item if isinstance(item, list) else [item]) if isinstance(v, str | int)
                ]
            else:
                found += _secret_leaves(redactor, item, depth + 1)
        return found
    if isinstance(value, list):
        return [leaf for item in value for leaf in _secret_leaves(redactor, item, depth + 1)]
    return []


def read_exchanges(exchanges: list[Exchange], redactor: Redactor) -> list[Seen]:
    """Parse and redact every exchange (see the module docstring)."""
    return [_read(exchange, redactor) for exchange in exchanges]


def _read(exchange: Exchange, redactor: Redactor) -> Seen:
    request_headers = parse_headers(exchange.headers)
    parsed = parse_body(exchange.body, request_headers.get("content-type"))
    if parsed.form is not None:
        body: Any = _without_secrets(parsed.form, redactor)
    elif parsed.encoding == "json":
        body = _without_secrets(parsed.value, redactor)
    elif parsed.encoding == "text" and len(parsed.value) <= 1024:
        body = redactor.text(parsed.value)
    else:
        body = None
    query = {k: v for k, v in parse_query(exchange.query_string).items() if not redactor.secret(k)}
    target = redactor.url(
        exchange.path + (f"?{exchange.query_string.decode('latin-1')}" if exchange.query_string else "")
    )
    headers: dict[str, str] = {}
    for name, value in parse_headers(exchange.response_headers).items():
        if dropped_header(name) or redactor.secret(name):
            continue
        headers[name] = redactor.known(value)
    answer, kind = _answer(exchange.response_body, headers.get("content-type"), redactor)
    return Seen(
        method=exchange.method.upper(),
        segments=[redactor.known(s) for s in split_path(exchange.path)],
        query=query,
        body=body,
        target=target,
        status=exchange.status,
        headers=headers,
        answer=answer,
        kind=kind,
        epoch=exchange.epoch,
    )


def _answer(payload: bytes, content_type: str | None, redactor: Redactor) -> tuple[Any, AnswerKind]:
    if not payload:
        return None, "none"
    if b"{{" in payload:
        # Text that reads as a template would be rendered on replay: it is sent back as it came.
        return redactor.known(payload.decode("latin-1")).encode("latin-1"), "bytes"
    parsed = parse_body(payload, content_type)
    if parsed.encoding == "json" and parsed.note is None:
        return redactor.scrub(redactor.body(parsed.value)), "json"
    if parsed.encoding == "text" and parsed.note is None and parsed.form is None:
        return redactor.text(parsed.value), "text"
    if parsed.form is not None:
        return redactor.text(payload.decode("utf-8")), "text"
    return payload, "bytes"


def _without_secrets(value: Any, redactor: Redactor, depth: int = 0) -> Any:
    """A request body for conditions: secret-named fields and known secret values left out."""
    if depth > 32:
        return None
    if isinstance(value, dict):
        return {
            key: _without_secrets(item, redactor, depth + 1)
            for key, item in value.items()
            if not (isinstance(key, str) and redactor.secret(key))
            and not (isinstance(item, str) and redactor.known(item) != item)
        }
    if isinstance(value, list):
        return [_without_secrets(item, redactor, depth + 1) for item in value]
    if isinstance(value, str) and redactor.known(value) != value:
        return REDACTED
    return value
