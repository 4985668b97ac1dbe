"""Click parameters generated from an operation's signature, and the way back to its arguments.

The first required parameter is positional (`preflight logs api`), the other parameters are
options named after them with dashes (`--no-cache`, `--mock-name`). Booleans are `--flag/--no-flag`
pairs (`no_cache` gives `--no-cache/--cache`), literals are choices, and lists, dicts and Structs are
JSON strings. Click only parses: the values are validated by the operation's argument Struct, the
same way the MCP tool validates them, so both faces report the same INVALID_INPUT errors.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import click
import msgspec

from preflight_sdk.core.errors import InputError
from preflight_sdk.faces.reflection.arguments import Parameter
from preflight_sdk.faces.reflection.registry import Operation

__all__ = ["Extension", "click_params", "collect_arguments", "option_flag"]


class Extension(msgspec.Struct, frozen=True, kw_only=True):
    """An extra CLI option on one generated command, folded into the operation's arguments.

    Attributes:
        option: the `click.Option` to add (its `name` is the key `apply` receives the value under).
        apply: called with the option's value and the command's arguments (Python names, only the
            ones given) before validation; it may set, change or remove arguments.
        replaces: the generated option this one is the readable form of: it is still accepted,
            but left out of `--help`, so the command shows one way to say it.
        after: called with the option's value, the project, the operation's result and the output
            once the operation returned (e.g. `runs show ID --open` opens the run's page).
    """

    option: Any
    apply: Callable[[Any, dict[str, Any]], None]
    replaces: str | None = None
    after: Callable[[Any, Any, Any, Any], Awaitable[None]] | None = None


def hide_replaced(params: list[click.Parameter], extensions: tuple[Extension, ...]) -> None:
    """Leave out of `--help` every generated option an extension gives a readable form of."""
    replaced = {extension.replaces for extension in extensions if extension.replaces}
    for param in params:
        if isinstance(param, click.Option) and param.name in replaced:
            param.hidden = True


_CLICK_TYPES = {"int": click.INT, "float": click.FLOAT, "str": click.STRING}


def _strip(annotation: Any) -> tuple[Any, bool]:
    """Return the type without `Annotated` and `None`, and whether `None` was allowed."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        if len(args) == 1:
            inner, _ = _strip(args[0])
            return inner, nullable
        return annotation, nullable
    return annotation, False


def _kind(annotation: Any) -> tuple[str, Any]:
    """Classify a type for Click: `bool`, `int`, `float`, `str`, `choice` (with values) or `json`."""
    inner, _ = _strip(annotation)
    if inner is bool:
        return "bool", None
    if inner in (int, float, str):
        return inner.__name__, None
    if typing.get_origin(inner) is Literal and all(isinstance(v, str) for v in typing.get_args(inner)):
        return "choice", typing.get_args(inner)
    return "json", None


def option_flag(name: str) -> str:
    """`mock_name` → `--mock-name`."""
    return "--" + name.replace("_", "-")


def _help(param: Parameter) -> str:
    text = param.description
    if not param.required and param.default not in (None, msgspec.NODEFAULT, False):
        text += f" [default: {param.default}]"
    kind, _ = _kind(param.annotation)
    if kind == "json":
        text += f" (JSON: {param.label})"
    return text


def click_params(op: Operation, *, positional: bool = True) -> list[click.Parameter]:
    """Return the Click arguments and options of `op` (the first required parameter positional)."""
    params: list[click.Parameter] = []
    first = next((p for p in op.parameters if p.required), None) if positional else None
    for param in op.parameters:
        kind, choices = _kind(param.annotation)
        click_type: Any = _CLICK_TYPES.get(kind, click.STRING)
        if kind == "choice":
            click_type = click.Choice(choices)
        if param is first:
            params.append(click.Argument([param.name], type=click_type, metavar=param.name.upper()))
            continue
        if kind == "bool":
            stem = param.name.removeprefix("no_") if param.name.startswith("no_") else param.name
            flags = (
                f"{option_flag(param.name)}/--{stem.replace('_', '-')}"
                if param.name.startswith("no_")
                else f"{option_flag(param.name)}/--no-{param.name.replace('_', '-')}"
            )
            params.append(click.Option([flags, param.name], default=None, help=_help(param)))
            continue
        params.append(
            click.Option(
                [option_flag(param.name), param.name],
                type=click_type,
                default=None,
                required=param.required,
                metavar="JSON" if kind == "json" else None,
                help=_help(param),
            )
        )
    return params


def collect_arguments(
    op: Operation, values: dict[str, Any], extensions: tuple[Extension, ...] = ()
) -> dict[str, Any]:
    """Turn parsed Click values into the operation's validated keyword arguments.

    Raises:
        InputError: INVALID_INPUT for a JSON option that does not parse, or any value the
            operation's argument Struct rejects.
    """
    given: dict[str, Any] = {}
    for param in op.parameters:
        value = values.get(param.name)
        if value is None:
            continue
        if _kind(param.annotation)[0] == "json" and isinstance(value, str):
            try:
                value = msgspec.json.decode(value)
            except msgspec.DecodeError as exc:
                raise InputError(
                    f"{option_flag(param.name)} is not valid JSON: {exc}",
                    hint=f"pass {param.label} as JSON, e.g. {option_flag(param.name)} '{_example(param)}'",
                    details={"field": param.wire_name, "expected": param.label},
                ) from exc
        given[param.name] = value
    for extension in extensions:
        apply_extension(extension, values, given)
    by_name = {p.name: p for p in op.parameters}
    wire = {by_name[name].wire_name if name in by_name else name: value for name, value in given.items()}
    return op.convert(wire)


def apply_extension(extension: Extension, values: dict[str, Any], given: dict[str, Any]) -> None:
    """Let one extension option change the arguments."""
    name = extension.option.name
    extension.apply(values.get(name), given)


def _example(param: Parameter) -> str:
    label = param.label
    if label.startswith("object"):
        return '{"key": "value"}'
    if label.startswith("list"):
        return '["a", "b"]'
    return '"value"'
