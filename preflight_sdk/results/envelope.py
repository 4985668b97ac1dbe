"""The envelope every MCP tool result (and `preflight --json`) is wrapped in."""

from __future__ import annotations

import time
from typing import Generic, TypeVar

import msgspec

from ..errors import ErrorInfo, PreflightError

__all__ = ["Envelope", "failure", "success"]

T = TypeVar("T")


class Envelope(msgspec.Struct, Generic[T], frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """`{success, data?, error?, runId?, timestamp}`: the outcome of one operation.

    `success` is false when the operation raised (then `error` says why) and also when a run
    finished with failed tests (then `data` holds the report).
    """

    success: bool
    timestamp: int
    data: T | None = None
    error: ErrorInfo | None = None
    run_id: str | None = None


def success(data: T, *, ok: bool = True, run_id: str | None = None) -> Envelope[T]:
    """Wrap a result; `ok=False` marks a completed operation whose outcome is a failure (failed tests)."""
    return Envelope(success=ok, timestamp=int(time.time() * 1000), data=data, run_id=run_id)


def failure(error: PreflightError, *, run_id: str | None = None) -> Envelope[None]:
    """Wrap an error."""
    return Envelope(success=False, timestamp=int(time.time() * 1000), error=error.to_info(), run_id=run_id)
