"""Metadata that `Project` methods carry for the faces generated from them.

`@operation(...)` only attaches an `OperationMeta` to the function; it changes nothing about how
the method runs, and importing this module imports nothing heavy. The reflection registry
(`preflight_sdk.export.registry`) reads it to set MCP tool annotations and titles, and to add
alias tools that accept another project's argument and reply shapes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

__all__ = ["OPERATION_ATTR", "AliasSpec", "OperationMeta", "operation", "operation_meta"]

OPERATION_ATTR = "__preflight_operation__"
F = TypeVar("F", bound=Callable[..., Any])


class AliasSpec(msgspec.Struct, frozen=True, kw_only=True):
    """An extra MCP tool name for an operation, with its own argument and reply shapes.

    Attributes:
        name: the tool name, used verbatim (no `preflight_` prefix), e.g. `require_clarification`.
        input_type: a Struct describing the alias's arguments (its field names are the wire names).
        to_kwargs: turns a decoded `input_type` instance into keyword arguments of the method.
        output_type: the type of the alias's reply (for its outputSchema).
        from_result: turns the method's result into the alias's reply.
        description: the alias tool's description.
        from_error: turns a `PreflightError` into the alias's own error reply (default: the
            envelope with `isError`).
        error_type: the type of that error reply, so the outputSchema describes it too.
    """

    name: str
    input_type: Any
    to_kwargs: Callable[[Any], dict[str, Any]]
    output_type: Any
    from_result: Callable[[Any], Any]
    description: str
    from_error: Callable[[Any], Any] | None = None
    error_type: Any = None


class OperationMeta(msgspec.Struct, frozen=True, kw_only=True):
    """How an operation behaves, as MCP tool annotations describe it.

    Attributes:
        title: a short human title (`Build images`).
        read_only: it changes nothing (status, logs).
        destructive: it removes things (clean).
        idempotent: calling it twice has the effect of calling it once.
        open_world: it reaches outside the project (the network, other processes).
        aliases: extra tool names with their own shapes.
    """

    title: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    aliases: tuple[AliasSpec, ...] = ()


def operation(
    *,
    title: str,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    aliases: tuple[AliasSpec, ...] = (),
) -> Callable[[F], F]:
    """Attach `OperationMeta` to a `Project` method (see the class for the meaning of each flag)."""
    meta = OperationMeta(
        title=title,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=open_world,
        aliases=aliases,
    )

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        async def logged(self: Any, *args: Any, **kwargs: Any) -> Any:
            # Every call, on any face, is noted for the project's operation log (if the object
            # keeps one): name, start, duration, outcome or error code, and the run it made.
            started = time.time()
            clock = time.perf_counter()
            try:
                result = await fn(self, *args, **kwargs)
            except BaseException as exc:
                _note(self, fn.__name__, started, clock, None, exc)
                raise
            _note(self, fn.__name__, started, clock, result, None)
            return result

        setattr(logged, OPERATION_ATTR, meta)
        return logged  # type: ignore[return-value]

    return decorate


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


def operation_meta(fn: Callable[..., Any]) -> OperationMeta | None:
    """Return the metadata `@operation` attached to `fn` (or to the function a bound method wraps)."""
    target = getattr(fn, "__func__", fn)
    meta = getattr(target, OPERATION_ATTR, None)
    return meta if isinstance(meta, OperationMeta) else None
