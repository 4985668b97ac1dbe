"""The one registry of operations: the public coroutine methods of `Project`, read once.

Each `Operation` carries what both faces need: the name, the `@operation` metadata, the parsed
docstring, the parameters (type hints, defaults, descriptions) and an argument Struct built with
`msgspec.defstruct`, so the MCP server and the CLI validate input the same way. A parameter named
`progress` is never exposed: the faces inject a progress sink there.

This module imports neither mcp nor click.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import msgspec

from preflight_sdk.core.hints import Wording, word
from preflight_sdk.core.operations import OperationMeta, operation_meta, public_members

from .arguments import Parameter, arguments_struct, convert_arguments
from .docstrings import Docstring, parse_docstring

if typing.TYPE_CHECKING:
    from preflight_sdk.faces.mcp.aliases import AliasSpec

__all__ = [
    "PROGRESS_PARAMETER",
    "RESERVED",
    "Operation",
    "Registry",
    "default_target",
    "operation_of",
    "public_coroutines",
    "reflect",
]

PROGRESS_PARAMETER = "progress"
# Names the faces add themselves: the MCP tools' project_path and config_file, the CLI's global
# options (-C/--project, --config, --json) and --help.
RESERVED = frozenset({"project_path", "config_file", "project", "config", "json", "help"})


class Operation(msgspec.Struct, frozen=True, kw_only=True):
    """A public coroutine method of the reflected class, with everything the faces need.

    Attributes:
        name: the method name (`run_suite`).
        meta: the `@operation` metadata (a default with a humanised title when it is missing).
        doc: the parsed docstring.
        parameters: the exposed parameters, in signature order (`progress` excluded).
        return_type: the awaited return type.
        arguments: a Struct type (camelCase, unknown fields forbidden) holding the parameters.
        progress: whether the method accepts `progress=`.
    """

    name: str
    meta: OperationMeta
    aliases: tuple[AliasSpec, ...] = ()
    doc: Docstring
    parameters: tuple[Parameter, ...]
    return_type: Any
    arguments: Any
    progress: bool

    @property
    def title(self) -> str:
        """The operation's human title."""
        return self.meta.title

    def parameter(self, name: str) -> Parameter | None:
        """Return the parameter with this Python or wire name."""
        return next((p for p in self.parameters if name in (p.name, p.wire_name)), None)

    def convert(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Validate wire arguments (camelCase keys) and return the method's keyword arguments.

        Raises:
            InputError: INVALID_INPUT naming the field and the expected type.
        """
        return convert_arguments(data, self.arguments, self.parameters, operation=self.name)

    def described(self, wording: Wording, example: str | None = None) -> str:
        """Return the description an agent reads: summary, body, example and tips (no `Args:`).

        `example` is the example as this face shows it (the MCP face: tool arguments as JSON);
        without one, none is shown (the docstring's is a Python call). The tips name operations
        in the face's words (`wording`, see `core.hints`).
        """
        parts = [self.doc.summary, self.doc.description]
        if example:
            parts.append(f"Example: {example}")
        if self.doc.tips:
            parts.append("Tips:\n" + _indent(word(self.doc.tips, wording)))
        return "\n\n".join(part for part in parts if part)


class Registry(msgspec.Struct, frozen=True, kw_only=True):
    """The operations of one class, in definition order."""

    target: Any
    operations: tuple[Operation, ...]

    def get(self, name: str) -> Operation | None:
        """Return the operation with this method name."""
        return next((op for op in self.operations if op.name == name), None)

    def groups(self) -> list[str]:
        """The tool groups of the operations and their aliases, in order of first appearance."""
        found = [g for op in self.operations for g in (op.meta.group, *(a.group for a in op.aliases))]
        return list(dict.fromkeys(g for g in found if g))

    def __iter__(self) -> typing.Iterator[Operation]:
        return iter(self.operations)


def default_target() -> type:
    """The class reflected by default: `Project` (imported on first use)."""
    from preflight_sdk.project import Project

    return Project


def reflect(target: type | None = None) -> Registry:
    """Return the registry of `target` (default: `Project`), built once per class."""
    return _reflect(target if target is not None else default_target())


@functools.cache
def _reflect(target: type) -> Registry:
    extra = face_aliases(target)
    operations = (operation_of(name, fn) for name, fn in public_coroutines(target))
    return Registry(
        target=target,
        operations=tuple(
            msgspec.structs.replace(op, aliases=extra[op.name]) if op.name in extra else op
            for op in operations
        ),
    )


def face_aliases(target: type) -> Mapping[str, tuple[AliasSpec, ...]]:
    """Alias tools the MCP face adds to `target`'s operations, by operation name.

    `Project`'s come from the MCP face (`SEED_ALIASES`); another class reflected as a face (a test
    stand-in) names its own in a class attribute `__mcp_aliases__`.
    """
    if target is not default_target():
        own: Mapping[str, tuple[AliasSpec, ...]] = getattr(target, "__mcp_aliases__", {})
        return own
    from preflight_sdk.faces.mcp.aliases import SEED_ALIASES

    return SEED_ALIASES


def public_coroutines(target: type) -> list[tuple[str, Callable[..., Any]]]:
    """Public `async def` methods in definition order (base classes first): the operations."""
    return [(m.name, m.function) for m in public_members(target) if m.kind == "coroutine"]


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an unresolvable hint is reported by `lint`, not at start-up
        return {}


def operation_of(name: str, fn: Callable[..., Any]) -> Operation:
    """Reflect one method into an `Operation`."""
    doc = parse_docstring(inspect.getdoc(fn))
    hints = _hints(fn)
    signature = inspect.signature(fn)
    parameters: list[Parameter] = []
    fields: list[tuple[Any, ...]] = []
    progress = False
    for param in list(signature.parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name == PROGRESS_PARAMETER:
            progress = True
            continue
        hint = hints.get(param.name, Any)
        description = doc.args.get(param.name, "")
        annotated = Annotated[hint, msgspec.Meta(description=description)] if description else hint
        required = param.default is inspect.Parameter.empty
        if required:
            fields.append((param.name, annotated))
        else:
            fields.append((param.name, annotated, param.default))
        parameters.append(
            Parameter(
                name=param.name,
                wire_name=param.name,
                annotation=hint,
                description=description,
                required=required,
                default=None if required else param.default,
            )
        )
    arguments = arguments_struct(f"{name}_arguments", fields, doc=doc.summary)
    wire = {f.name: f.encode_name for f in msgspec.structs.fields(arguments)}
    parameters = [msgspec.structs.replace(p, wire_name=wire[p.name]) for p in parameters]
    meta = operation_meta(fn) or OperationMeta(title=name.replace("_", " ").capitalize())
    return Operation(
        name=name,
        meta=meta,
        doc=doc,
        parameters=tuple(parameters),
        return_type=hints.get("return", Any),
        arguments=arguments,
        progress=progress,
    )


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())
