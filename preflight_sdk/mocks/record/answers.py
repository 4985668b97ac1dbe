"""The answers of one recorded route, written so that replaying them does not fail on noise.

Given every recorded call a route stands for (in order), each answer is rewritten:

1. a value the request sent back (a path parameter, a query parameter, a body field) becomes
   `{{request.params.id}}`, `{{request.query.page}}`, `{{request.body.order.id}}` when every call
   echoes it the same way;
2. a value that looks generated (see `noise`) becomes `{{uuid}}`, `{{now}}`, `{{epoch}}` or
   `{{timestamp}}`;
3. across the calls: a number that counts 1, 2, 3… becomes `{{counter}}` (so does the counting
   part of `ch_1`, `ch_2`…), and a random token that differs every call becomes `{{uuid}}`.

What still differs between the calls after that is real: `derive` plays those answers in turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from .noise import looks_random, noise_template, replace_noise_in_text
from .reading import Seen

__all__ = ["Answer", "route_answers"]

Path = tuple[str | int, ...]
_KEY = re.compile(r"[A-Za-z0-9_-]+")
_DIGITS = re.compile(r"\d+")


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """One answer of a recorded route, templates in place."""

    status: int
    headers: dict[str, str]
    body: Any
    kind: str


def _leaves(value: Any, path: Path = (), depth: int = 0) -> list[tuple[Path, Any]]:
    if depth > 32:
        return []
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, str(k)), depth + 1)]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i), depth + 1)]
    return [(path, value)]


def _rewrite(value: Any, change: Callable[[Path, Any], Any], path: Path = (), depth: int = 0) -> Any:
    if depth > 32:
        return value
    if isinstance(value, dict):
        return {k: _rewrite(v, change, (*path, str(k)), depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, change, (*path, i), depth + 1) for i, v in enumerate(value)]
    return change(path, value)


def _request_values(item: Seen, params: dict[str, str]) -> list[tuple[str, Any]]:
    """What a template may name of this call's request, in order of preference."""
    found: list[tuple[str, Any]] = [(f"request.params.{k}", v) for k, v in params.items()]
    found += [
        (f"request.query.{k}", v) for k, v in item.query.items() if _KEY.fullmatch(k) and isinstance(v, str)
    ]
    if isinstance(item.body, dict):
        for path, leaf in _leaves(item.body):
            if path and all(isinstance(p, int) or _KEY.fullmatch(p) for p in path):
                found.append(("request.body." + ".".join(str(p) for p in path), leaf))
    return found


def _echoable(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str):
        return len(value) >= 3 and "{{" not in value
    if isinstance(value, int):
        return abs(value) >= 10
    return isinstance(value, float)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _echoes(members: list[Seen], params: list[dict[str, str]]) -> dict[Path, str]:
    """Answer leaves every call fills from its own request, and the template for each."""
    if any(m.kind != "json" for m in members):
        return {}
    requests = [dict(_request_values(m, p)) for m, p in zip(members, params, strict=True)]
    answers = [dict(_leaves(m.answer)) for m in members]
    found: dict[Path, str] = {}
    for path, value in answers[0].items():
        if not _echoable(value):
            continue
        for expression, sent in requests[0].items():
            if not _same(sent, value):
                continue
            if all(
                path in answer and expression in request and _same(answer[path], request[expression])
                for answer, request in zip(answers[1:], requests[1:], strict=True)
            ):
                found[path] = "{{" + expression + "}}"
                break
    return found


def _noise(value: Any, epoch: float) -> Any:
    if isinstance(value, str):
        return noise_template(value, epoch) or replace_noise_in_text(value, epoch)
    return noise_template(value, epoch) or value


def _counting(values: list[Any]) -> str | None:
    """The template for values that differ between calls, when they count or look random."""
    if len(values) < 2 or any(isinstance(v, str) and "{{" in v for v in values):
        return None
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "{{counter}}" if values == list(range(1, len(values) + 1)) else None
    if not all(isinstance(v, str) for v in values):
        return None
    skeletons = {_DIGITS.sub("#", v) for v in values}
    runs = [_DIGITS.findall(v) for v in values]
    if len(skeletons) == 1 and all(len(r) == len(runs[0]) for r in runs):
        changing = [i for i in range(len(runs[0])) if len({r[i] for r in runs}) > 1]
        if len(changing) == 1 and [int(r[changing[0]]) for r in runs] == list(range(1, len(values) + 1)):
            pieces = _DIGITS.split(values[0])
            digits = runs[0]
            out = pieces[0]
            for i, run in enumerate(digits):
                out += ("{{counter}}" if i == changing[0] else run) + pieces[i + 1]
            return out
    if len(set(values)) == len(values) and all(looks_random(v) for v in values):
        return "{{uuid}}"
    return None


def _across(bodies: list[Any]) -> dict[Path, str]:
    """Leaves that differ between the calls but count or look random (same structure only)."""
    leaves = [dict(_leaves(b)) for b in bodies]
    if len(leaves) < 2 or any(set(x) != set(leaves[0]) for x in leaves[1:]):
        return {}
    found: dict[Path, str] = {}
    for path in leaves[0]:
        values = [x[path] for x in leaves]
        if any(not _same(v, values[0]) for v in values[1:]):
            template = _counting(values)
            if template is not None:
                found[path] = template
    return found


def _headers(members: list[Seen], params: list[dict[str, str]]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for item, found in zip(members, params, strict=True):
        headers: dict[str, str] = {}
        for name, value in item.headers.items():
            text = _noise(value, item.epoch)
            for key, sent in found.items():
                if len(sent) >= 3 and sent in text:
                    text = text.replace(sent, "{{request.params." + key + "}}")
            headers[name] = text
        out.append(headers)
    names = set(out[0]) if out else set()
    for name in names:
        values = [h.get(name) for h in out]
        if all(isinstance(v, str) for v in values) and len(set(values)) > 1:
            template = _counting(values)
            if template is not None:
                for h in out:
                    h[name] = template
    return out


def route_answers(members: list[Seen], params: list[dict[str, str]]) -> list[Answer]:
    """Every call's answer with its echoes, noise and counters written as templates."""
    echoes = _echoes(members, params)
    bodies: list[Any] = []
    for item in members:
        if item.kind == "json":

            def change(path: Path, value: Any, epoch: float = item.epoch) -> Any:
                return echoes[path] if path in echoes else _noise(value, epoch)

            bodies.append(_rewrite(item.answer, change))
        elif item.kind == "text":
            bodies.append(replace_noise_in_text(item.answer, item.epoch))
        else:
            bodies.append(item.answer)
    if all(m.kind == "json" for m in members):
        across = _across(bodies)
        if across:
            bodies = [_rewrite(b, lambda p, v: across.get(p, v)) for b in bodies]
    headers = _headers(members, params)
    return [
        Answer(status=m.status, headers=h, body=b, kind=m.kind)
        for m, h, b in zip(members, headers, bodies, strict=True)
    ]
