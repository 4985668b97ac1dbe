"""The one duration parser of the project, and the `since` parser built on it.

Durations are `"500ms"`, `"5s"`, `"1.5s"`, `"2m"`, `"1h"` (units may be combined: `"1m30s"`), or a
number of milliseconds (`1500`). Everything returns seconds as a float, the unit anyio uses.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from .errors import InputError

__all__ = ["MAX_WAIT", "Duration", "format_duration", "parse_duration", "parse_since", "wait_seconds"]

MAX_WAIT = 24 * 3600.0
"""The longest `wait` an operation accepts (24h); a longer one is INVALID_INPUT on every face."""

Duration = str | int | float
"""A duration as written in e2e.yaml, test files and tool arguments."""

_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)")
_WHOLE = re.compile(r"^(?:\s*\d+(?:\.\d+)?\s*(?:ms|s|m|h|d))+\s*$")


def parse_duration(value: Duration, *, field: str = "duration") -> float:
    """Return `value` in seconds.

    Args:
        value: `"500ms"`, `"5s"`, `"2m"`, `"1h"`, `"1m30s"`, or an int/float number of milliseconds
            (also as a digit-only string).
        field: the name used in the error message.

    Raises:
        InputError: `INVALID_INPUT` when the value is not a duration or is negative.
    """
    if isinstance(value, bool):
        raise _bad(field, value)
    if isinstance(value, int | float):
        seconds = float(value) / 1000.0
    elif isinstance(value, str):
        text = value.strip().lower()
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text) / 1000.0
        elif _WHOLE.match(text):
            seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in _PART.findall(text))
        else:
            raise _bad(field, value)
    else:
        raise _bad(field, value)
    # NaN, infinities and negatives would turn into timeouts that never or always fire.
    if not math.isfinite(seconds) or seconds < 0:
        raise _bad(field, value)
    return seconds


def wait_seconds(wait: str | int | None) -> float | None:
    """An operation's `wait` in seconds (None: to the end); INVALID_INPUT outside 0s..24h."""
    if wait is None:
        return None
    seconds = parse_duration(wait, field="wait")
    if not 0 <= seconds <= MAX_WAIT:
        raise InputError(f"wait must be between 0s and 24h, not {wait!r}", hint='e.g. wait="0s" or wait="2m"')
    return seconds


def parse_since(value: str | datetime, *, now: datetime | None = None) -> datetime:
    """Return the moment `value` names, as an aware UTC datetime.

    Args:
        value: a duration back from now (`"30s"`, `"5m"`, `"2h"`) or an ISO 8601 timestamp
            (`"2026-11-22T10:00:00Z"`; a naive one is taken as UTC).
        now: the reference moment (defaults to the current time).
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    reference = now or datetime.now(UTC)
    text = value.strip()
    try:
        seconds = parse_duration(text, field="since")
    except InputError:
        pass
    else:
        return reference - timedelta(seconds=seconds)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"`since` must be a duration such as '30s', '5m', '2h' or an ISO 8601 time; got {value!r}",
            hint="use '5m' for the last five minutes, or a timestamp like 2026-11-22T10:00:00Z",
            details={"field": "since", "value": value},
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def format_duration(seconds: float) -> str:
    """Return a short human form: `"850ms"`, `"2.4s"`, `"3m05s"`."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def _bad(field: str, value: object) -> InputError:
    return InputError(
        f"`{field}` must be a duration like '500ms', '5s', '2m', '1h' or a number of milliseconds; "
        f"got {value!r}",
        hint="write durations as a number with a unit (ms, s, m, h) or as whole milliseconds",
        details={"field": field, "value": repr(value)},
    )
