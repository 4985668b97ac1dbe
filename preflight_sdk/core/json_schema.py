"""Turn msgspec's JSON Schema output into schemas that editors and MCP hosts accept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from . import decoding

__all__ = ["inline_root", "map_objects", "schema_of"]


def inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace a root `{"$ref": "#/$defs/X"}` with the definition itself.

    msgspec emits a root `$ref` for Structs; MCP requires `"type": "object"` at the root of a tool's
    `inputSchema`, and some editors stop at a root reference. The other `$defs` stay, so nested
    references still resolve.
    """
    ref = schema.get("$ref")
    defs = dict(schema.get("$defs", {}))
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    name = ref.removeprefix("#/$defs/")
    root = dict(defs.get(name, {}))
    # Keep the root definition in $defs only if something else still points at it.
    text = msgspec.json.encode({k: v for k, v in defs.items() if k != name}).decode()
    if f'"#/$defs/{name}"' not in text:
        defs.pop(name, None)
    if defs:
        root["$defs"] = defs
    return root


def schema_of(typ: Any) -> dict[str, Any]:
    """Return the object-rooted JSON Schema (2020-12) of a msgspec type."""
    return inline_root(decoding.schema(typ))


def map_objects(node: Any, rewrite: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """Return `node` (a JSON value) with each object in it replaced by `rewrite(object)`, innermost first.

    `rewrite` sees an object whose values are already rewritten, and every object is visited,
    property names' values included.
    """
    if isinstance(node, list):
        return [map_objects(item, rewrite) for item in node]
    if not isinstance(node, dict):
        return node
    return rewrite({key: map_objects(value, rewrite) for key, value in node.items()})
