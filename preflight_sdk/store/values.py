"""The values a run's YAML cases saved (`save:`), kept with the run so `resume_run` gives them back.

A value the redaction policy would hide (a secret name, or a secret inside it) is stored as
redacted, without the value: a resumed case that needs it re-runs the case that saved it.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .runs import RunStore

__all__ = ["SavedValue", "read_values", "write_values"]


class SavedValue(msgspec.Struct, frozen=True, kw_only=True):
    """One `save:` of one case: the name, and its JSON value (None when redacted)."""

    suite: str
    case_id: str
    name: str
    value: str | None  # JSON text
    redacted: bool = False


def write_values(store: RunStore, run_id: str, values: Sequence[SavedValue]) -> None:
    """Keep a run's saved values, in the order they were saved (blocking)."""
    if not values:
        return
    with store.db.write() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO run_values (run_id, seq, suite, case_id, name, value, redacted) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(run_id, i, v.suite, v.case_id, v.name, v.value, int(v.redacted)) for i, v in enumerate(values)],
        )


def read_values(store: RunStore, run_id: str) -> list[SavedValue]:
    """A run's saved values, in the order they were saved (blocking)."""
    rows = store.db.select(
        "SELECT suite, case_id, name, value, redacted FROM run_values WHERE run_id = ? ORDER BY seq",
        (run_id,),
    )
    return [SavedValue(**{**r, "redacted": bool(r["redacted"])}) for r in rows]
