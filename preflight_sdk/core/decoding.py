"""msgspec's typed decoding (convert, JSON decode, schemas) that any thread may be first to do.

msgspec builds a Struct type's decoding info the first time the type is used, and on builds with
the GIL (0.22, the newest release) it publishes that info on the type before it has filled in the
fields' types: building runs Python code (the class's annotations), another thread may run in
that moment, find the half-built info and read an empty slot, and the process dies of SIGSEGV.
An MCP server met it: its warm-up described the config's types in one thread while the first
tool call loaded the config in another (one server in about two hundred, on a loaded machine).

So every typed use in the package goes through here: the first use of a type builds its info
(and that of every type inside it) under one lock, and every later use is a set lookup. Its test
shows the crash with msgspec alone, and fails once msgspec mends it (then this module can go).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, TypeVar

import msgspec

__all__ = ["convert", "decode", "ready", "schema"]

T = TypeVar("T")

_BUILDING = threading.Lock()
_READY: set[Any] = set()


def ready(*types: Any) -> None:
    """Build msgspec's decoding info of `types` now, one thread at a time (once per type)."""
    if all(_known(typ) for typ in types):
        return
    with _BUILDING:
        for typ in types:
            if not _known(typ):
                msgspec.json.Decoder(typ)  # builds the info of `typ` and of every type it holds
                with contextlib.suppress(TypeError):  # an unhashable type is built at each use
                    _READY.add(typ)


def _known(typ: Any) -> bool:
    try:
        return typ in _READY
    except TypeError:  # unhashable (`Annotated` with a dict in it)
        return False


def convert(obj: Any, typ: type[T], *, strict: bool = True, from_attributes: bool = False) -> T:
    """`msgspec.convert`, its type's info built first."""
    if not _known(typ):
        ready(typ)
    return msgspec.convert(obj, typ, strict=strict, from_attributes=from_attributes)


def decode(data: bytes | str, typ: type[T]) -> T:
    """`msgspec.json.decode(data, type=typ)`, its type's info built first."""
    if not _known(typ):
        ready(typ)
    return msgspec.json.decode(data, type=typ)


def schema(typ: Any) -> dict[str, Any]:
    """`msgspec.json.schema`, its type's info built first (a schema reads it)."""
    ready(typ)
    return msgspec.json.schema(typ)
