"""Operation arguments: the parameters, the Struct that validates them, and clear INVALID_INPUT errors.

Both faces validate through here, so a bad value gets the same error from the CLI and from an MCP
tool: code INVALID_INPUT, the field's wire name, its expected type, and every accepted argument.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.errors import InputError

__all__ = [
    "Parameter",
    "arguments_struct",
    "convert_arguments",
    "decode_arguments",
    "invalid_arguments",
    "type_label",
]


class Parameter(msgspec.Struct, frozen=True, kw_only=True):
    """One exposed parameter of an operation.

    Attributes:
        name: the Python name (`suite_id`).
        wire_name: the camelCase name used by the MCP tool (`suiteId`).
        annotation: the type hint, as `typing.get_type_hints(include_extras=True)` returns it.
        description: the text of its `Args:` entry.
        required: whether it has no default.
        default: the default value (`None` when required).
    """

    name: str
    wire_name: str
    annotation: Any
    description: str
    required: bool
    default: Any = None

    @property
    def label(self) -> str:
        """A short human form of its type: `integer`, `list of string`, `one of "a", "b"`.

        An optional argument whose default is None reads as its plain type, as its schema lists
        it: leaving it out is how a caller says "none" (a `null` sent anyway means the same).
        """
        return type_label(self.annotation, optional=not self.required and self.default is None)


def arguments_struct(name: str, fields: list[tuple[Any, ...]], *, doc: str = "") -> Any:
    """Build the Struct that validates a call's arguments: camelCase, unknown fields forbidden."""
    return msgspec.defstruct(
        name,
        fields,
        kw_only=True,
        frozen=True,
        forbid_unknown_fields=True,
        rename="camel",
        module=__name__,
        namespace={"__doc__": doc} if doc else None,
    )


# -- validation errors ----------------------------------------------------------------------------

_EXPECTED = re.compile(
    r"^Expected `(?P<expected>[^`]+)`(?P<rest>[^-]*?)(?:, got `(?P<got>[^`]+)`)?(?: - at `(?P<at>[^`]*)`)?$"
)
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`(?: - at `(?P<at>[^`]*)`)?$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<field>[^`]+)`(?: - at `(?P<at>[^`]*)`)?$")
_AT = re.compile(r" - at `(?P<at>[^`]*)`$")


def _field_of(path: str | None) -> str:
    """`$.answers[...]` → `answers`; `$.retry.delay` → `retry.delay`; `$` → ``."""
    if not path:
        return ""
    return re.sub(r"\[[^\]]*\]", "", path.removeprefix("$").removeprefix("."))


def convert_arguments(
    data: Mapping[str, Any],
    arguments: Any,
    parameters: tuple[Parameter, ...] | list[Parameter],
    *,
    operation: str,
) -> dict[str, Any]:
    """Validate `data` against the Struct `arguments` (strict) and return keyword arguments.

    Raises:
        InputError: INVALID_INPUT; `details` has `field` (the camelCase name), `expected` (its
            type), `problem` (what was wrong) and `arguments` (every accepted name and type).
    """
    value = decode_arguments(data, arguments, parameters, operation=operation)
    return {f.name: getattr(value, f.name) for f in msgspec.structs.fields(value)}


def decode_arguments(
    data: Mapping[str, Any],
    arguments: Any,
    parameters: tuple[Parameter, ...] | list[Parameter],
    *,
    operation: str,
) -> Any:
    """Validate `data` against the Struct `arguments` (strict) and return the Struct instance.

    Raises:
        InputError: INVALID_INPUT (see `convert_arguments`).
    """
    try:
        return decoding.convert(dict(data), arguments)
    except msgspec.ValidationError as exc:
        raise invalid_arguments(str(exc), parameters, operation=operation) from exc


def invalid_arguments(
    problem: str, parameters: tuple[Parameter, ...] | list[Parameter], *, operation: str
) -> InputError:
    """Turn a msgspec validation message into an INVALID_INPUT error naming the field and its type."""
    by_wire = {p.wire_name: p for p in parameters}
    accepted = {p.wire_name: p.label + ("" if p.required else " (optional)") for p in parameters}
    field = ""
    expected = ""
    got = None
    if match := _MISSING.match(problem):
        field = ".".join(x for x in (_field_of(match["at"]), match["field"]) if x)
        message = f"missing required argument `{field}`"
    elif match := _UNKNOWN.match(problem):
        field = ".".join(x for x in (_field_of(match["at"]), match["field"]) if x)
        message = f"unknown argument `{field}`"
    elif match := _EXPECTED.match(problem):
        field = _field_of(match["at"])
        got = match["got"]
        message = f"invalid value for `{field}`: expected `{match['expected']}`{match['rest'] or ''}"
        message += f", got `{got}`" if got else ""
    else:
        at = _AT.search(problem)
        field = _field_of(at["at"]) if at else ""
        message = f"invalid value for `{field}`: {_AT.sub('', problem)}" if field else problem
    top = by_wire.get(field.split(".")[0])
    if top is not None:
        expected = top.label
        if not message.startswith("unknown"):
            message += f" ({top.wire_name} is {expected})"
    details: dict[str, Any] = {"field": field, "problem": problem, "arguments": accepted}
    if expected:
        details["expected"] = expected
    if got:
        details["got"] = got
    listed = ", ".join(f"{name}: {label}" for name, label in accepted.items()) or "none"
    return InputError(
        f"{operation}: {message}",
        hint=f"accepted arguments: {listed}",
        details=details,
    )


# -- type labels ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _schema_label(annotation: Any, optional: bool) -> str:
    try:
        schema = decoding.schema(annotation)
    except (TypeError, ValueError):
        return getattr(annotation, "__name__", str(annotation))
    if optional:
        schema = _without_null(schema)
    return _label(schema, schema.get("$defs", {}))


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    options = schema.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [option for option in options if option != {"type": "null"}]
        if len(rest) > 1:
            return {**schema, "anyOf": rest}
        return {**{key: value for key, value in schema.items() if key != "anyOf"}, **rest[0]}
    return schema


def type_label(annotation: Any, *, optional: bool = False) -> str:
    """Return a short human form of a type: `integer`, `string or null`, `list of string`
    (`optional`: without `or null`, for an argument one leaves out to say none)."""
    try:
        return _schema_label(annotation, optional)
    except TypeError:  # unhashable annotation
        return str(annotation)


def _label(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        target = defs.get(name, {})
        return f"object ({name})" if target.get("type") == "object" else _label(target, defs)
    if "enum" in schema:
        return "one of " + ", ".join(msgspec.json.encode(v).decode() for v in schema["enum"])
    if "const" in schema:
        return msgspec.json.encode(schema["const"]).decode()
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(dict.fromkeys(_label(s, defs) for s in schema[key]))
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return f"list of {_label(items, defs)}" if isinstance(items, Mapping) else "list"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"object of {_label(extra, defs)}" if isinstance(extra, Mapping) and extra else "object"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    return str(kind) if kind else "any value"
