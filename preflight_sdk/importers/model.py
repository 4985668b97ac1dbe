"""What every importer produces: a draft of a test file, in the terms of the YAML test grammar.

A parser (Postman, `.http`, Hurl) reads its format into a `Draft`: cases with their request (URL
as written, before hosts become services), expectations and saved values, the file's variables,
and every part it could not convert with its place. `writer.py` turns a draft into the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Literal

import msgspec

from preflight_sdk.core.results.imports import NotConverted

__all__ = [
    "BUILTIN_NAMES",
    "JSON_PATH",
    "UNMERGED",
    "Draft",
    "DraftCase",
    "DraftRequest",
    "as_expression",
    "dotted",
    "json_path",
    "merged",
    "nest",
    "not_converted",
    "outside_quotes",
    "template_names",
    "tidy",
]

BodyKind = Literal["none", "json", "text", "form"]


class DraftRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A request as the source wrote it: `url` may start with a host or a `{{variable}}`."""

    method: str = "GET"
    url: str
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body_kind: BodyKind = "none"
    body: Any = None
    follow_redirects: bool | None = None
    timeout: str | None = None


class DraftCase(msgspec.Struct, frozen=True, kw_only=True):
    """One case: a request, its expectations (an `expect` block) and the values it saves."""

    name: str
    request: DraftRequest
    description: str | None = None
    expect: dict[str, Any] = msgspec.field(default_factory=dict)
    save: dict[str, str] = msgspec.field(default_factory=dict)
    delay: str | None = None
    retry: dict[str, Any] | None = None
    skip: str | None = None


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """A whole test file before hosts are placed, and what did not convert."""

    name: str
    description: str | None = None
    variables: dict[str, Any] = msgspec.field(default_factory=dict)
    secret_variables: list[str] = msgspec.field(default_factory=list)
    cases: list[DraftCase] = msgspec.field(default_factory=list)
    not_converted: list[NotConverted] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)


def outside_quotes(text: str, quotes: str = "'\"`") -> Iterator[tuple[int, str]]:
    """Each character of `text` outside quoted strings, with its index (a backslash escapes a quote)."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote and text[index - 1] != "\\":
                quote = ""
        elif char in quotes:
            quote = char
        else:
            yield index, char


def not_converted(place: str, source: str, reason: str) -> NotConverted:
    """A part left out, its source text on one line and cut to 200 characters."""
    text = " ".join(source.split())
    return NotConverted(place=place, source=text if len(text) <= 200 else text[:199] + "…", reason=reason)


# The names the test grammar provides itself: never declared as variables of an imported file.
BUILTIN_NAMES = frozenset({"uuid", "timestamp", "date", "now"})
_BUILTIN_PREFIXES = ("env.", "services.", "mocks.", "config.", "runtime.")
_TEMPLATE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


def template_names(value: Any) -> list[str]:
    """The variable names `{{…}}` templates in `value` use (strings, lists and mappings, deeply)."""
    found: list[str] = []
    if isinstance(value, str):
        found += [m.group(1) for m in _TEMPLATE.finditer(value)]
    elif isinstance(value, dict):
        for key, item in value.items():
            found += template_names(key) + template_names(item)
    elif isinstance(value, list):
        for item in value:
            found += template_names(item)
    return [n for n in found if n not in BUILTIN_NAMES and not n.startswith(_BUILTIN_PREFIXES)]


JSON_PATH = re.compile(r"^\$((?:\.[A-Za-z_][\w-]*|\[\d+\]|\['[^']+'\]|\[\"[^\"]+\"\])*)$")


def json_path(path: str) -> str | None:
    """A simple JSONPath (`$.a.b[0]['c d']`) as a test-grammar path (`a.b[0].c d`), else None.

    Wildcards, filters, slices and recursive descent have no equivalent.
    """
    match = JSON_PATH.match(path.strip())
    if match is None:
        return None
    return dotted(re.findall(r"\.[A-Za-z_][\w-]*|\[\d+\]|\['[^']+'\]|\[\"[^\"]+\"\]", match.group(1)))


def dotted(tokens: list[str]) -> str | None:
    """Path tokens (`.a`, `[0]`, `['c d']`, `["c d"]`) as a test-grammar path (`a[0].c d`).

    None when the path starts with an index (`[0]`): an index at the root has no path form.
    """
    parts: list[str] = []
    for token in tokens:
        if token.startswith("."):
            parts.append(token[1:])
        elif token[1].isdigit():
            if not parts:
                return None
            parts[-1] += token
        else:
            parts.append(token[2:-2])
    return ".".join(parts)


def nest(path: str, value: Any) -> dict[str, Any] | None:
    """`a.b`, value → `{a: {b: value}}` (a body expectation); None when a part is indexed (`a[0]`)."""
    if not path or "[" in path:
        return None
    nested: Any = value
    for key in reversed(path.split(".")):
        nested = {key: nested}
    return dict(nested)


def merged(expect: dict[str, Any], addition: dict[str, Any]) -> dict[str, Any]:
    """`expect` with `addition` merged in, so that every check of both still holds.

    Mappings merge deeply and `expr` lists append. Two checks on one place combine when they
    can (`5` and `{gt: 1}` become `{eq: 5, gt: 1}`; two `contains` take a list); a body check
    that cannot join the one already there goes to `all`, so none is lost.
    """
    out = dict(expect)
    for key, value in addition.items():
        if key in ("expr", "all"):
            out[key] = [*_as_list(out.get(key)), *_as_list(value)]
        elif key not in out:
            out[key] = value
        else:
            combined, left = _combine(out[key], value)
            out[key] = combined
            if left is not None and key == "body":
                out["all"] = [*_as_list(out.get("all")), left]
            elif left is not None:
                out = _as_expressions(out, key, left)
    return out


UNMERGED = "_unmerged"
"""The key of checks that could join neither the check in place nor `expr` (the writer lists them)."""

_COMPARISONS = {"eq": "==", "gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "ne": "!="}


def as_expression(path: str, check: Any) -> str | None:
    """A check on one path as an `expr` line (equality and comparisons only), else None."""
    if check is None or isinstance(check, (bool, int, float, str)):
        return f"{path} == {json.dumps(check)}"
    if isinstance(check, dict) and len(check) == 1:
        ((operator, operand),) = check.items()
        if operator == "exists" and operand is True:
            return f"{path} != null"
        if operator in _COMPARISONS and isinstance(operand, (int, float, str)):
            return f"{path} {_COMPARISONS[operator]} {json.dumps(operand)}"
    return None


def _as_expressions(expect: dict[str, Any], key: str, left: Any) -> dict[str, Any]:
    """Checks on `status`, `headers`, `responseTime` that did not join: as `expr` where they can be."""
    items = left.items() if isinstance(left, dict) and key == "headers" else [(None, left)]
    out = dict(expect)
    for name, check in items:
        path = f"headers.{name}" if name is not None else key
        line = as_expression(path, check)
        if line is not None:
            out["expr"] = [*_as_list(out.get("expr")), line]
        else:
            out[UNMERGED] = [*_as_list(out.get(UNMERGED)), f"{path}: {json.dumps(check)}"]
    return out


def _combine(old: Any, new: Any) -> tuple[Any, Any]:
    """`old` and `new` as one check, and what of `new` could not join (None when all did)."""
    if isinstance(old, dict) and isinstance(new, dict) and not _is_operators(old) and not _is_operators(new):
        out = dict(old)
        left: dict[str, Any] = {}
        for key, value in new.items():
            if key not in out:
                out[key] = value
                continue
            combined, rest = _combine(out[key], value)
            out[key] = combined
            if rest is not None:
                left[key] = rest
        return out, (left or None)
    if old == new:
        return old, None
    if isinstance(old, dict) and isinstance(new, dict) and _is_operators(old) != _is_operators(new):
        # the checks on a key and on what is under it: one mapping (`tidy` writes its operators as `$op`)
        operators, fields = (old, new) if _is_operators(old) else (new, old)
        return {**fields, **{k: v for k, v in operators.items() if k not in fields}}, None
    first, second = _as_operators(old), _as_operators(new)
    if first is None or second is None:
        return old, new
    union = dict(first)
    for operator, operand in second.items():
        if operator not in union:
            union[operator] = operand
        elif operator in ("contains", "notContains"):
            union[operator] = list(dict.fromkeys([*_as_list(union[operator]), *_as_list(operand)]))
        elif union[operator] != operand:
            return old, new
    return union, None


def _is_operators(value: dict[str, Any]) -> bool:
    return bool(value) and all(key in OPERATORS for key in value)


def _as_operators(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value if _is_operators(value) else None
    return {"eq": value}


OPERATORS = frozenset(
    {
        "type", "exists", "in", "notIn", "eq", "ne", "gt", "gte", "lt", "lte", "contains", "notContains",
        "matches", "regex", "startsWith", "endsWith", "length", "every", "some", "not",
    }
)  # fmt: skip


def tidy(check: Any) -> Any:
    """A body expectation the grammar reads one way: a mapping of fields and operators at once.

    `{exists: true, email: {…}}` (the key and what is under it) keeps the fields (they imply the
    key exists); other operators beside fields are written `$type`, `$length`, so none is read as
    a field.
    """
    if isinstance(check, list):
        return [tidy(item) for item in check]
    if not isinstance(check, dict):
        return check
    fields = {k: tidy(v) for k, v in check.items() if k not in OPERATORS}
    if not fields:
        return {k: tidy(v) if k in ("not", "every", "some") else v for k, v in check.items()}
    operators = {f"${k}": v for k, v in check.items() if k in OPERATORS and not (k == "exists" and v is True)}
    return {**operators, **fields}


def _as_list(value: Any) -> list[Any]:
    return [] if value is None else value if isinstance(value, list) else [value]
