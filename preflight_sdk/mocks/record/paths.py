"""Route paths of recorded calls: literal, or with a parameter where an id varies.

`/v1/charges/ch_1` and `/v1/charges/ch_2`, answered alike (same status, same JSON shape), become
one route `/v1/charges/:id`. A segment whose value came from the upstream itself (an id an earlier
answer handed out, which a replay hands out anew) or that looks generated (a UUID, a random token)
is a parameter even when seen once, so a replay that returns a new id still finds the route. Other
segments stay literal: `/v1/charges/search` is never a parameter.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from preflight_sdk.core.redaction import REDACTED

from .noise import looks_random, noise_template
from .reading import Seen

__all__ = ["json_shape", "route_paths", "upstream_values"]


def json_shape(value: Any, depth: int = 0) -> Any:
    """The shape of a JSON value: object keys with their shapes, the first item of a list, a type."""
    if depth > 16:
        return "deep"
    if isinstance(value, dict):
        return tuple(sorted((str(k), json_shape(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", json_shape(value[0], depth + 1) if value else None)
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def upstream_values(seen: list[Seen]) -> dict[str, tuple[int, str]]:
    """Strings the upstream handed out (string leaves of its JSON answers, `Location` segments),
    each with the first exchange whose answer held it, and that exchange's request line."""
    found: dict[str, tuple[int, str]] = {}
    for index, item in enumerate(seen):
        values: set[str] = set()
        if item.kind == "json":
            _strings(item.answer, values, 0)
        location = item.headers.get("location")
        if location:
            values.update(part for part in location.split("?")[0].split("/") if len(part) >= 3)
        line = f"{item.method} /{'/'.join(item.segments)}"
        for value in values:
            found.setdefault(value, (index, line))
    return found


def _strings(value: Any, out: set[str], depth: int) -> None:
    if depth > 32:
        return
    if isinstance(value, dict):
        for item in value.values():
            _strings(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, depth + 1)
    elif isinstance(value, str) and 3 <= len(value) <= 200:
        out.add(value)


def _earlier(segment: str, handed_out: dict[str, tuple[int, str]], index: int, line: str) -> bool:
    """Whether an answer to another request, before exchange `index`, handed `segment` out (a
    resource answering with its own id, `GET /orders/o_1` → `{id: o_1}`, hands nothing out)."""
    first, by = handed_out.get(segment, (index, line))
    return first < index and by != line


def _line(item: Seen) -> str:
    return f"{item.method} /{'/'.join(item.segments)}"


def _id_like(segment: str, handed_out: dict[str, tuple[int, str]], index: int, line: str) -> bool:
    return (
        any(c.isdigit() for c in segment)
        or _earlier(segment, handed_out, index, line)
        or looks_random(segment)
    )


def _generated(segment: str, handed_out: dict[str, tuple[int, str]], index: int, item: Seen) -> bool:
    return (
        _earlier(segment, handed_out, index, _line(item))
        or looks_random(segment)
        or noise_template(segment, item.epoch) == "{{uuid}}"
    )


def route_paths(seen: list[Seen]) -> list[str]:
    """The route path each exchange belongs to (see the module docstring)."""
    handed_out = upstream_values(seen)
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for index, item in enumerate(seen):
        skeleton = tuple("?" if _id_like(s, handed_out, index, _line(item)) else s for s in item.segments)
        groups[(item.method, skeleton)].append(index)
    paths = [""] * len(seen)
    for (_, skeleton), members in groups.items():
        variable = [
            position
            for position, part in enumerate(skeleton)
            if part == "?" and _is_parameter(seen, members, position, handed_out)
        ]
        names = _names(skeleton, variable)
        for index in members:
            parts = [
                f":{names[p]}" if p in names else ("*" if REDACTED in s else s)
                for p, s in enumerate(seen[index].segments)
            ]
            paths[index] = "/" + "/".join(parts)
    return paths


def _is_parameter(
    seen: list[Seen], members: list[int], position: int, handed_out: dict[str, tuple[int, str]]
) -> bool:
    values = {seen[i].segments[position] for i in members}
    if any(_generated(seen[i].segments[position], handed_out, i, seen[i]) for i in members):
        return True
    if len(values) < 2:
        return False
    shapes = {
        (seen[i].status, json_shape(seen[i].answer) if seen[i].kind == "json" else seen[i].kind)
        for i in members
    }
    return len(shapes) == 1


def _names(skeleton: tuple[str, ...], variable: list[int]) -> dict[int, str]:
    if len(variable) == 1:
        return {variable[0]: "id"}
    names: dict[int, str] = {}
    taken: set[str] = set()
    for position in variable:
        before = skeleton[position - 1] if position > 0 else ""
        base = (
            (before[:-1] if before.endswith("s") else before) if before and before != "?" else f"p{position}"
        )
        name = "".join(c for c in f"{base}Id" if c.isalnum() or c == "_") or f"p{position}"
        while name in taken:
            name += "_"
        taken.add(name)
        names[position] = name
    return names
