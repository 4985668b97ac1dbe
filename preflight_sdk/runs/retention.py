"""Retention: the newest `history.keep` runs (200) within `history.maxAge` (30 days) are kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.durations import parse_duration

if TYPE_CHECKING:
    from preflight_sdk.store import RunStore

    from .supervisor import RunSupervisor

__all__ = ["DEFAULT_KEEP", "DEFAULT_MAX_AGE", "limits", "prune_after_run"]

DEFAULT_KEEP = 200
DEFAULT_MAX_AGE = "30d"


def limits(loaded: LoadedConfig) -> tuple[int, float]:
    """(keep, max age in seconds) from e2e.yaml's `history:` (ArgusAI's `retention` honoured too)."""
    history = loaded.config.history
    keep: int = DEFAULT_KEEP
    age: str | int = DEFAULT_MAX_AGE
    if history is not None:
        if history.retention is not None:
            keep, age = history.retention.max_runs, history.retention.max_age
        keep = history.keep if history.keep is not None else keep
        age = history.max_age if history.max_age is not None else age
    seconds = age / 1000 if isinstance(age, int) else parse_duration(age, field="history.maxAge")
    return keep, seconds


async def prune_after_run(sup: RunSupervisor, store: RunStore, *, keep_ids: Sequence[str]) -> list[str]:
    """Prune by the project's limits, never touching `keep_ids` or a live run."""
    loaded = sup.env.loaded  # as loaded for this run: a file edited meanwhile is the next run's
    if loaded is None:
        return []
    keep, age = limits(loaded)
    deleted = await sup.call(store.prune, keep=keep, max_age_seconds=age, keep_ids=list(keep_ids))
    return list(deleted or [])
