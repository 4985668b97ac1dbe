"""`report.html`: the page of a run, written with its other files and found again for a run id.

The page is rendered from the run's result (its failures through the project's redaction policy),
its event log, and the previous run of the same selection of suites (for what changed). It is
written into the run's folder when the run ends, listed with its digest like every other file.
A run recorded before pages existed, or one still going, gets its page rendered on demand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.store import RunStore
from preflight_sdk.suites.events import Event

from .report_html import PreviousRun, render_report

if TYPE_CHECKING:
    from .supervisor import RunSupervisor

__all__ = ["REPORT_HTML", "previous_run", "read_events", "report_of", "report_writer"]

REPORT_HTML = "report.html"

Writer = Callable[[Path, RunResult, Sequence[Event]], list[Path]]


def previous_run(store: RunStore, run_id: str, suites: Sequence[str]) -> PreviousRun | None:
    """The previous finished run of the same suites, with its cases' statuses (blocking)."""
    found = store.previous_run(run_id, suites)
    if found is None:
        return None
    other, started, statuses = found
    return PreviousRun(run_id=other, started_at=started, statuses=statuses)


def report_writer(previous: PreviousRun | None, redactor: Redactor) -> Writer:
    """What `write_artifacts` calls to write the page into the run's folder (blocking)."""

    def write(folder: Path, result: RunResult, events: Sequence[Event]) -> list[Path]:
        target = folder / REPORT_HTML
        target.write_text(
            render_report(result, events, previous=previous, redactor=redactor), encoding="utf-8"
        )
        return [target]

    return write


def read_events(path: Path) -> list[Event]:
    """The events of an events.ndjson file (lines that do not decode are skipped; none when missing)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    decoding.ready(Event)
    decoder = msgspec.json.Decoder(Event)
    events = []
    for line in data.splitlines():
        try:
            events.append(decoder.decode(line))
        except msgspec.DecodeError:
            continue
    return events


async def report_of(sup: RunSupervisor, run_id: str, *, write: bool = False) -> tuple[str, Path | None]:
    """The page of run `run_id` (RUN_NOT_FOUND when unknown) and its file, when there is one.

    A finished run's own page is read from its folder. Otherwise the page is rendered now; with
    `write` it is also saved there (a run recorded before pages existed, or the page of a run as
    it stands, which its own page replaces when it ends).
    """
    result = await sup.get(run_id, None)
    store = await sup.store()
    folder = store.runs_folder(run_id)
    target = folder / REPORT_HTML
    if result.finished and await anyio.Path(target).is_file():
        return await anyio.Path(target).read_text(encoding="utf-8"), target
    loaded = await sup.env.ensure_loaded(persist=False)
    redactor = getattr(loaded, "redactor", None) or DEFAULT
    suites = result.selected_suites or [s.id for s in result.suites]
    previous = await sup.call(previous_run, store, run_id, suites)
    events = await anyio.to_thread.run_sync(read_events, folder / "events.ndjson")
    page = await anyio.to_thread.run_sync(
        lambda: render_report(result, events, previous=previous, redactor=redactor)
    )
    if write:
        await anyio.Path(folder).mkdir(parents=True, exist_ok=True)
        await anyio.Path(target).write_text(page, encoding="utf-8")
        return page, target
    return page, None
