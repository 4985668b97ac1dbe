"""Run ids: ULIDs (48-bit millisecond time + 80 random bits, Crockford base32, 26 characters).

They sort by creation time as text, which `list_runs` relies on, and are unique across processes
without coordination (80 random bits per millisecond), unlike a timestamp plus a few hex digits.
"""

from __future__ import annotations

import os
import re
import time

__all__ = ["RUN_ID_PATTERN", "is_run_id", "new_run_id"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
RUN_ID_PATTERN = r"^[0-9A-HJKMNP-TV-Z]{26}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def new_run_id(now_ms: int | None = None) -> str:
    """Return a new ULID, e.g. `01JDQ8ZK5X7N3V9G2H4M6P8R0T`."""
    moment = int(time.time() * 1000) if now_ms is None else now_ms
    value = (moment << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def is_run_id(text: str) -> bool:
    """Whether `text` has the shape of a run id (it may still name no run)."""
    return bool(_RUN_ID.match(text))
