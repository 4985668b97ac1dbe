"""`{{…}}` templates, shared by e2e.yaml loading, mock responses and YAML tests.

A template names a dotted path into a scope (`{{request.body.user.id}}`, `{{services.api.url}}`,
`{{env.HOME}}`). A string that is *only* a template takes the value's own JSON type (a number stays
a number, an object stays an object); a template inside a longer string is rendered as text.
A scope value that is callable is called on each use, which is how `{{uuid}}`, `{{now}}` and
`{{counter}}` give a fresh value per request. An unknown name is an error that names it, never
a literal left in place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .errors import InputError

__all__ = [
    "TEMPLATE",
    "UnknownVariableError",
    "find_templates",
    "has_template",
    "lookup",
    "render",
]

TEMPLATE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_MISSING = object()


class UnknownVariableError(InputError):
    """A template names a variable the scope does not have."""

    def __init__(self, name: str, known: list[str]) -> None:
        shown = ", ".join(sorted(known)[:20])
        super().__init__(
            f"unknown variable `{{{{{name}}}}}`",
            hint=f"known names here: {shown}" if shown else "no variables are defined here",
            details={"variable": name, "known": sorted(known)},
        )
        self.name = name


def has_template(value: object) -> bool:
    """Tell whether `value` (a JSON-like tree) contains a `{{…}}` template anywhere."""
    return any(True for _ in find_templates(value))


def find_templates(value: object) -> Iterator[str]:
    """Yield every template expression in `value` (recursing into lists and dict values)."""
    if isinstance(value, str):
        for match in TEMPLATE.finditer(value):
            yield match.group(1)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from find_templates(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from find_templates(item)


def lookup(scope: Mapping[str, Any], expression: str) -> Any:
    """Return the value `expression` (a dotted path) names in `scope`.

    Path segments index mappings by key (case-sensitive first, then case-insensitive, which HTTP
    header names need) and lists by position; `length` on a list, string or mapping gives its
    size. A callable found at the end of the path is called.

    Raises:
        UnknownVariableError: when any segment is missing.
    """
    parts = [p for p in expression.strip().split(".") if p != ""]
    if not parts:
        raise UnknownVariableError(expression, list(scope))
    current: Any = scope
    for index, part in enumerate(parts):
        found = _step(current, part)
        if found is _MISSING:
            known = list(current) if isinstance(current, Mapping) else []
            prefix = ".".join(parts[:index])
            raise UnknownVariableError(expression, [f"{prefix}.{k}" if prefix else str(k) for k in known])
        current = found
    return current() if callable(current) else current


def render(value: Any, scope: Mapping[str, Any] | Callable[[str], Any]) -> Any:
    """Return `value` with every template resolved against `scope`.

    Args:
        value: a JSON-like tree (str, number, bool, None, list, dict).
        scope: a mapping for `lookup`, or a function from expression to value.

    Raises:
        UnknownVariableError: for a name the scope does not have.
    """
    resolve = scope if callable(scope) else (lambda expr: lookup(scope, expr))
    return _render(value, resolve)


def _render(value: Any, resolve: Callable[[str], Any]) -> Any:
    if isinstance(value, str):
        return _render_string(value, resolve)
    if isinstance(value, Mapping):
        return {key: _render(item, resolve) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_render(item, resolve) for item in value]
    return value


def _render_string(text: str, resolve: Callable[[str], Any]) -> Any:
    if "{{" not in text:
        return text
    whole = TEMPLATE.fullmatch(text.strip())
    if whole is not None and text.strip() == text:
        return resolve(whole.group(1))
    return TEMPLATE.sub(lambda m: _as_text(resolve(m.group(1))), text)


def _as_text(value: Any) -> str:
    """A value as it reads inside a longer string: text as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), default=str)


def _step(current: Any, part: str) -> Any:
    if isinstance(current, Mapping):
        if part in current:
            return current[part]
        lowered = part.lower()
        for key in current:
            if isinstance(key, str) and key.lower() == lowered:
                return current[key]
        if part == "length":
            return len(current)
        return _MISSING
    if isinstance(current, list | tuple | str):
        if part == "length":
            return len(current)
        if isinstance(current, list | tuple) and part.lstrip("-").isdigit():
            position = int(part)
            if -len(current) <= position < len(current):
                return current[position]
        return _MISSING
    return _MISSING
