"""MCP tool definitions from the registry: names, descriptions, input and output schemas, hints.

A tool's arguments are its method's parameters (camelCase) plus `projectPath` on every tool and
`configFile` on `init`. Its output is always the envelope `{success, data?, error?, runId?,
timestamp}` with the method's result type as `data`, so the schema is object-rooted for clients of
every protocol era; the output schema is an outline of it (`outputs.py`). Alias tools keep the
argument and reply shapes their `AliasSpec` declares.

Nothing here imports mcp: the server turns these Structs into protocol objects.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.json_schema import inline_root, map_objects
from preflight_sdk.faces.reflection.arguments import (
    Parameter,
    arguments_struct,
    convert_arguments,
    decode_arguments,
)
from preflight_sdk.faces.reflection.docstrings import parse_docstring
from preflight_sdk.faces.reflection.examples import mcp_example
from preflight_sdk.faces.reflection.registry import Operation, Registry

from .aliases import AliasSpec
from .outputs import RESULTS_FILE, envelope_schemas, output_schema, result_name
from .words import MCP, TOOL_PREFIX

__all__ = ["CONFIG_FILE_OPERATIONS", "TOOL_PREFIX", "ToolSpec", "build_tools"]

# The operation that loads the configuration is the one that may choose another config file.
CONFIG_FILE_OPERATIONS = frozenset({"init"})

# Subscripted at run time with each operation's types.
_ANNOTATED: Any = Annotated
PROJECT_PATH = "project_path"
CONFIG_FILE = "config_file"
# Repeated in every tool's schema, which a model reads on every turn: short.
_PROJECT_HELP = "Project directory holding e2e.yaml (or that file); relative to the server's directory."
_CONFIG_HELP = "Config file instead of e2e.yaml, relative to projectPath."


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One MCP tool: how it is listed and how a call is validated and dispatched.

    Attributes:
        name: the tool name (`preflight_run_suite`, or an alias name verbatim).
        title: the human title.
        description: what an agent reads.
        input_schema: object-rooted JSON Schema of the arguments.
        output_schema: object-rooted JSON Schema of `structuredContent`.
        operation: the operation it calls (its annotation hints are the tool's).
        arguments: the Struct type that validates the arguments.
        parameters: the accepted arguments (for error messages).
        alias: the alias spec, for alias tools.
        wrapped: the reply is wrapped as `{"result": …}` (a non-object alias reply).
        group: the tool group (its operation's, or the alias's own).
    """

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    operation: Operation
    arguments: Any
    parameters: tuple[Parameter, ...]
    alias: AliasSpec | None = None
    wrapped: bool = False
    group: str = ""

    @property
    def read_only(self) -> bool:
        """It changes nothing (`readOnlyHint`)."""
        return self.operation.meta.read_only

    @property
    def destructive(self) -> bool:
        """It removes things (`destructiveHint`); a read-only tool never does."""
        return self.operation.meta.destructive and not self.read_only

    @property
    def idempotent(self) -> bool:
        """Calling it twice has the effect of calling it once (`idempotentHint`), as for every
        read-only tool."""
        return self.operation.meta.idempotent or self.read_only

    @property
    def open_world(self) -> bool:
        """It reaches outside the project (`openWorldHint`)."""
        return self.operation.meta.open_world

    def convert(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the call's arguments; return them by Python name (INVALID_INPUT on error)."""
        return convert_arguments(data, self.arguments, self.parameters, operation=self.name)

    def decode(self, data: Mapping[str, Any]) -> Any:
        """Validate the call's arguments; return the argument Struct (INVALID_INPUT on error)."""
        return decode_arguments(data, self.arguments, self.parameters, operation=self.name)


def build_tools(registry: Registry, *, project_required: bool) -> tuple[ToolSpec, ...]:
    """Return every tool of `registry`: one per operation, then its aliases, in registry order."""
    operations = list(registry)
    outputs = envelope_schemas([op.return_type for op in operations])  # one pass over every type
    tools: list[ToolSpec] = []
    for op, output in zip(operations, outputs, strict=True):
        tools.append(_operation_tool(op, output, project_required=project_required))
        tools.extend(_alias_tool(op, alias) for alias in op.aliases)
    return tuple(tools)


def _operation_tool(op: Operation, output: dict[str, Any], *, project_required: bool) -> ToolSpec:
    extra = [_project_parameter(required=project_required)]
    if op.name in CONFIG_FILE_OPERATIONS:
        extra.append(
            Parameter(
                name=CONFIG_FILE,
                wire_name="configFile",
                annotation=str | None,
                description=_CONFIG_HELP,
                required=False,
                default=None,
            )
        )
    parameters = (*extra, *op.parameters)
    fields: list[tuple[Any, ...]] = []
    for p in parameters:
        annotated = _ANNOTATED[p.annotation, msgspec.Meta(description=p.description)]
        fields.append((p.name, annotated) if p.required else (p.name, annotated, p.default))
    arguments = arguments_struct(f"{TOOL_PREFIX}{op.name}_arguments", fields, doc=op.doc.summary)
    return ToolSpec(
        name=f"{TOOL_PREFIX}{op.name}",
        title=op.title,
        description=op.described(MCP, mcp_example(op)),
        input_schema=input_schema(arguments),
        output_schema=output,
        operation=op,
        arguments=arguments,
        parameters=parameters,
        group=op.meta.group,
    )


def _project_parameter(*, required: bool) -> Parameter:
    if required:
        return Parameter(
            name=PROJECT_PATH,
            wire_name="projectPath",
            annotation=str,
            description=_PROJECT_HELP,
            required=True,
        )
    return Parameter(
        name=PROJECT_PATH,
        wire_name="projectPath",
        annotation=str | None,
        description=_PROJECT_HELP + " Default: the server's --project.",
        required=False,
        default=None,
    )


def _alias_tool(op: Operation, alias: AliasSpec) -> ToolSpec:
    schema = input_schema(alias.input_type)
    documented = parse_docstring(getattr(alias.input_type, "__doc__", None)).args
    for field in msgspec.structs.fields(alias.input_type):
        prop = schema.get("properties", {}).get(field.encode_name)
        text = documented.get(field.name) or documented.get(field.encode_name)
        if prop is not None and not prop.get("description") and text:
            prop["description"] = text
    parameters = tuple(
        Parameter(
            name=f.name,
            wire_name=f.encode_name,
            annotation=f.type,
            description=str(schema.get("properties", {}).get(f.encode_name, {}).get("description", "")),
            required=f.required,
            default=None if f.required else f.default,
        )
        for f in msgspec.structs.fields(alias.input_type)
    )
    out = output_schema(alias.output_type, levels=1)
    wrapped = out.get("type") != "object"
    if wrapped:
        out = {"type": "object", "properties": {"result": out}, "required": ["result"]}
    if alias.error_type is not None:
        out = {"type": "object", "anyOf": [out, output_schema(alias.error_type, levels=1)]}
    named = [alias.output_type] if alias.error_type is None else [alias.output_type, alias.error_type]
    out["description"] = " or ".join(result_name(t) for t in named) + f" in {RESULTS_FILE}"
    return ToolSpec(
        name=alias.name,
        title=op.title,
        description=inspect.cleandoc(alias.description),
        input_schema=schema,
        output_schema=out,
        operation=op,
        arguments=alias.input_type,
        parameters=parameters,
        alias=alias,
        wrapped=wrapped,
        group=alias.group or op.meta.group,
    )


def input_schema(arguments: Any) -> dict[str, Any]:
    """Return the object-rooted input schema of an argument Struct.

    A model reads it on every turn, so what says nothing is left out: the root's description (it
    repeats the tool's), titles (they repeat the names), `"default": null` (an absent optional
    argument is null) and an empty `required`.
    """
    raw = inline_root(decoding.schema(arguments))
    defs = raw.get("$defs", {})
    schema: dict[str, Any] = _quiet(
        map_objects(raw, lambda node: _typed_ref(_type_list(_dedented(node)), defs))
    )
    schema.pop("description", None)
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
        required = set(schema.get("required", ()))
        for name, prop in schema["properties"].items():
            if name not in required:
                schema["properties"][name] = _without_null(prop)
    return schema


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional argument in the one form every client handles: its plain type, no `null`.

    Generic clients (the MCP Inspector among them) convert a typed value only when `type` is one
    plain string, and an optional argument is said by leaving it out, so `null` adds nothing to
    the listing (a `null` sent anyway is still accepted, and means the same as leaving it out).
    """
    kind = prop.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [k for k in kind if k != "null"]
        return {**prop, "type": rest[0] if len(rest) == 1 else rest}
    options = prop.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        out = {key: value for key, value in prop.items() if key != "anyOf"}
        return {**rest[0], **out} if len(rest) == 1 else {**out, "anyOf": rest}
    return prop


def _typed_ref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A `$ref` with its target's `type` beside it: a client that resolves no reference (the
    Inspector CLI before 2.0, some hosts) converts `key=value` text by the `type` it sees."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or "type" in node:
        return node
    target = defs.get(ref.removeprefix("#/$defs/"), {})
    kind = target.get("type") if isinstance(target, dict) else None
    return {**node, "type": kind} if isinstance(kind, str) else node


def _quiet(node: Any) -> Any:
    """Drop the keywords of a schema that tell a reader nothing (see `input_schema`)."""
    if isinstance(node, list):
        return [_quiet(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None) or (key == "required" and value == []):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _quiet(item) for name, item in value.items()}  # keys are names here
        else:
            out[key] = _quiet(value)
    return out


def _type_list(schema: dict[str, Any]) -> dict[str, Any]:
    """Write `anyOf: [{type: string}, {type: null}]` as `type: [string, null]` (same meaning, shorter)."""
    options = schema.get("anyOf")
    if (
        isinstance(options, list)
        and options
        and all(isinstance(o, dict) and set(o) == {"type"} and isinstance(o["type"], str) for o in options)
    ):
        del schema["anyOf"]
        schema["type"] = [o["type"] for o in options]
    return schema


def _dedented(schema: dict[str, Any]) -> dict[str, Any]:
    """Dedent a `description` (msgspec copies class docstrings as they are indented)."""
    text = schema.get("description")
    return {**schema, "description": inspect.cleandoc(text)} if isinstance(text, str) else schema
