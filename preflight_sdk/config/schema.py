"""JSON Schemas (2020-12) of `e2e.yaml` and of YAML test files, for editors and agents.

They are generated from the Structs, then adjusted to what the loader accepts in an e2e.yaml
before validation: a `{{…}}` template may stand wherever a number, a boolean or a patterned string
is wanted (it is rendered at load), top-level `x-…` keys hold YAML anchors, and `service` excludes
`services`. The committed copies in `docs/schema/` are written by `scripts/gen-schema`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from preflight_sdk.core.json_schema import schema_of

from .model import ProjectConfig
from .testfile import TestFile

__all__ = ["SCHEMA_FILES", "SCHEMA_IDS", "TEMPLATE_PATTERN", "json_schema", "schema_text"]

SchemaKind = Literal["e2e", "test"]
SCHEMA_FILES: dict[SchemaKind, str] = {"e2e": "e2e.schema.json", "test": "test.schema.json"}
"""The file name of each schema in `docs/schema/`."""
SCHEMA_IDS = {kind: f"https://preflight.dev/schema/{name}" for kind, name in SCHEMA_FILES.items()}
TEMPLATE_PATTERN = r"\{\{[^{}]*\}\}"
"""A string holding a load-time template such as `{{env.PORT}}`."""

_TEMPLATED_TYPES = {"integer", "number", "boolean"}


def json_schema(kind: SchemaKind = "e2e") -> dict[str, Any]:
    """Return the JSON Schema (2020-12) of `e2e.yaml` (`kind="e2e"`) or of a YAML test file (`"test"`).

    The committed copies live in `docs/schema/`; point an editor's YAML extension at them.
    """
    if kind == "e2e":
        body = _allow_templates(schema_of(ProjectConfig))
        body["patternProperties"] = {"^x-": {"description": "Free space for YAML anchors; ignored."}}
        body["not"] = {"required": ["service", "services"]}
    else:
        body = schema_of(TestFile)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_IDS[kind], **body}


def schema_text(kind: SchemaKind) -> str:
    """Return the schema as the committed file holds it: indented JSON, sorted keys, final newline."""
    return json.dumps(json_schema(kind), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _allow_templates(node: Any) -> Any:
    """Let a template string stand for any number, boolean or patterned string in `node`."""
    if isinstance(node, list):
        return [_allow_templates(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _allow_templates(value) for key, value in node.items()}
    if isinstance(out.get("anyOf"), list):
        # A branch that became `{anyOf: [...]}` is spliced into its parent's alternatives.
        flat: list[Any] = []
        for branch in out["anyOf"]:
            nested = isinstance(branch, dict) and set(branch) == {"anyOf"}
            flat.extend(branch["anyOf"] if nested else [branch])
        template = {"type": "string", "pattern": TEMPLATE_PATTERN}
        if {"type": "string"} in flat:
            flat = [branch for branch in flat if branch != template]  # any string already allowed
        out["anyOf"] = [branch for i, branch in enumerate(flat) if branch not in flat[:i]]
    # `type` and `pattern` may also be property names (then their values are schemas, not strings).
    if isinstance(out.get("type"), str) and out["type"] in _TEMPLATED_TYPES:
        keep = {k: v for k, v in out.items() if k in ("description", "title", "default")}
        typed = {k: v for k, v in out.items() if k not in keep}
        return {**keep, "anyOf": [typed, {"type": "string", "pattern": TEMPLATE_PATTERN}]}
    if isinstance(out.get("pattern"), str) and out.get("type", "string") == "string":
        out["pattern"] = f"(?:{out['pattern']})|{TEMPLATE_PATTERN}"
    return out
