"""The envelope every MCP tool result (and `preflight --json`) is wrapped in."""

from __future__ import annotations

import time
from typing import Generic, TypeVar

import msgspec

from preflight_sdk.core.errors import ErrorInfo, PreflightError
from preflight_sdk.core.hints import Face

__all__ = ["Envelope", "failure", "success"]

T = TypeVar("T")


class Envelope(msgspec.Struct, Generic[T], frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """`{success, data?, error?, runId?, timestamp}`: the outcome of one operation.

    `success` says whether the operation did its job, not what it found: a run with failed tests
    or a verify with findings is `success: true`, its verdict in `data.status`. `success` is false
    only when the operation could not do its job, and then `error` says why.
    """

    success: bool
    timestamp: int
    # UNSET (left out) on an error; None is written as `data: null`: an operation whose answer is
    # "nothing" (get_test of an unknown id) did its job.
    data: T | msgspec.UnsetType | None = msgspec.UNSET
    error: ErrorInfo | None = None
    run_id: str | None = None


def success(data: T, *, run_id: str | None = None) -> Envelope[T]:
    """Wrap the result of an operation that ran to its end, whatever its verdict."""
    return Envelope(success=True, timestamp=int(time.time() * 1000), data=data, run_id=run_id)


def failure(
    error: PreflightError, *, run_id: str | None = None, face: Face = "sdk", again: str | None = None
) -> Envelope[None]:
    """Wrap an error, its hint worded for `face` (`again`: how it names the call that failed)."""
    return Envelope(
        success=False,
        timestamp=int(time.time() * 1000),
        error=error.to_info(face, again=again),
        run_id=run_id,
    )
