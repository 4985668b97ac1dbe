"""JSON Schema helpers: a rewrite of every object, innermost first."""

from __future__ import annotations

from typing import Any

from preflight_sdk.core.json_schema import map_objects


def test_map_objects_rewrites_every_object_after_its_children() -> None:
    seen: list[list[str]] = []

    def mark(node: dict[str, Any]) -> dict[str, Any]:
        seen.append(sorted(node))
        return {
            **node,
            "depth": 1 + max((v["depth"] for v in node.values() if isinstance(v, dict)), default=0),
        }

    schema = {"anyOf": [{"type": "string"}, {"items": {"type": "null"}}], "properties": {"a": {}}}
    out = map_objects(schema, mark)

    assert out["depth"] == 3 and out["properties"]["depth"] == 2 and out["properties"]["a"]["depth"] == 1
    assert out["anyOf"][1]["items"] == {"type": "null", "depth": 1}
    assert seen[-1] == ["anyOf", "properties"]  # the root comes last
    assert map_objects(["x", 3, None], mark) == ["x", 3, None]
