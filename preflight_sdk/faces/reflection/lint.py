"""The gate on the registry: every gap that would make a generated tool or command worse than its method."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from preflight_sdk.core.errors import InputError
from preflight_sdk.core.operations import operation_meta

from .docstrings import parse_docstring
from .examples import example_arguments
from .registry import (
    PROGRESS_PARAMETER,
    RESERVED,
    default_target,
    face_aliases,
    operation_of,
    public_coroutines,
)

__all__ = ["lint"]


def lint(target: type | None = None) -> list[str]:
    """Return every problem that would make a generated tool or command worse than its method.

    A public coroutine must have a docstring with a summary, an `@operation` decorator, a type
    hint for every parameter and for its return, an `Args:` entry for every exposed parameter (and
    none for parameters that do not exist), and types msgspec can describe as JSON Schema.
    """
    klass = target if target is not None else default_target()
    problems: list[str] = []
    aliases = face_aliases(klass)
    for name, fn in public_coroutines(klass):
        problems.extend(_lint_method(f"{klass.__name__}.{name}", name, fn, aliases.get(name, ())))
    return problems


def _lint_method(where: str, name: str, fn: Callable[..., Any], aliases: tuple[Any, ...]) -> list[str]:
    problems: list[str] = []
    doc = parse_docstring(inspect.getdoc(fn))
    if not doc.summary:
        problems.append(f"{where}: no docstring summary")
    meta = operation_meta(fn)
    if meta is None:
        problems.append(f"{where}: no @operation decorator")
    elif not meta.group:
        problems.append(f"{where}: no tool group: give @operation(group=...) (e.g. environment, runs, tests)")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # reported, not raised
        problems.append(f"{where}: type hints do not resolve ({exc})")
        hints = {}
    if "return" not in hints:
        problems.append(f"{where}: no return type hint")
    exposed: set[str] = set()
    for param in list(inspect.signature(fn).parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            problems.append(f"{where}: *{param.name} cannot be exposed as a tool argument")
            continue
        if param.name == PROGRESS_PARAMETER:
            continue
        exposed.add(param.name)
        if param.name in RESERVED:
            problems.append(
                f"{where}: parameter `{param.name}` clashes with a face's own argument; rename it"
            )
        if param.name not in hints:
            problems.append(f"{where}: parameter `{param.name}` has no type hint")
        if not doc.args.get(param.name):
            problems.append(f"{where}: parameter `{param.name}` has no description in `Args:`")
    for documented in doc.args:
        if documented not in exposed and documented != PROGRESS_PARAMETER:
            problems.append(f"{where}: `Args:` documents `{documented}`, which is not a parameter")
    for alias in aliases:
        described = parse_docstring(getattr(alias.input_type, "__doc__", None)).args
        try:
            schema = msgspec.json.schema(alias.input_type)
        except (TypeError, ValueError) as exc:
            problems.append(f"{where}: alias `{alias.name}` has no JSON Schema ({exc})")
            continue
        body = schema.get("$defs", {}).get(str(schema.get("$ref", "")).rsplit("/", 1)[-1], schema)
        for field in msgspec.structs.fields(alias.input_type):
            prop = body.get("properties", {}).get(field.encode_name, {})
            if not prop.get("description") and not described.get(field.name):
                problems.append(f"{where}: alias `{alias.name}` field `{field.name}` has no description")
    if not problems:
        op = operation_of(name, fn)
        try:
            example_arguments(op)
        except InputError as exc:
            problems.append(f"{where}: {exc.message}")
        for label, typ in [
            *((f"`{p.name}`", p.annotation) for p in op.parameters),
            ("the result", op.return_type),
        ]:
            try:
                msgspec.json.schema(typ)
            except (TypeError, ValueError) as exc:
                reason = str(exc).strip().splitlines()[-1]
                problems.append(f"{where}: no JSON Schema for {label} ({reason})")
    return problems
