"""Route matching: method, path pattern, then `when` conditions; first match in file order wins.

Paths are compiled once into segment tokens, so matching a request is a few string compares per
route and never compiles a regular expression. `when` conditions reuse the assertion engine
(`preflight_sdk.core.assertions.check`), so `{matches: "^ord_"}`, `{exists: true}` or `{gt: 10}` work on
query values, headers and (nested, partial) JSON bodies alike. When nothing matches, `explain`
says for the closest routes exactly which part did not fit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from preflight_sdk.core.assertions import MISSING, AssertionResult, check, is_operator_set, passed

from .request import RequestView

if TYPE_CHECKING:
    from .routes import CompiledRoute

__all__ = [
    "ANY_METHODS",
    "Conditions",
    "PathPattern",
    "as_number",
    "method_matches",
    "near_misses",
    "reason",
    "text_condition",
]

ANY_METHODS = frozenset({"ANY", "*"})
_LITERAL, _PARAM, _STAR = 0, 1, 2
_COMPARISONS = frozenset({"gt", "gte", "lt", "lte", "$gt", "$gte", "$lt", "$lte"})


class PathPattern:
    """A route path such as `/orders/:id/items/*`, compiled to segment tokens.

    `:name` captures one segment; `*` matches one segment, or, as the last segment, the rest of
    the path at any depth (captured as `*`). A trailing slash is ignored.
    """

    __slots__ = ("rest", "text", "tokens")

    def __init__(self, text: str) -> None:
        self.text = text
        parts = text.strip("/").split("/") if text.strip("/") else []
        self.rest = bool(parts) and parts[-1] == "*"
        if self.rest:
            parts = parts[:-1]
        tokens: list[tuple[int, str]] = []
        for part in parts:
            if part.startswith(":") and len(part) > 1:
                tokens.append((_PARAM, part[1:]))
            elif part == "*":
                tokens.append((_STAR, part))
            else:
                tokens.append((_LITERAL, part))
        self.tokens = tuple(tokens)

    def match(self, segments: list[str]) -> dict[str, str] | None:
        """Return the captured parameters when `segments` fit the pattern, else None."""
        tokens = self.tokens
        count = len(tokens)
        if len(segments) != count and not (self.rest and len(segments) >= count):
            return None
        params: dict[str, str] = {}
        for (kind, value), segment in zip(tokens, segments, strict=False):
            if kind == _LITERAL:
                if segment != value:
                    return None
            elif kind == _PARAM:
                params[value] = segment
        if self.rest:
            params["*"] = "/".join(segments[count:])
        return params

    def explain(self, segments: list[str]) -> list[str]:
        """Return why `segments` do not fit (empty when they do)."""
        reasons = [
            f"path segment {position} '{segment}' != '{value}'"
            for position, ((kind, value), segment) in enumerate(
                zip(self.tokens, segments, strict=False), start=1
            )
            if kind == _LITERAL and segment != value
        ]
        count = len(self.tokens)
        if self.rest and len(segments) < count:
            reasons.append(f"path has {len(segments)} segment(s), route needs at least {count}")
        elif not self.rest and len(segments) != count:
            reasons.append(f"path has {len(segments)} segment(s), route has {count}")
        return reasons


def method_matches(route_method: str | None, method: str) -> bool:
    """Tell whether a request `method` fits a route's (None = any; HEAD also fits GET routes)."""
    return route_method is None or route_method == method or (method == "HEAD" and route_method == "GET")


def text_condition(expected: Any) -> tuple[Any, bool]:
    """Prepare a condition on a text value (query parameter or header).

    Query and header values are strings, while YAML reads `page: 2` as a number: scalar
    expectations are compared as text. Returns the prepared expectation and whether the actual
    value should be read as a number (for `gt`, `lt`… operators).
    """
    if isinstance(expected, bool):
        return ("true" if expected else "false"), False
    if isinstance(expected, int | float):
        return _number_text(expected), False
    if isinstance(expected, list):
        return [text_condition(item)[0] for item in expected], False
    if is_operator_set(expected):
        prepared: dict[str, Any] = {}
        for key, operand in expected.items():
            bare = key.lstrip("$")
            if bare in ("eq", "ne"):
                operand = text_condition(operand)[0]
            elif bare in ("in", "notIn") and isinstance(operand, list):
                operand = [text_condition(item)[0] for item in operand]
            prepared[key] = operand
        return prepared, bool(_COMPARISONS & set(expected))
    return expected, False


def _number_text(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def as_number(value: Any) -> Any:
    """Return `value` as an int or float when it is a numeric string, else unchanged."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return value
    return value


class Conditions:
    """A route's compiled `when`: query, header (case-insensitive) and body conditions."""

    __slots__ = ("body", "has_body", "headers", "query")

    def __init__(self, query: Mapping[str, Any], headers: Mapping[str, Any], body: Any) -> None:
        self.query = tuple((key, *text_condition(value)) for key, value in query.items())
        self.headers = tuple((key.lower(), *text_condition(value)) for key, value in headers.items())
        self.body = body
        self.has_body = body is not None

    def passes(self, request: RequestView) -> bool:
        """Tell whether every condition holds (stops at the first that does not)."""
        if self.query:
            query = request.query
            for key, expected, numeric in self.query:
                if not _holds(query.get(key, MISSING), expected, numeric, f"query.{key}"):
                    return False
        if self.headers:
            headers = request.headers
            for key, expected, numeric in self.headers:
                if not _holds(headers.get(key, MISSING), expected, numeric, f"headers.{key}"):
                    return False
        return not self.has_body or passed(check(request.body_value, self.body, "body"))

    def failures(self, request: RequestView) -> list[AssertionResult]:
        """Return every failed check, for the no-match explanation."""
        results: list[AssertionResult] = []
        for key, expected, numeric in self.query:
            results.extend(_checks(request.query.get(key, MISSING), expected, numeric, f"query.{key}"))
        for key, expected, numeric in self.headers:
            results.extend(_checks(request.headers.get(key, MISSING), expected, numeric, f"headers.{key}"))
        if self.has_body:
            results.extend(check(request.body_value, self.body, "body"))
        return [r for r in results if not r.passed]


def _checks(actual: Any, expected: Any, numeric: bool, path: str) -> list[AssertionResult]:
    return check(as_number(actual) if numeric else actual, expected, path)


def _holds(actual: Any, expected: Any, numeric: bool, path: str) -> bool:
    if isinstance(expected, str):  # the common case, without building results
        return isinstance(actual, str) and actual == expected
    return passed(_checks(actual, expected, numeric, path))


def reason(result: AssertionResult) -> str:
    """Return a failed check as a short human reason: `body.type: expected "create", got "update"`."""
    if result.operator == "equals":
        got = "nothing" if result.message.endswith("<missing>") else _json(result.actual)
        return f"{result.path}: expected {_json(result.expected)}, got {got}"
    return result.message


def _json(value: Any) -> str:
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def near_misses(
    routes: Sequence[CompiledRoute], request: RequestView, hits: list[int], limit: int = 3
) -> list[dict[str, Any]]:
    """Return the routes closest to matching `request`, each with why it did not, closest first.

    Args:
        routes: the mock's compiled routes (`CompiledRoute`), in file order.
        request: the unmatched request.
        hits: how many times each route has answered (for `times`).
        limit: at most this many routes.
    """
    scored: list[tuple[int, int, dict[str, Any]]] = []
    for route in routes:
        why: list[str] = []
        if not method_matches(route.method, request.method):
            why.append(f"method {request.method} != {route.method}")
        why.extend(route.pattern.explain(request.segments))
        if route.conditions is not None:
            why.extend(reason(r) for r in route.conditions.failures(request))
        if route.times is not None and hits[route.index] >= route.times:
            why.append(f"route already answered its {route.times} time(s) (`times: {route.times}`)")
        if not why:
            continue
        item: dict[str, Any] = {
            "route": f"{route.method or 'ANY'} {route.pattern.text}",
            "index": route.index,
        }
        if route.name:
            item["name"] = route.name
        item["why"] = why
        scored.append((len(why), route.index, item))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    return [item for _, _, item in scored[:limit]]
