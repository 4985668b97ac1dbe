"""Output schemas: what a client needs to validate `structuredContent`, and nothing more.

Every client downloads and parses `tools/list` on connect; no model reads output schemas. So a
tool's output schema is an outline: the envelope, and the top-level fields of its `data` with their
types (a nested object is `{"type": "object"}`, a list `{"type": "array"}`, a fixed set of values
its `enum`), without titles, descriptions or defaults. Every reply validates against it. The whole
result types, every field described, are in `docs/schema/results.schema.json` (`results_schema`,
written by `scripts/gen-schema`); each outline's `description` names its type there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.errors import ErrorInfo
from preflight_sdk.core.results.envelope import Envelope
from preflight_sdk.faces.reflection.registry import Registry

__all__ = [
    "RESULTS_FILE",
    "RESULTS_ID",
    "envelope_schema",
    "envelope_schemas",
    "outline",
    "output_schema",
    "output_schemas",
    "result_name",
    "result_types",
    "results_schema",
    "results_text",
]

RESULTS_FILE = "results.schema.json"
RESULTS_ID = f"https://preflight.dev/schema/{RESULTS_FILE}"
_DEFS = "#/$defs/"
# Subscripted at run time with each operation's result type.
_ENVELOPE: Any = Envelope


def envelope_schema(result: Any) -> dict[str, Any]:
    """Return the output schema of a tool whose reply is the envelope with `result` as `data`.

    The envelope's fields and the top-level fields of `data` are typed. `error` is an object whose
    `code`, `message`, `retryable` and `hint` are always there (what a client reads when `success`
    is false); its `details`, like every deeper object, is left to the results schema.
    """
    return envelope_schemas([result])[0]


def envelope_schemas(results: Sequence[Any]) -> list[dict[str, Any]]:
    """`envelope_schema` of each of `results`, the types described once for all of them.

    The result types share most of their parts (a run's cases, failures, setup): one pass of
    msgspec over all of them costs a quarter of one pass per type, which is most of what building
    the tool list costs a server's first `tools/list`.
    """
    outlines = output_schemas([t for result in results for t in (_ENVELOPE[result], result | None)], levels=1)
    required = [f.encode_name for f in msgspec.structs.fields(ErrorInfo) if f.required]
    schemas = []
    for result, schema, data in zip(results, outlines[::2], outlines[1::2], strict=True):
        schema["properties"]["data"] = data
        schema["properties"]["error"]["required"] = list(required)
        schema["description"] = f"data: {result_name(result)} in {RESULTS_FILE}"
        schemas.append(schema)
    return schemas


def output_schema(typ: Any, *, levels: int) -> dict[str, Any]:
    """Return the outline of `typ`: `levels` levels of object properties, then types only."""
    return output_schemas([typ], levels=levels)[0]


def output_schemas(types: Sequence[Any], *, levels: int) -> list[dict[str, Any]]:
    """`output_schema` of each of `types`, from one pass of msgspec over all of them (an outline
    keeps no description, so msgspec's own are not normalised here)."""
    found, defs = msgspec.json.schema_components(list(types), ref_template=_DEFS + "{name}")
    return [outline(schema, defs, levels) for schema in found]


def outline(node: Any, defs: dict[str, Any], levels: int) -> dict[str, Any]:
    """The schema `node` with `levels` levels of object properties kept (see `output_schema`)."""
    node = _resolve(node, defs)
    if levels <= 0:
        return _kind(node, defs)
    for key in ("anyOf", "oneOf"):
        if key in node:
            # anyOf even for a oneOf: two branches cut to their outlines may both match a reply.
            return _merge([outline(branch, defs, levels) for branch in node[key]])
    kind = node.get("type")
    if kind == "object":
        out: dict[str, Any] = {"type": "object"}
        properties = node.get("properties")
        if properties:
            required = set(node.get("required", ()))
            out["properties"] = {
                name: _optional(outline(prop, defs, levels - 1))
                if name not in required and prop.get("default", ...) is None
                else outline(prop, defs, levels - 1)
                for name, prop in properties.items()
            }
        if node.get("required"):
            out["required"] = list(node["required"])
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            out["additionalProperties"] = outline(extra, defs, levels - 1)
        elif extra is False:
            out["additionalProperties"] = False
        return out
    if kind == "array" and isinstance(node.get("items"), dict):
        return {"type": "array", "items": outline(node["items"], defs, levels - 1)}
    return _kind(node, defs)


def _resolve(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        node = defs[node["$ref"].removeprefix(_DEFS)]
    return node if isinstance(node, dict) else {}


def _kind(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """What a value of `node` is, in one keyword: its `enum`, its `type`, or `{}` (anything)."""
    if "enum" in node:
        return {"enum": list(node["enum"])}
    if "const" in node:
        return {"enum": [node["const"]]}
    for key in ("anyOf", "oneOf"):
        if key in node:
            return _merge([_kind(_resolve(branch, defs), defs) for branch in node[key]])
    kind = node.get("type")
    if isinstance(kind, (str, list)):
        return {"type": kind}
    return {}


def _merge(branches: list[dict[str, Any]]) -> dict[str, Any]:
    """One schema accepting what any branch accepts, written as shortly as it can be."""
    if any(branch == {} for branch in branches):
        return {}
    unique = [branch for i, branch in enumerate(branches) if branch not in branches[:i]]
    if len(unique) == 1:
        return unique[0]
    # Each branch keeps one plain `type` (never `type: [object, null]`): clients that map tool
    # schemas onto a one-type dialect reject type arrays (the Inspector's `--strict` warns).
    if all(set(branch) == {"enum"} or branch == {"type": "null"} for branch in unique):
        values: list[Any] = []
        for branch in unique:
            for value in branch.get("enum", [None]):
                if value not in values:
                    values.append(value)
        return {"enum": values}
    return {"anyOf": unique}


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """A field left out of the reply when it has no value (`omit_defaults`): its plain type, as
    optional arguments are listed; `null` is never written for it, so the schema need not say it."""
    options = schema.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [option for option in options if option != {"type": "null"}]
        return rest[0] if len(rest) == 1 else {**schema, "anyOf": rest}
    values = schema.get("enum")
    if isinstance(values, list) and None in values:
        return {**schema, "enum": [value for value in values if value is not None]}
    return schema


def result_name(typ: Any) -> str:
    """The name of a result type in the results schema (`RunResult`; `StoredTest | null`)."""
    if get_origin(typ) in (Union, UnionType):
        return " | ".join(result_name(arg) for arg in get_args(typ))
    if typ is None or typ is NoneType:
        return "null"
    return getattr(typ, "__name__", str(typ))


def result_types(registry: Registry) -> list[Any]:
    """Every type a tool of `registry` replies with: the operations' results, the aliases' replies."""
    found: list[Any] = []
    for op in registry:
        found.append(op.return_type)
        for alias in op.aliases:
            found += (
                [alias.output_type] if alias.error_type is None else [alias.output_type, alias.error_type]
            )
    return found


def results_schema(types: Iterable[Any]) -> dict[str, Any]:
    """Return the JSON Schema (2020-12) holding every result type in `$defs`, fully described."""
    unique = list(dict.fromkeys(arg for typ in types for arg in _members(typ)))
    _, components = decoding.schema_components(unique, ref_template=_DEFS + "{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": RESULTS_ID,
        "description": (
            "The result types of preflight's operations: the `data` of each MCP tool's envelope "
            "and of `preflight --json`. A tool's outputSchema names its type here."
        ),
        "$defs": components,
    }


def results_text(types: Iterable[Any]) -> str:
    """Return the results schema as the committed file holds it (indented, sorted keys)."""
    return json.dumps(results_schema(types), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _members(typ: Any) -> list[Any]:
    if get_origin(typ) in (Union, UnionType):
        return [arg for arg in get_args(typ) if arg is not NoneType]
    return [typ]
