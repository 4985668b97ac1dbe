"""Drift: each route of a mock sent to the real service it stands in for, the answers compared.

A route's request is rebuilt from what the route says: its recorded example (path, query, body),
or for a hand-written route its literal path and the literal values of its `when` query and body
(a route whose path has parameters and no example is skipped, saying why). The upstream's answer
is compared with the route's (with each step of a `sequence`; the closest one counts): the status,
the media type, and for JSON the shape (fields added, removed, or of another JSON type). Values
are never compared (they are what a mock is free to make up), so nothing a response holds is
repeated in the result but types, statuses and media types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlencode

import msgspec

from preflight_sdk.config.model import MockResponse, MockRoute
from preflight_sdk.core.assertions import is_operator_set
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.recording import Difference, MockCheckResult, RouteCheck
from preflight_sdk.core.templates import TEMPLATE

from ..request import parse_body
from ..responses import read_body_file
from .merge import route_label

__all__ = ["CheckedRoute", "check_routes", "shape_differences"]

_MAX_DIFFERENCES = 20
_ANY = "any"
_NUMBERS = ("{{epoch}}", "{{timestamp}}", "{{counter}}")


class CheckedRoute(msgspec.Struct, frozen=True, kw_only=True):
    """A route to check, with its position among the mock's routes and where it was written."""

    index: int
    route: MockRoute
    source: Literal["recorded", "hand-written"]


def _json_type(value: Any) -> str:
    if isinstance(value, str):
        whole = TEMPLATE.fullmatch(value.strip())
        if whole is not None:
            template = "{{" + whole.group(1).strip() + "}}"
            if template in _NUMBERS:
                return "number"
            if template.startswith("{{request."):
                return _ANY  # an echo: whatever the request sent
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def shape_differences(expected: Any, actual: Any, path: str = "$") -> list[Difference]:
    """How the shape of `actual` differs from `expected` (fields added, removed, of another type)."""
    want, got = _json_type(expected), _json_type(actual)
    if want == _ANY:
        return []
    if want != got:
        return [Difference(kind="type", path=path, expected=want, actual=got)]
    out: list[Difference] = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                out.append(
                    Difference(kind="removed", path=f"{path}.{key}", expected=_json_type(expected[key]))
                )
        for key in actual:
            if key not in expected:
                out.append(Difference(kind="added", path=f"{path}.{key}", actual=_json_type(actual[key])))
            else:
                out += shape_differences(expected[key], actual[key], f"{path}.{key}")
    elif isinstance(expected, list) and isinstance(actual, list) and expected and actual:
        for item in actual[:5]:
            found = shape_differences(expected[0], item, f"{path}[]")
            if found:
                out += found
                break
    return out


def _media(headers: Mapping[str, str], body: Any) -> str | None:
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip().lower()
    if body is None:
        return None
    if isinstance(body, str):
        return "text/plain"
    return "application/octet-stream" if isinstance(body, bytes) else "application/json"


def _concrete(value: Any) -> Any:
    """A condition's literal value (an operator set has none: `None`)."""
    if isinstance(value, dict):
        if is_operator_set(value):
            literal = value.get("eq", value.get("$eq"))
            return literal if len(value) == 1 and literal is not None else None
        out = {k: _concrete(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None}
    return value


def _request(route: MockRoute) -> tuple[str, Any] | str:
    """The target and JSON body to send for `route`, or why it cannot be rebuilt."""
    origin = route.recorded
    if origin is not None and origin.example:
        body = origin.example_body
        if body is None and route.when is not None and route.when.body is not None:
            body = _concrete(route.when.body)
        return origin.example, body
    if ":" in route.path or "*" in route.path:
        return "its path has parameters and it holds no recorded example"
    query: dict[str, Any] = {}
    body = None
    if route.when is not None:
        query = {
            k: v
            for k, v in ((k, _concrete(v)) for k, v in route.when.query.items())
            if isinstance(v, str | int | float)
        }
        body = _concrete(route.when.body) if route.when.body is not None else None
    return route.path + (f"?{urlencode(query)}" if query else ""), body


def _answers(route: MockRoute) -> list[MockResponse]:
    return list(route.sequence or ([route.response] if route.response is not None else []))


def _compare(answer: MockResponse, status: int, media: str | None, body: Any) -> list[Difference]:
    expected = read_body_file(answer.body_file) if answer.body_file else answer.body
    out: list[Difference] = []
    if answer.status != status:
        out.append(Difference(kind="status", expected=answer.status, actual=status))
    want = _media(answer.headers, expected)
    if want is not None and media is not None and want != media:
        out.append(Difference(kind="contentType", expected=want, actual=media))
    if want == media == "application/json" and not isinstance(expected, bytes):
        out += shape_differences(expected, body)
    return out


async def _check(
    client: Any, entry: CheckedRoute, base: str, headers: dict[str, str], redactor: Redactor
) -> RouteCheck:
    import httpx

    route = entry.route
    label = route_label(route)
    answers = _answers(route)
    head = RouteCheck(index=entry.index, route=label, source=entry.source, status="skipped")
    if not answers or any(a.fault or a.proxy for a in answers):
        return msgspec.structs.replace(
            head, reason="it answers with a fault or a proxy, not a response to compare"
        )
    built = _request(route)
    if isinstance(built, str):
        return msgspec.structs.replace(head, reason=built)
    target, body = built
    method = "GET" if route.method.upper() in ("ANY", "*") else route.method.upper()
    shown = f"{method} {redactor.url(target)}"
    sent = dict(headers)
    content = None
    if body is not None:
        content = msgspec.json.encode(body)
        sent.setdefault("content-type", "application/json")
    try:
        response = await client.request(method, base + target, content=content, headers=sent)
    except httpx.HTTPError as exc:
        reason = redactor.text(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        return msgspec.structs.replace(head, status="error", request=shown, reason=reason)
    media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower() or None
    parsed = parse_body(response.content, media).value if media == "application/json" else None
    found = [_compare(answer, response.status_code, media, parsed) for answer in answers]
    closest = min(found, key=len)
    return msgspec.structs.replace(
        head,
        status="ok" if not closest else "drift",
        request=shown,
        http_status=response.status_code,
        differences=closest[:_MAX_DIFFERENCES],
        truncated=len(closest) > _MAX_DIFFERENCES,
    )


async def check_routes(
    mock: str,
    routes: Sequence[CheckedRoute],
    *,
    upstream: str,
    headers: dict[str, str],
    redactor: Redactor,
    timeout: float,
) -> MockCheckResult:
    """Send each route's request to `upstream` and report, route by route, where the answers differ."""
    import httpx

    base = upstream.rstrip("/")
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
        checks = [await _check(client, entry, base, headers, redactor) for entry in routes]
    drifted = sum(c.status == "drift" for c in checks)
    errors = sum(c.status == "error" for c in checks)
    skipped = sum(c.status == "skipped" for c in checks)
    checked = len(checks) - skipped - errors
    shown = redactor.url(base)
    status: Literal["ok", "drift", "error"] = "drift" if drifted else "error" if errors else "ok"
    summary = (
        f"{mock}: {drifted} of {checked} checked route(s) differ from {shown}"
        if drifted
        else f"{mock}: every checked route ({checked}) agrees with {shown}"
        if status == "ok"
        else f"{mock}: {errors} route(s) could not be checked against {shown}"
    )
    if skipped:
        summary += f"; {skipped} skipped"
    return MockCheckResult(
        mock=mock,
        upstream=shown,
        status=status,
        summary=summary,
        routes=checks,
        checked=checked,
        drifted=drifted,
        skipped=skipped,
        errors=errors,
    )
