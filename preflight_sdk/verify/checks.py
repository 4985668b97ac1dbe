"""Static checks of one served tool definition (its wire form, as the server sent it).

Every check is a finding with a stable code; docs/verify.md lists them with their severities.
The JSON Schema checks follow the MCP specification: `inputSchema` is object-rooted, schemas are
valid for their dialect (2020-12 unless `$schema` says otherwise), and `$ref`s resolve inside the
schema itself (clients must not fetch remote references).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

from .result import Finding, Severity

__all__ = ["NAME_PATTERN", "check_tool", "resolve_local"]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_NAME_SOFT_LIMIT = 64
_MIN_DESCRIPTION = 20
_DOCSTRING_LEAK = re.compile(
    r"(?m)^\s*(Args|Arguments|Keyword Args|Parameters|Params)\s*:\s*$|:param\s+\w|^\s*Parameters\s*\n\s*-{3,}"
)
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "example"})
_COMPOSITION = frozenset({"allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas", "patternProperties"})
_ROOT_URI = "urn:preflight-verify:schema"


def check_tool(tool: dict[str, Any]) -> list[Finding]:
    """Return every static finding for one served tool definition."""
    name = tool.get("name")
    label = name if isinstance(name, str) else repr(name)
    out: list[Finding] = []

    def add(severity: Severity, code: str, message: str, path: str | None = None) -> None:
        out.append(Finding(severity=severity, code=code, message=message, tool=label, path=path))

    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        add("error", "TOOL_NAME_INVALID", "tool names are 1-128 characters from A-Z a-z 0-9 _ . -", "name")
    elif len(name) > _NAME_SOFT_LIMIT:
        add("warning", "TOOL_NAME_LONG", f"{len(name)} characters; some hosts reject names over 64", "name")

    _check_input_schema(tool.get("inputSchema"), add)
    if tool.get("outputSchema") is not None:
        _check_output_schema(tool["outputSchema"], add)
    _check_description(tool.get("description"), label, add)
    _check_annotations(tool, add)
    return out


def _check_input_schema(schema: Any, add: Any) -> None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        shown = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
        add(
            "error",
            "INPUT_SCHEMA_NOT_OBJECT",
            f'inputSchema must have "type": "object" at its root (found {shown!r}); '
            "clients reject the whole tools/list page",
            "inputSchema",
        )
        if not isinstance(schema, dict):
            return
    _check_schema_document(schema, "inputSchema", "INPUT_SCHEMA_INVALID", add)
    for where, missing in _required_not_in_properties(schema, "inputSchema"):
        add(
            "error",
            "REQUIRED_NOT_IN_PROPERTIES",
            f"required names {missing} are not in properties, so callers cannot know their type",
            where,
        )
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for prop, sub in properties.items():
            if isinstance(sub, dict) and not _has_description(sub, schema):
                add(
                    "warning",
                    "PROPERTY_DESCRIPTION_MISSING",
                    f"argument {prop!r} has no description; say what it is, its unit and allowed values",
                    f"inputSchema.properties.{prop}",
                )


def _check_output_schema(schema: Any, add: Any) -> None:
    if not isinstance(schema, dict):
        add("error", "OUTPUT_SCHEMA_INVALID", "outputSchema must be a JSON Schema object", "outputSchema")
        return
    _check_schema_document(schema, "outputSchema", "OUTPUT_SCHEMA_INVALID", add)
    if schema.get("type") != "object":
        add(
            "warning",
            "OUTPUT_SCHEMA_NOT_OBJECT",
            'outputSchema root is not "type": "object"; MCP 2025-11-25 clients reject it '
            '(wrap the value as {"result": ...})',
            "outputSchema",
        )


def _check_schema_document(schema: dict[str, Any], where: str, code: str, add: Any) -> None:
    validator = validator_for(schema, default=Draft202012Validator)
    try:
        validator.check_schema(schema)
    except SchemaError as exc:
        at = exc.json_path.removeprefix("$")
        add("error", code, f"not a valid JSON Schema: {exc.message}", f"{where}{at}")
    for path, ref in _refs(schema, where, _ROOT_URI):
        if resolve_local(schema, ref) is None:
            local = ref.startswith("#")
            why = (
                "does not resolve inside the schema"
                if local
                else "points outside the schema (clients must not fetch it)"
            )
            add("error", "SCHEMA_REF_UNRESOLVED", f"$ref {ref!r} {why}", path)


def resolve_local(schema: dict[str, Any], ref: str) -> Any | None:
    """Return what `ref` points to inside `schema` (no network), or None when it does not resolve."""
    try:
        specification = specification_with(str(schema.get("$schema", "")), default=DRAFT202012)
        resource = specification.create_resource(schema)
        registry: Registry[Any] = Registry().with_resource(_ROOT_URI, resource).crawl()
        return registry.resolver(base_uri=_ROOT_URI).lookup(ref).contents
    except (Unresolvable, ValueError, TypeError, KeyError):
        return None


def _refs(node: Any, path: str, base: str) -> Iterator[tuple[str, str]]:
    """Yield (path, absolute ref) for every `$ref` in schema positions (not inside const/enum/default)."""
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str) and path.count(".") > 0:
            base = urljoin(base, node["$id"])
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield f"{path}.$ref", ref if base == _ROOT_URI else urljoin(base, ref)
        for key, value in node.items():
            if key not in _DATA_KEYWORDS:
                yield from _refs(value, f"{path}.{key}", base)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, f"{path}[{index}]", base)


def _required_not_in_properties(schema: Any, path: str) -> Iterator[tuple[str, list[str]]]:
    """Yield (path, missing names) for object schemas whose `required` names are not in `properties`."""
    if not isinstance(schema, dict):
        return
    required = schema.get("required")
    if isinstance(required, list) and not _COMPOSITION.intersection(schema):
        properties = schema.get("properties")
        names = properties if isinstance(properties, dict) else {}
        missing = [r for r in required if isinstance(r, str) and r not in names]
        if missing:
            yield f"{path}.required", missing
    for key in ("properties", "$defs", "definitions"):
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield from _required_not_in_properties(child, f"{path}.{key}.{name}")
    for key in ("items", "additionalProperties"):
        yield from _required_not_in_properties(schema.get(key), f"{path}.{key}")


def _has_description(prop: dict[str, Any], root: dict[str, Any]) -> bool:
    if isinstance(prop.get("description"), str) and prop["description"].strip():
        return True
    ref = prop.get("$ref")
    if isinstance(ref, str):
        target = resolve_local(root, ref)
        return isinstance(target, dict) and bool(str(target.get("description", "")).strip())
    return False


def _check_description(description: Any, name: str, add: Any) -> None:
    if not isinstance(description, str) or not description.strip():
        add(
            "error",
            "DESCRIPTION_MISSING",
            "no description: a model cannot tell when to use this tool",
            "description",
        )
        return
    text = description.strip()
    plain = re.sub(r"[\s_.-]+", " ", text).strip().lower()
    if plain == re.sub(r"[\s_.-]+", " ", name).strip().lower():
        add("warning", "DESCRIPTION_WEAK", "the description only repeats the tool name", "description")
    elif len(text) < _MIN_DESCRIPTION:
        add(
            "warning",
            "DESCRIPTION_WEAK",
            f"the description is {len(text)} characters; say what the tool does, when to use it and "
            "what it returns",
            "description",
        )
    if _DOCSTRING_LEAK.search(description):
        add(
            "warning",
            "DESCRIPTION_DOCSTRING_LEAK",
            "the description contains an unparsed Args:/:param block; move argument docs into the "
            "inputSchema property descriptions",
            "description",
        )


def _check_annotations(tool: dict[str, Any], add: Any) -> None:
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict):
        add(
            "warning",
            "ANNOTATIONS_MISSING",
            "no annotations: hosts must assume the tool is destructive and open-world; set readOnlyHint "
            "(and destructiveHint, idempotentHint, openWorldHint)",
            "annotations",
        )
        annotations = {}
    elif "readOnlyHint" not in annotations:
        add(
            "warning",
            "ANNOTATIONS_MISSING",
            "annotations do not set readOnlyHint, which defaults to false (may modify its environment)",
            "annotations.readOnlyHint",
        )
    elif annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is True:
        # Only a real contradiction: `destructiveHint: false` or `idempotentHint` beside
        # `readOnlyHint: true` agree with it (the spec just calls them unneeded there).
        add(
            "warning",
            "ANNOTATIONS_INCOHERENT",
            "readOnlyHint: true and destructiveHint: true contradict each other: a tool that does not "
            "modify its environment cannot destroy anything in it; drop one of them",
            "annotations",
        )
    if not tool.get("title") and not annotations.get("title"):
        add("info", "TITLE_MISSING", "no title: hosts display the raw name", "title")
