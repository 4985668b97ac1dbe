"""A new recording merged with the routes recorded before it.

Routes are the same route when method, path and conditions are the same. A route recorded again
with the same answers is `unchanged` and is kept as it was (its `recorded` note too, so recording
the same calls twice writes the same file); one whose answers changed is `replaced`; a new one is
`added`; an earlier route this recording did not see is `kept`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from preflight_sdk.config.model import MockResponse, MockRoute

from ..responses import read_body_file
from .derive import route_order

__all__ = ["Merged", "merge_routes", "route_label"]


class Merged(msgspec.Struct, frozen=True, kw_only=True):
    """The routes to write, and what changed (each route as `METHOD /path`, `when` shown when set)."""

    routes: list[MockRoute]
    added: list[str]
    replaced: list[str]
    unchanged: int
    kept: int


def route_label(route: MockRoute) -> str:
    """A route as a person reads it in a report: `POST /v1/charges` (with its conditions)."""
    label = f"{route.method} {route.path}"
    if route.when is not None:
        parts = [
            f"{k}={msgspec.json.encode(v).decode()}"
            for k, v in {
                **route.when.query,
                **(_flat(route.when.body) if route.when.body is not None else {}),
            }.items()
        ]
        label += " when " + ", ".join(parts)
    return label if len(label) <= 200 else label[:197] + "..."


def _flat(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        return {"body": body}
    out: dict[str, Any] = {}
    for key, value in body.items():
        if isinstance(value, dict) and value and not any(k in ("eq", "exists") for k in value):
            out.update({f"{key}.{k}": v for k, v in _flat(value).items()})
        else:
            out[str(key)] = value
    return out


def _identity(route: MockRoute) -> bytes:
    when = msgspec.to_builtins(route.when) if route.when is not None else None
    return msgspec.json.encode([route.method.upper(), route.path, when], order="sorted")


def _answer(answer: MockResponse) -> Any:
    body = read_body_file(answer.body_file) if answer.body_file else answer.body
    if isinstance(body, bytes):
        body = {"bytes": body.hex()}
    return [
        answer.status,
        {k.lower(): v for k, v in answer.headers.items()},
        body,
        answer.delay,
        answer.fault,
    ]


def _content(route: MockRoute) -> bytes:
    answers = route.sequence or ([route.response] if route.response is not None else [])
    return msgspec.json.encode([[_answer(a) for a in answers], route.loop, route.times], order="sorted")


def merge_routes(before: list[MockRoute], recorded: list[MockRoute]) -> Merged:
    """Merge a new recording into the routes recorded before (see the module docstring).

    Ordered as `derive` orders routes, so that none hides another.
    """
    earlier = {_identity(r): r for r in before}
    routes: list[MockRoute] = []
    added: list[str] = []
    replaced: list[str] = []
    unchanged = 0
    seen: set[bytes] = set()
    for route in recorded:
        identity = _identity(route)
        seen.add(identity)
        old = earlier.get(identity)
        if old is None:
            added.append(route_label(route))
            routes.append(route)
        elif _content(old) == _content(route):
            unchanged += 1
            routes.append(old)
        else:
            replaced.append(route_label(route))
            routes.append(route)
    left = [r for r in before if _identity(r) not in seen]
    return Merged(
        routes=sorted(routes + left, key=route_order),
        added=added,
        replaced=replaced,
        unchanged=unchanged,
        kept=len(left),
    )
