"""What a run did with the environment before its suites: a line for the environment (set up by
which run, how many runs it served, reset or not) and one short line per service (built,
started, recreated, reused, reset and how), with why, and the configuration's warnings (a
setting that hands a container the host). Bounded: reasons are shortened."""

from __future__ import annotations

from preflight_sdk.core.results.lifecycle import SetupResult

from ..kit import columns, esc, row, shorten, table

__all__ = ["environment_html", "environment_lines"]

_REASON = 90


def environment_lines(setup: SetupResult | None) -> list[str]:
    """The environment's line, then a line per service acted on (name, what was done, why) and
    one line naming the services reused as they were."""
    if setup is None or setup.network is None:
        return []
    rows = [
        [s.name, s.done, shorten(s.reason or "", _REASON)] for s in setup.services if s.action != "reused"
    ]
    reused = [s.name for s in setup.services if s.action == "reused"]
    tail = [f"  reused: {shorten(', '.join(reused), _REASON)}"] if reused else []
    warned = [f"warning: {shorten(w, 300)}" for w in setup.warnings]
    return [shorten(setup.environment_line(), 2 * _REASON), *columns(rows), *tail, *warned]


def environment_html(setup: SetupResult | None) -> str:
    """The same as a small table (class `pf-environment`, a row `pf-setup-<action>` per service)."""
    if setup is None or setup.network is None:
        return ""
    rows = (
        row(
            [f"<b>{esc(s.name)}</b>", esc(s.done), esc(shorten(s.reason or "", _REASON))],
            cls=f"pf-setup-{s.action or 'started'}",
        )
        for s in setup.services
    )
    listing = table(["service", "before the suites", "why"], rows)
    summary = esc(shorten(setup.environment_line(), 2 * _REASON))
    warned = "".join(
        f'<div class="pf-warning" style="color:#9a6700">{esc(shorten(w, 300))}</div>' for w in setup.warnings
    )
    return f'<details class="pf-environment"><summary>{summary}</summary>{listing}</details>{warned}'
