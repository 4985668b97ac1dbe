"""W3C trace context (`traceparent`) for runs: where a run's trace comes from and how it is passed on.

A caller's trace parent comes from the MCP request's `_meta.traceparent` (set by the MCP face for
the call, through `TRACE_PARENT`) or from `TRACEPARENT` in the environment. A run then uses the
caller's trace id with spans of its own: the run, each suite and each case; YAML HTTP steps send
a `traceparent` header naming their case's span, and pytest and shell suites get `TRACEPARENT`,
so a service's own logs and spans line up with the case that caused them.
"""

from __future__ import annotations

import os
import re
from contextvars import ContextVar

import msgspec

__all__ = [
    "TRACE_PARENT",
    "TraceParent",
    "format_traceparent",
    "new_span_id",
    "new_trace_id",
    "parse_traceparent",
]

TRACE_PARENT: ContextVar[str | None] = ContextVar("preflight_trace_parent", default=None)

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


class TraceParent(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed `traceparent`: the trace id and the caller's span id."""

    trace_id: str
    span_id: str


def parse_traceparent(value: str | None) -> TraceParent | None:
    """Parse `00-<trace id>-<span id>-<flags>`; None when absent or malformed (all-zero ids are invalid)."""
    if not value:
        return None
    found = _TRACEPARENT.match(value.strip().lower())
    if found is None or set(found.group(1)) == {"0"} or set(found.group(2)) == {"0"}:
        return None
    return TraceParent(trace_id=found.group(1), span_id=found.group(2))


def current_parent() -> TraceParent | None:
    """The caller's trace parent: the one set for this call, else `TRACEPARENT` from the environment."""
    return parse_traceparent(TRACE_PARENT.get()) or parse_traceparent(os.environ.get("TRACEPARENT"))


def new_trace_id() -> str:
    """A random 128-bit trace id (32 hex digits)."""
    return os.urandom(16).hex()


def new_span_id() -> str:
    """A random 64-bit span id (16 hex digits)."""
    return os.urandom(8).hex()


def format_traceparent(trace_id: str, span_id: str) -> str:
    """The `traceparent` header value for a span (sampled)."""
    return f"00-{trace_id}-{span_id}-01"
