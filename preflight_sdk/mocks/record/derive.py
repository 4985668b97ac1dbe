"""Recorded exchanges become routes in e2e.yaml's own grammar: deduplicated, denoised, as loose as is safe.

1. Calls are grouped by method and route path (`paths`: an id that varies becomes `:id`).
2. Within a group, request fields that differ between calls (query parameters, body fields; never
   a credential, never a generated value) become `when` conditions, but only as many as it takes
   to tell apart calls that were answered differently: calls answered alike share one route that
   matches whatever they sent.
3. A route's answers are written with templates for what varies per call (`answers`); identical
   requests become one route, and the same request answered differently in turn becomes a
   `sequence` (its last answer then repeats, as the upstream's last one would).

Routes are ordered so that none hides another: literal paths before parameters, conditions before
the route without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from preflight_sdk.config.model import MockResponse, MockRoute, MockWhen, RecordedOrigin
from preflight_sdk.core.assertions import is_operator_set
from preflight_sdk.core.redaction import Redactor

from ..matching import PathPattern
from ..request import split_path
from .answers import Answer, route_answers
from .noise import noise_template
from .paths import route_paths
from .reading import Seen, read_exchanges, recording_redactor
from .recorder import Exchange

__all__ = ["derive_routes", "route_order"]

_MISSING = "\0missing"
_ABSENT = object()  # a field some calls did not send: `{exists: false}` in the condition
Feature = tuple[str | int, ...]


def derive_routes(exchanges: Sequence[Exchange], redactor: Redactor, *, at: str) -> list[MockRoute]:
    """Turn recorded exchanges into routes (see the module docstring); `at` stamps each as recorded then."""
    exchanges = list(exchanges)
    if not exchanges:
        return []
    policy = recording_redactor(redactor, exchanges)
    seen = read_exchanges(exchanges, policy)
    paths = route_paths(seen)
    groups: dict[tuple[str, str], list[int]] = {}
    for index, item in enumerate(seen):
        groups.setdefault((item.method, paths[index]), []).append(index)
    routes: list[MockRoute] = []
    for (method, path), members in groups.items():
        pattern = PathPattern(path)
        params = [pattern.match(seen[i].segments) or {} for i in members]
        for chosen, conditions in _split(seen, members, params):
            routes.append(
                _route(
                    method,
                    path,
                    [seen[i] for i in chosen],
                    [params[members.index(i)] for i in chosen],
                    conditions,
                    at,
                )
            )
    return sorted(routes, key=route_order)


def _features(item: Seen) -> dict[Feature, Any]:
    """The request fields a condition may name: query parameters and the body's leaves."""
    found: dict[Feature, Any] = {("query", k): v for k, v in item.query.items()}
    body = item.body
    if isinstance(body, dict):
        for path, value in _flat(body, ()):
            found[("body", *path)] = value
    elif body is not None:
        found[("body",)] = body
    return {k: v for k, v in found.items() if noise_template(v, item.epoch) is None}


def _flat(value: dict[str, Any], path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = []
    for key, item in value.items():
        if isinstance(item, dict) and item and len(path) < 16:
            out += _flat(item, (*path, str(key)))
        else:
            out.append(((*path, str(key)), item))
    return out


def _key(value: Any) -> bytes:
    return msgspec.json.encode(value, order="sorted")


def _split(
    seen: list[Seen], members: list[int], params: list[dict[str, str]]
) -> list[tuple[list[int], dict[Feature, Any]]]:
    """The routes of one method and path: which calls each answers, and its conditions."""
    features = {i: _features(seen[i]) for i in members}
    names = sorted({f for i in members for f in features[i]}, key=str)
    varying = [f for f in names if len({_key(features[i].get(f, _MISSING)) for i in members}) > 1]
    answers = {
        i: _key(msgspec.to_builtins(route_answers([seen[i]], [params[members.index(i)]])[0])) for i in members
    }

    def partition(by: list[Feature]) -> dict[bytes, list[int]]:
        parts: dict[bytes, list[int]] = {}
        for i in members:
            parts.setdefault(_key([features[i].get(f, _MISSING) for f in by]), []).append(i)
        return parts

    def told_apart(by: list[Feature]) -> bool:
        # Every group of calls these conditions cannot tell apart was answered the same way, in
        # the same order, as each finer group inside it.
        fine = partition(varying)
        for group in partition(by).values():
            inner = [tuple(answers[i] for i in part) for part in fine.values() if part[0] in group]
            if len(set(inner)) > 1:
                return False
        return True

    needed = list(varying)
    for feature in list(varying):
        trial = [f for f in needed if f != feature]
        if told_apart(trial):
            needed = trial
    if not needed:
        return [(members, {})]
    return [
        (part, {f: features[part[0]].get(f, _MISSING) for f in needed}) for part in partition(needed).values()
    ]


def _when(conditions: dict[Feature, Any]) -> MockWhen | None:
    if not conditions:
        return None
    query: dict[str, Any] = {}
    body: Any = None
    for feature, value in conditions.items():
        literal = _ABSENT if value == _MISSING else value
        if feature[0] == "query":
            query[str(feature[1])] = {"exists": False} if literal is _ABSENT else literal
        elif len(feature) == 1:
            body = literal
        else:
            if not isinstance(body, dict):
                body = {}
            node = body
            for part in feature[1:-1]:
                node = node.setdefault(str(part), {})
            node[str(feature[-1])] = literal
    return MockWhen(query=query, body=_literal(body))


def _literal(value: Any) -> Any:
    """A recorded value as a condition that means "equal to it": a mapping that would read as
    operators (`{type: string}`) compares each of its values with `eq` instead."""
    if value is _ABSENT:
        return {"exists": False}
    if isinstance(value, dict):
        inner = {k: _literal(v) for k, v in value.items()}
        return {k: {"eq": v} for k, v in inner.items()} if is_operator_set(inner) else inner
    if isinstance(value, list):
        return [_literal(v) for v in value]
    return value


def _response(answer: Answer) -> MockResponse:
    headers = dict(answer.headers)
    body = answer.body
    if answer.kind == "text" and "content-type" not in headers:
        headers["content-type"] = "text/plain; charset=utf-8"
    return MockResponse(status=answer.status, headers=headers, body=body)


def _route(
    method: str,
    path: str,
    members: list[Seen],
    params: list[dict[str, str]],
    conditions: dict[Feature, Any],
    at: str,
) -> MockRoute:
    answers = [_response(a) for a in route_answers(members, params)]
    while len(answers) > 1 and answers[-1] == answers[-2]:
        answers.pop()  # the last answer repeats by itself
    first = members[0]
    example_body = first.body if first.body is not None and len(_key(first.body)) <= 2048 else None
    origin = RecordedOrigin(at=at, example=first.target, calls=len(members))
    if example_body is not None:
        origin = msgspec.structs.replace(origin, example_body=example_body)
    single = len(answers) == 1 or len({_key(msgspec.to_builtins(a)) for a in answers}) == 1
    return MockRoute(
        method=method,
        path=path,
        when=_when(conditions),
        response=answers[0] if single else None,
        sequence=None if single else answers,
        recorded=origin,
    )


def route_order(route: MockRoute) -> tuple[Any, ...]:
    """The sort key that keeps a route from hiding another (see the module docstring)."""
    # Literal segments before parameters at the first place they differ, so `/charges/search`
    # comes before `/charges/:id`; a route with conditions before the same path without them.
    segments = split_path(route.path)
    shape = tuple((1, "") if s.startswith(":") or s == "*" else (0, s) for s in segments)
    return (shape, route.method, route.when is None, _key(msgspec.to_builtins(route.when)))
