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

Large values: `gc_paused` turns Python's cyclic garbage collector off while one is built.
Building a big value (the node tree and data of a 30,000-line test file, say) allocates hundreds of
thousands of objects that all stay alive until it is done. Each allocation burst triggers a
collection of the oldest generation, which walks every live object and finds nothing to free:
the collections grow with the heap, so the cost grows faster than the file (at 5,000 cases, 8
full collections took most of the load). Reference counting still frees what dies meanwhile; only
cycles wait for the collector, which resumes when the last pause ends.
"""

from __future__ import annotations

import gc
import inspect
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import msgspec

__all__ = ["convert", "decode", "gc_paused", "plain_descriptions", "ready", "schema", "schema_components"]

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


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (pauses from several threads nest)."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()
