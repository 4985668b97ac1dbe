"""Metadata that `Project` methods carry for the faces generated from them.

`@operation(...)` only attaches an `OperationMeta` to the function; it changes nothing about how
the method runs, and importing this module imports nothing heavy. The reflection registry
(`preflight_sdk.faces.reflection.registry`) reads it to set tool annotations, titles and groups.

`public_members` is the one scanner of a class's operations, shared by the registry (the CLI and
MCP faces) and by `SyncProject`, so every face sees the same methods in the same order.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import msgspec

from .hints import OPERATION_NAMES

__all__ = [
    "OPERATION_ATTR",
    "Member",
    "OperationMeta",
    "operation",
    "operation_meta",
    "public_members",
]

OPERATION_ATTR = "__preflight_operation__"
F = TypeVar("F", bound=Callable[..., Any])


class OperationMeta(msgspec.Struct, frozen=True, kw_only=True):
    """How an operation behaves, as MCP tool annotations describe it.

    Attributes:
        title: a short human title (`Build images`).
        read_only: it changes nothing (status, logs).
        destructive: it removes things (clean).
        idempotent: calling it twice has the effect of calling it once.
        open_world: it reaches outside the project (the network, other processes).
        group: the tool group (`environment`, `runs`, `tests`, `clarify`, `verify`…): an MCP
            face can serve only some groups (its server's `--tools` option),
            so an agent pays only for the tools it uses. Every operation names one.
    """

    title: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    group: str = ""

    def __call__(self, fn: F) -> F:
        """Attach this metadata to `fn`, and note each of its calls for the operation log."""
        OPERATION_NAMES.add(fn.__name__)  # so hints name it in each face's words

        @functools.wraps(fn)
        async def logged(owner: Any, *args: Any, **kwargs: Any) -> Any:
            # Every call, on any face, is noted for the project's operation log (if the object
            # keeps one): name, start, duration, outcome or error code, and the run it made.
            started = time.time()
            clock = time.perf_counter()
            try:
                result = await fn(owner, *args, **kwargs)
            except BaseException as exc:
                _note(owner, fn.__name__, started, clock, None, exc)
                raise
            _note(owner, fn.__name__, started, clock, result, None)
            return result

        setattr(logged, OPERATION_ATTR, self)
        return logged  # type: ignore[return-value]


operation = OperationMeta
"""`@operation(title=..., group=...)` on a `Project` method: its `OperationMeta`, as a decorator."""


def _note(
    owner: Any, name: str, started: float, clock: float, result: Any, error: BaseException | None
) -> None:
    record = getattr(owner, "_record_call", None)
    if record is None:
        return
    duration = int((time.perf_counter() - clock) * 1000)
    if error is not None:
        code = getattr(error, "code", None)
        outcome = "error" if code else ("cancelled" if not isinstance(error, Exception) else "error")
        record(name, started, duration, outcome, code or type(error).__name__, None)
        return
    status = getattr(result, "status", None)
    outcome = status if isinstance(status, str) else "ok"
    record(name, started, duration, outcome, None, getattr(result, "run_id", None))


class Member(msgspec.Struct, frozen=True):
    """A public async member of a class: its name, the function, and what kind it is."""

    name: str
    function: Callable[..., Any]
    kind: Literal["coroutine", "generator"]


def public_members(target: type) -> list[Member]:
    """Public `async def` methods and async generator methods, in definition order (bases first).

    The bases come in the order the class lists them (`Project`'s groups of operations), each
    after its own bases. An override replaces (or hides, when it is not async) the base class
    member; properties, static and class methods are not operations.
    """
    found: dict[str, Member] = {}
    for klass in _reading_order(target):
        for name, member in vars(klass).items():
            found.pop(name, None)
            if name.startswith("_") or isinstance(member, (staticmethod, classmethod, property)):
                continue
            if not callable(member):
                continue
            plain = inspect.unwrap(member)
            if inspect.iscoroutinefunction(plain):
                found[name] = Member(name, member, "coroutine")
            elif inspect.isasyncgenfunction(plain):
                found[name] = Member(name, member, "generator")
    return list(found.values())


def _reading_order(target: type) -> list[type]:
    """The classes of `target` in the order a reader meets them: each after its own bases, the bases
    in the order they are listed (a class met twice counts where it is met first)."""
    order: list[type] = []

    def visit(klass: type) -> None:
        if klass is object or klass in order:
            return
        for base in klass.__bases__:
            visit(base)
        order.append(klass)

    visit(target)
    return order


def operation_meta(fn: Callable[..., Any]) -> OperationMeta | None:
    """Return the metadata `@operation` attached to `fn` (or to the function a bound method wraps)."""
    target = getattr(fn, "__func__", fn)
    meta = getattr(target, OPERATION_ATTR, None)
    return meta if isinstance(meta, OperationMeta) else None
