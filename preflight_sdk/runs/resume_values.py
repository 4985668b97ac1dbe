"""The values a run's YAML cases saved: kept with the run, given back when the run is resumed.

A resumed run runs again only the cases that did not pass. The cases it does not run again saved
values the first time (`save:`) that later cases use: those values are read from the store and
handed to the runner, which sets each one where its case would have run. A value the redaction
policy hides was never stored; when a case run again uses it, the case that saved it is run again
too (and, in turn, anything that case needs).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.store.values import SavedValue, read_values, write_values
from preflight_sdk.suites.context import Resumed, RunContext, case_id

if TYPE_CHECKING:
    from preflight_sdk.store import RunStore

    from .supervisor import RunSupervisor

__all__ = ["carry_values", "keep_values"]


async def keep_values(sup: RunSupervisor, store: RunStore, run_id: str, context: RunContext | None) -> None:
    """Store what the run's passing YAML cases saved (a failing store is a warning)."""
    if context is None or not context.saved_values:
        return
    rows = [
        SavedValue(
            suite=v.suite,
            case_id=v.case,
            name=v.name,
            value=None if v.redacted else msgspec.json.encode(v.value, enc_hook=str).decode(),
            redacted=v.redacted,
        )
        for v in context.saved_values
    ]
    await sup.call(write_values, store, run_id, rows)


async def carry_values(
    sup: RunSupervisor, run_id: str, loaded: LoadedConfig, selection: dict[str, set[str]]
) -> Resumed:
    """`selection` (suite → cases to run again) with the values of the cases not run again.

    A case that saved a redacted value used by a case run again joins the selection.
    """
    store = await sup.store()
    values: list[SavedValue] = await sup.call(read_values, store, run_id) or []
    by_suite: dict[str, list[SavedValue]] = {}
    for value in values:
        by_suite.setdefault(value.suite, []).append(value)
    chosen = {suite: set(cases) for suite, cases in selection.items()}
    carried: dict[str, dict[str, list[tuple[str, Any]]]] = {}
    for suite, saved in by_suite.items():
        if suite not in chosen:
            continue
        texts = _case_texts(loaded, suite)
        _rerun_savers_of_redacted(chosen[suite], saved, texts)
        for value in saved:
            if value.case_id in chosen[suite] or value.redacted or value.value is None:
                continue
            carried.setdefault(suite, {}).setdefault(value.case_id, []).append(
                (value.name, msgspec.json.decode(value.value))
            )
    return Resumed(chosen, carried)


def _rerun_savers_of_redacted(chosen: set[str], saved: list[SavedValue], texts: dict[str, str]) -> None:
    """Add to `chosen` each case that saved a redacted value a chosen case uses (until nothing changes)."""
    changed = True
    while changed:
        changed = False
        for value in saved:
            if not value.redacted or value.case_id in chosen:
                continue
            used = re.compile(r"\{\{[^}]*\b" + re.escape(value.name) + r"\b")
            if any(used.search(texts.get(case, "")) for case in chosen):
                chosen.add(value.case_id)
                changed = True


def _case_texts(loaded: LoadedConfig, suite: str) -> dict[str, str]:
    """Each case of a YAML suite as JSON text, by case id (to find the names it uses)."""
    test = loaded.test_files.get(suite)
    if test is None:
        return {}
    taken: set[str] = set()
    return {
        case_id(suite, case.name or "case", taken): msgspec.json.encode(case).decode() for case in test.cases
    }
