"""Compose variable interpolation: `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR:?error}`, `$$`.

The rules are the compose specification's: `:-` and `-` give a default when the variable is unset
(`:-` also when it is empty), `:+` and `+` give a replacement when it is set, `:?` and `?` make an
unset (or empty) variable an error, `$$` is a literal `$`. Defaults may themselves hold variables.
An unset variable without a default becomes the empty string, as in docker compose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["InterpolationError", "interpolate_value", "substitute"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class InterpolationError(ValueError):
    """A `${VAR:?message}` whose variable is missing, or a malformed `${...}`."""


def substitute(text: str, environ: Mapping[str, str]) -> str:
    """Return `text` with every variable replaced.

    Raises:
        InterpolationError: an unterminated `${`, a bad name, or a required variable missing.
    """
    if "$" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "$":
            out.append(char)
            index += 1
            continue
        following = text[index + 1 : index + 2]
        if following == "$":
            out.append("$")
            index += 2
        elif following == "{":
            end = _closing_brace(text, index + 2)
            out.append(_braced(text[index + 2 : end], environ))
            index = end + 1
        else:
            match = _NAME.match(text, index + 1)
            if match is None:
                out.append("$")
                index += 1
            else:
                out.append(environ.get(match.group(0), ""))
                index = match.end()
    return "".join(out)


def interpolate_value(
    value: Any, environ: Mapping[str, str], path: tuple[str | int, ...], on_error: Callable[..., None]
) -> Any:
    """Interpolate every string (never a mapping key) in `value`; report errors by path."""
    if isinstance(value, str):
        try:
            return substitute(value, environ)
        except InterpolationError as exc:
            on_error(path, str(exc))
            return value
    if isinstance(value, dict):
        return {key: interpolate_value(item, environ, (*path, key), on_error) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate_value(item, environ, (*path, i), on_error) for i, item in enumerate(value)]
    return value


def _closing_brace(text: str, start: int) -> int:
    depth = 1
    index = start
    while index < len(text):
        if text.startswith("${", index):
            depth += 1
            index += 2
            continue
        if text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise InterpolationError(f"unterminated `${{` in {text!r}")


def _braced(body: str, environ: Mapping[str, str]) -> str:
    match = _NAME.match(body)
    if match is None:
        raise InterpolationError(f"`${{{body}}}` does not start with a variable name")
    name = match.group(0)
    rest = body[match.end() :]
    value = environ.get(name)
    if not rest:
        return value or ""
    for operator in (":-", ":?", ":+", "-", "?", "+"):
        if rest.startswith(operator):
            argument = rest[len(operator) :]
            break
    else:
        raise InterpolationError(f"`${{{body}}}`: unknown operator after `{name}`")
    present = value is not None and (value != "" or ":" not in operator)
    if operator.endswith("-"):
        return value if present and value is not None else substitute(argument, environ)
    if operator.endswith("+"):
        return substitute(argument, environ) if present else ""
    if not present:
        reason = substitute(argument, environ) or "it is required"
        raise InterpolationError(f"variable `{name}` is not set: {reason}")
    return value or ""
