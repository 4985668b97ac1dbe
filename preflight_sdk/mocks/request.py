"""A received request, parsed lazily: query, headers and body are decoded only when asked for.

Most requests of a load test match on method and path alone, so the hot path never pays for
parsing what no route looks at. The same decoding feeds route conditions, templates and the
journal, so all three see one body the same way.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl

import msgspec

from preflight_sdk.core.assertions import MISSING

__all__ = [
    "ParsedBody",
    "RequestView",
    "body_for_matching",
    "parse_body",
    "parse_headers",
    "parse_query",
    "split_path",
]

_FORM = "application/x-www-form-urlencoded"


# JSON nested deeper than this is not parsed: routes, templates, the journal and every reply would
# otherwise recurse through it (a 2 KB body of 1,000 brackets broke the journal). It is kept as
# text, cut to `DEEP_TEXT_LIMIT` characters, and the entry says why.
MAX_JSON_DEPTH = 64
DEEP_TEXT_LIMIT = 4096


class ParsedBody(msgspec.Struct, frozen=True, kw_only=True):
    """A body decoded once: its value, how it was read, and its form fields when it is a form.

    `note` says why a body that looks like JSON was kept as (cut) text instead.
    """

    value: Any
    encoding: str | None
    form: dict[str, str | list[str]] | None = None
    note: str | None = None
    cut: bool = False


_EMPTY = ParsedBody(value=None, encoding=None)


def split_path(path: str) -> list[str]:
    """Return the segments of `path`; `/` and `` have none, a trailing slash is ignored."""
    trimmed = path.strip("/")
    return trimmed.split("/") if trimmed else []


def parse_query(query_string: bytes) -> dict[str, str | list[str]]:
    """Return the query parameters; a repeated name keeps all its values as a list."""
    if not query_string:
        return {}
    return _collect(parse_qsl(query_string.decode("latin-1"), keep_blank_values=True))


def parse_headers(raw: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    """Return headers by lower-case name; repeated headers are joined with ", " (RFC 9110 §5.3)."""
    headers: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def parse_body(body: bytes, content_type: str | None) -> ParsedBody:
    """Decode `body`: JSON when it parses, form fields for a urlencoded form, text, else base64.

    A `text/*` content type keeps the body as text even when it would parse as JSON (`"42"` sent
    as text/plain stays the string "42").
    """
    if not body:
        return _EMPTY
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind == _FORM:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return ParsedBody(value=base64.b64encode(body).decode("ascii"), encoding="base64")
        return ParsedBody(value=text, encoding="text", form=_collect(parse_qsl(text, keep_blank_values=True)))
    if not kind.startswith("text/"):
        try:
            value = msgspec.json.decode(body)
        except msgspec.DecodeError:
            pass
        except RecursionError:
            return _too_deep(body)
        else:
            if _deeper_than(value, MAX_JSON_DEPTH):
                return _too_deep(body)
            return ParsedBody(value=value, encoding="json")
    try:
        return ParsedBody(value=body.decode("utf-8"), encoding="text")
    except UnicodeDecodeError:
        return ParsedBody(value=base64.b64encode(body).decode("ascii"), encoding="base64")


def _too_deep(body: bytes) -> ParsedBody:
    text = body.decode("utf-8", errors="replace")
    return ParsedBody(
        value=text[:DEEP_TEXT_LIMIT],
        encoding="text",
        note=f"JSON nested deeper than {MAX_JSON_DEPTH} levels: kept as text, not parsed",
        cut=len(text) > DEEP_TEXT_LIMIT,
    )


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests containers more than `limit` levels deep (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def body_for_matching(parsed: ParsedBody) -> Any:
    """The value conditions and templates see: form fields for a form, else the decoded body.

    An empty body is `assertions.MISSING`, so `when.body: {exists: false}` can ask for no body.
    """
    if parsed.encoding is None:
        return MISSING
    if parsed.form is not None:
        return parsed.form
    return parsed.value


def _collect(pairs: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    result: dict[str, str | list[str]] = {}
    for key, value in pairs:
        previous = result.get(key)
        if previous is None:
            result[key] = value
        elif isinstance(previous, list):
            previous.append(value)
        else:
            result[key] = [previous, value]
    return result


class RequestView:
    """One request as routes, templates and the journal see it (parsed on first use)."""

    __slots__ = (
        "_body",
        "_headers",
        "_query",
        "body",
        "method",
        "path",
        "query_string",
        "raw_headers",
        "segments",
    )

    def __init__(
        self, method: str, path: str, query_string: bytes, raw_headers: Sequence[tuple[bytes, bytes]]
    ) -> None:
        """A request as it arrives; its `body` is set once read."""
        self.method = method
        self.path = path
        self.segments = split_path(path)
        self.query_string = query_string
        self.raw_headers = raw_headers
        self.body = b""
        self._query: dict[str, str | list[str]] | None = None
        self._headers: dict[str, str] | None = None
        self._body: ParsedBody | None = None

    @property
    def query(self) -> dict[str, str | list[str]]:
        """Query parameters (a repeated one as a list)."""
        if self._query is None:
            self._query = parse_query(self.query_string)
        return self._query

    @property
    def headers(self) -> dict[str, str]:
        """Headers by lower-case name."""
        if self._headers is None:
            self._headers = parse_headers(self.raw_headers)
        return self._headers

    @property
    def parsed_body(self) -> ParsedBody:
        """The decoded body."""
        if self._body is None:
            self._body = parse_body(self.body, self.headers.get("content-type"))
        return self._body

    @property
    def body_value(self) -> Any:
        """What `when.body` and `{{request.body}}` see (form fields for a form; `MISSING` when empty)."""
        return body_for_matching(self.parsed_body)
