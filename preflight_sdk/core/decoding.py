"""msgspec's typed decoding and its JSON Schemas, through one door.

Decoding: `convert` and `decode` are msgspec's own. Before 0.23, msgspec published a Struct type's
decoding info on the type before it had filled in the fields' types, so two threads first using
one type at once could crash the process (SIGSEGV): two threads first-using new types crashed
0.22 within its first second in each of 4 tries, while 0.23 ran 8 tries of 3,000 rounds without a
crash (tests/unit/core/test_decoding.py runs 1,500 such rounds on every test run). The package
therefore requires msgspec 0.23 or newer, and no lock is needed here any more.

Schemas: msgspec copies a class's docstring into `description`, and how it does so changed
between releases (0.23 dedents, 0.22 kept the indentation). The committed schemas and the MCP
tool schemas must not change with a dependency's formatting, so every description that leaves
here is normalised the same way (`inspect.cleandoc`), whatever msgspec gave.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec

__all__ = ["convert", "decode", "plain_descriptions", "ready", "schema", "schema_components"]

T = TypeVar("T")

convert = msgspec.convert
"""`msgspec.convert`: safe from any thread since msgspec 0.23."""


def decode(data: bytes | str, typ: type[T]) -> T:
    """`msgspec.json.decode(data, type=typ)`."""
    return msgspec.json.decode(data, type=typ)


def ready(*types: Any) -> None:
    """Build msgspec's decoding info of `types` now (a warm-up: the first use then costs nothing)."""
    for typ in types:
        msgspec.json.Decoder(typ)


def schema(typ: Any) -> dict[str, Any]:
    """`msgspec.json.schema(typ)`, every description normalised (see the module's docstring)."""
    described: dict[str, Any] = plain_descriptions(msgspec.json.schema(typ))
    return described


def schema_components(
    types: Iterable[Any], *, ref_template: str
) -> tuple[tuple[dict[str, Any], ...], dict[str, Any]]:
    """`msgspec.json.schema_components`, every description normalised."""
    found, components = msgspec.json.schema_components(list(types), ref_template=ref_template)
    return tuple(plain_descriptions(item) for item in found), plain_descriptions(components)


def plain_descriptions(node: Any) -> Any:
    """Return the JSON Schema `node` with every `description` string dedented and trimmed.

    Only string values of a `description` key change: a property *named* `description` (its
    value a schema) is walked into like any other.
    """
    if isinstance(node, dict):
        return {
            key: inspect.cleandoc(value)
            if key == "description" and isinstance(value, str)
            else plain_descriptions(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [plain_descriptions(item) for item in node]
    return node
