"""UIDs of ADRs and tasks: `YYYYMMDDTHHMMSS.mmmZ-XXXX` (UTC time, 4 uppercase hex characters).

The UID is the only identity of an artifact, and the text order of UIDs is their time order. A
random suffix alone would not keep that promise inside one millisecond (two UIDs of the same
millisecond would sort by chance), so `next_uid` is monotonic: given the highest UID already in
the repository (`floor`), it returns a strictly greater one, raising the suffix, or the time by
one millisecond when the suffix space is used up. The legacy form without suffix is accepted
when reading and sorts before every suffixed UID of the same millisecond.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..errors import invalid_input, parse_error
from .markdown import comment

__all__ = [
    "UID_RE",
    "format_uid",
    "header_uid",
    "is_uid",
    "max_uid",
    "next_uid",
    "parse_uid",
    "random_suffix",
    "utc",
]

UID_RE = re.compile(r"^(\d{8}T\d{6}\.\d{3}Z)(?:-([0-9A-Fa-f]{4}))?$")
_SUFFIX_RE = re.compile(r"^[0-9A-Fa-f]{4}$")
_TIME_FORMAT = "%Y%m%dT%H%M%S"
_MAX_SUFFIX = 0xFFFF
# How far above the floor a same-millisecond suffix may land: random, but never near overflow.
_STEP = 0x100


def utc(moment: datetime) -> datetime:
    """Return `moment` in UTC (a naive datetime is taken to be UTC already)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def random_suffix() -> str:
    """Return 4 random uppercase hex characters (the default UID suffix source)."""
    return secrets.token_hex(2).upper()


def is_uid(text: str) -> bool:
    """Return whether `text` is a UID (suffixed or legacy form)."""
    return UID_RE.match(text) is not None


def header_uid(text: str, path: Path) -> str:
    """Return the UID an ADR or task file names in its `<!-- UID: ... -->` header.

    Raises:
        ConfigError: CONFIG_INVALID when the header is missing or malformed.
    """
    uid = comment(text, "UID")
    if uid is None or not is_uid(uid):
        raise parse_error(path, f"missing or malformed `<!-- UID: ... -->` header (found {uid!r})", line=1)
    return uid


def format_uid(moment: datetime, suffix: int) -> str:
    """Return the UID of `moment` (to the millisecond, UTC) with a 4-hex `suffix`."""
    when = utc(moment)
    return f"{when.strftime(_TIME_FORMAT)}.{when.microsecond // 1000:03d}Z-{suffix:04X}"


def parse_uid(uid: str) -> tuple[datetime, int]:
    """Return the time and suffix of a UID; the legacy form has suffix -1."""
    match = UID_RE.match(uid)
    if match is None:
        raise ValueError(f"not a UID: {uid!r}")
    stamp, suffix = match.groups()
    moment = datetime.strptime(stamp[:15], _TIME_FORMAT).replace(tzinfo=UTC)
    moment += timedelta(milliseconds=int(stamp[16:19]))
    return moment, int(suffix, 16) if suffix else -1


def max_uid(uids: Iterable[str | None]) -> str | None:
    """Return the highest of the valid UIDs given (text order), or None."""
    valid = [uid.upper() for uid in uids if uid and is_uid(uid)]
    return max(valid) if valid else None


def next_uid(now: datetime, floor: str | None, suffix: Callable[[], str] = random_suffix) -> str:
    """Return a new UID for `now` that sorts strictly after `floor`.

    Args:
        now: the current time (any timezone; naive means UTC).
        floor: the highest UID that already exists, or None.
        suffix: returns 4 hex characters; random by default, fixed only in tests.

    Raises:
        InputError: INVALID_INPUT when `suffix` returns something other than 4 hex characters.
    """
    raw = suffix()
    if not _SUFFIX_RE.match(raw):
        raise invalid_input(
            f"UID suffix {raw!r} is not 4 hex characters",
            hint="Pass a uid_suffix callable that returns e.g. 'A3F9'.",
        )
    random_part = int(raw, 16)
    candidate = format_uid(now, random_part)
    if floor is None or candidate > floor.upper():
        return candidate
    floor_time, floor_suffix = parse_uid(floor)
    if floor_suffix < _MAX_SUFFIX:
        span = min(_STEP, _MAX_SUFFIX - floor_suffix)
        return format_uid(floor_time, floor_suffix + 1 + random_part % span)
    return format_uid(floor_time + timedelta(milliseconds=1), random_part)
