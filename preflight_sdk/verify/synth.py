"""Build tool arguments from an `inputSchema`: the smallest valid ones, and a wrongly typed variant.

Only the required properties are filled, from `const`, `enum`, `default` or `examples` when the
schema gives them, otherwise from the type and its bounds. Whatever comes out is validated
against the schema, so a pattern or a constraint this does not understand yields "cannot
synthesise" rather than a call with arguments the server may rightly reject.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from .checks import resolve_local

__all__ = ["valid_arguments", "wrong_typed_arguments"]


class _Unbuildable(Exception):
    """A value cannot be synthesised for a subschema."""


_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "email": "someone@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
}
_WRONG = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "not a boolean",
    "array": "not an array",
    "object": "not an object",
}
_MAX_DEPTH = 12


def valid_arguments(schema: Any) -> dict[str, Any] | None:
    """Return arguments with every required property filled that `schema` accepts, or None."""
    if not isinstance(schema, dict):
        return None
    try:
        value = _build(schema, schema, 0)
    except _Unbuildable:
        return None
    if not isinstance(value, dict) or not _accepts(schema, value):
        return None
    return value


def wrong_typed_arguments(schema: Any) -> tuple[str, dict[str, Any]] | None:
    """Return (property, arguments) where one typed property has a value of the wrong type, or None.

    The other required properties keep valid values, and the schema is checked to reject the
    result, so a rejection by the server can only be about that one argument.
    """
    base = valid_arguments(schema)
    if base is None:
        return None
    assert isinstance(schema, dict)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    for name in [*required, *(p for p in properties if p not in required)]:
        prop = properties.get(name)
        kind = prop.get("type") if isinstance(prop, dict) else None
        if isinstance(kind, list):  # `type: [string, null]`: the first non-null type
            kind = next((k for k in kind if k != "null"), None)
        if not isinstance(kind, str) or kind not in _WRONG:
            continue
        candidate = {**base, name: _WRONG[kind]}
        if not _accepts(schema, candidate):
            return name, candidate
    return None


def _accepts(schema: dict[str, Any], value: Any) -> bool:
    try:
        validator = validator_for(schema, default=Draft202012Validator)
        return bool(validator(schema).is_valid(value))
    except (SchemaError, Unresolvable, ValueError, TypeError, KeyError):
        return False


def _build(schema: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _Unbuildable
    if schema is True:
        return "x"
    if not isinstance(schema, dict):
        raise _Unbuildable
    if isinstance(schema.get("$ref"), str):
        target = resolve_local(root, schema["$ref"])
        if target is None:
            raise _Unbuildable
        return _build(target, root, depth + 1)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    for key in ("enum", "examples"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                try:
                    return _build(branch, root, depth + 1)
                except _Unbuildable:
                    continue
            raise _Unbuildable
    if isinstance(schema.get("allOf"), list):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for branch in schema["allOf"]:
            if isinstance(branch, dict):
                merged = {**branch, **merged}
        return _build(merged, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and isinstance(schema.get("properties"), dict):
        kind = "object"
    return _by_type(kind, schema, root, depth)


def _by_type(kind: Any, schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    if kind == "object":
        found = schema.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        out: dict[str, Any] = {}
        for name in schema.get("required", []):
            if name not in properties:
                raise _Unbuildable
            out[name] = _build(properties[name], root, depth + 1)
        return out
    if kind == "string":
        if schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        return "x" * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [_build(schema.get("items", True), root, depth + 1) for _ in range(count)]
    raise _Unbuildable


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    step = 1 if integer else 0.5
    bounds = {k: v for k, v in schema.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    low, high = bounds.get("minimum"), bounds.get("maximum")
    low_open, high_open = bounds.get("exclusiveMinimum"), bounds.get("exclusiveMaximum")
    if low is not None:
        return low
    if low_open is not None:
        return low_open + step
    if high is not None and high < 0:
        return high
    if high_open is not None and high_open <= 0:
        return high_open - step
    return 0
