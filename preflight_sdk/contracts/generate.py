"""Starter cases from a contract: one request per operation, from the document's own examples.

A value comes from the document when it has one (a media type's `example` or `examples`, a
parameter's, a schema's `example`, `examples`, `default`, `const` or first `enum` value); else it
is made from the schema: the required properties of an object, one item of an array that needs
one, the least number a bound allows, a text of the right format. The expected status is the
operation's first documented success; an operation with path parameters (whose made-up values may
name nothing) expects any status it documents. The contract checks the answer either way.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .document import Contract
from .operations import Operation

__all__ = ["StarterCase", "starter_cases"]

_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00Z",
    "email": "user@example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "byte": "ZXhhbXBsZQ==",
}
_DEPTH = 8


class StarterCase(msgspec.Struct, frozen=True, kw_only=True):
    """One generated case: its name, operation, request and expected statuses."""

    name: str
    operation: str
    method: str
    path: str
    query: dict[str, Any]
    headers: dict[str, str]
    body: Any
    has_body: bool
    statuses: list[int]


def starter_cases(contract: Contract) -> list[StarterCase]:
    """One case per operation of `contract`, in document order."""
    return [_case(contract, operation) for operation in contract.operations.values()]


def _case(contract: Contract, operation: Operation) -> StarterCase:
    path = operation.template
    query: dict[str, Any] = {}
    headers: dict[str, str] = {}
    templated = False
    for parameter in operation.parameters:
        if parameter.location == "path":
            templated = True
            value = (
                parameter.example
                if parameter.example is not None
                else _value(contract, parameter.schema, parameter.uri)
            )
            path = path.replace(
                "{" + parameter.name + "}", str(value if value not in (None, "") else "example")
            )
        elif parameter.required and parameter.location == "query":
            query[parameter.name] = (
                parameter.example
                if parameter.example is not None
                else _value(contract, parameter.schema, parameter.uri)
            )
        elif parameter.required and parameter.location == "header":
            value = (
                parameter.example
                if parameter.example is not None
                else _value(contract, parameter.schema, parameter.uri)
            )
            headers[parameter.name] = str(value)
    body: Any = None
    has_body = False
    if operation.body is not None and operation.body.content:
        media = operation.body.content.get("application/json") or next(iter(operation.body.content.values()))
        body = media.example if media.has_example else _value(contract, media.schema, media.uri)
        has_body = True
        if media.name != "application/json":
            headers.setdefault("Content-Type", media.name)
    explicit = sorted(int(s) for s in operation.responses if s.isdigit())
    success = [s for s in explicit if 200 <= s < 300]
    statuses = explicit if templated or not success else success[:1]
    summary = operation.operation_id or operation.key
    return StarterCase(
        name=f"{summary} answers as documented",
        operation=operation.key,
        method=operation.method.upper(),
        path=path,
        query=query,
        headers=headers,
        body=body,
        has_body=has_body,
        statuses=statuses,
    )


def _value(contract: Contract, schema: Any, uri: str, depth: int = 0) -> Any:
    """A value `schema` allows (None when it allows anything or cannot be read)."""
    uri, schema = contract.sources.follow(uri, schema)
    if not isinstance(schema, dict) or depth > _DEPTH:
        return None
    for key in ("example", "default", "const"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("allOf"), list):
        # Every part must hold: the objects they ask for, merged (the usual use of allOf).
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = _value(contract, part, uri, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        if schema.get("properties"):
            merged.update(_object(contract, schema, uri, depth))
        return merged
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _value(contract, schema[key][0], uri, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        return _object(contract, schema, uri, depth)
    if kind == "array":
        count = max(int(schema.get("minItems", 0) or 0), 0)
        item = _value(contract, schema.get("items"), uri, depth + 1)
        return [item for _ in range(count)] if count else []
    if kind == "string":
        text = _FORMATS.get(str(schema.get("format")), "example")
        least = int(schema.get("minLength", 0) or 0)
        return text + "x" * max(0, least - len(text))
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    return None


def _object(contract: Contract, schema: dict[str, Any], uri: str, depth: int) -> dict[str, Any]:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    found: dict[str, Any] = {}
    for name in required:
        sub = properties.get(name) if isinstance(properties, dict) else None
        _, resolved = contract.sources.follow(uri, sub)
        if isinstance(resolved, dict) and resolved.get("readOnly"):
            continue
        found[name] = _value(contract, sub, uri, depth + 1)
    return found


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    low = schema.get("minimum")
    exclusive = schema.get("exclusiveMinimum")
    value: float = 1
    if isinstance(low, int | float):
        value = max(value, low) if not (exclusive is True and value == low) else low + 1
    if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
        value = max(value, exclusive + 1)
    high = schema.get("maximum")
    if isinstance(high, int | float) and value > high:
        value = high
    return int(value) if integer else value
