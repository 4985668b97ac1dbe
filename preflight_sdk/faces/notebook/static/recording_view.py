"""Text and HTML of recorded mocks: which recorded or replayed in a run, and `check_mock`'s drift.

A run's page and summary say, per mock, `recorded` (from which upstream, how many calls, what
the route file gained) or `replayed` (how many recorded routes, recorded when). A route that
answered a failing case's request says it was recorded, and when (see `recorded_note`).
"""

from __future__ import annotations

from preflight_sdk.core.results.recording import Difference, MockCheckResult, MockRecording, RouteCheck

from ..kit import MARKS, badge, esc, plural, row, shorten, table, wrap
from . import renders

__all__ = ["difference_text", "recorded_note", "recording_html", "recording_lines", "render_mock_check"]


def recorded_note(recorded: str | None) -> str:
    """` (recorded 2026-11-30 10:00)`: the note beside a recorded route; empty for a hand-written one."""
    return f" (recorded {recorded[:16].replace('T', ' ')})" if recorded else ""


def _what(r: MockRecording) -> str:
    if r.mode == "replayed":
        return f"replayed {plural(r.routes, 'recorded route')}{recorded_note(r.recorded_at)}"
    parts = [f"recorded {plural(r.exchanges, 'call')} from {r.upstream or '?'}"]
    if r.written:
        changes = [f"{len(r.added)} added", f"{len(r.replaced)} replaced", f"{r.unchanged} unchanged"]
        if r.kept:
            changes.append(f"{r.kept} kept")
        parts.append(f"{plural(r.routes, 'route')} written to {r.file} ({', '.join(changes)})")
    elif r.error is None:
        parts.append("nothing written" + (" (the run did not finish)" if r.exchanges else ""))
    if r.failed:
        parts.append(f"{plural(r.failed, 'call')} unanswered by the upstream")
    return "; ".join(parts)


def recording_lines(recordings: list[MockRecording]) -> list[str]:
    """One line per mock that recorded or replayed, its changes and any error below it."""
    lines: list[str] = []
    for r in recordings:
        lines.append(f"mock {r.mock}: {_what(r)}")
        lines += [f"    + {shorten(label, 120)}" for label in r.added[:5]]
        lines += [f"    ~ {shorten(label, 120)}" for label in r.replaced[:5]]
        if r.error is not None:
            lines.append(f"    ! [{r.error.code}] {shorten(r.error.message, 200)}")
    return lines


def recording_html(recordings: list[MockRecording]) -> str:
    """The same as a small table (class `pf-recordings`, a row `pf-recording-<mode>` per mock)."""
    if not recordings:
        return ""
    rows = []
    for r in recordings:
        changes = "".join(f"<div>+ {esc(a)}</div>" for a in r.added)
        changes += "".join(f"<div>~ {esc(a)}</div>" for a in r.replaced)
        error = (
            f'<div style="color:#cf222e">[{esc(r.error.code)}] {esc(r.error.message)}</div>'
            if r.error
            else ""
        )
        rows.append(
            row(
                [f"<b>{esc(r.mock)}</b>", esc(r.mode), esc(_what(r)) + changes + error],
                cls=f"pf-recording-{r.mode}",
            )
        )
    return table(["mock", "routes", "what happened"], rows, cls="pf-recordings")


def difference_text(d: Difference) -> str:
    """`$.amount: number → string`, `added $.fee (number)`, `status 200 → 404`."""
    if d.kind == "added":
        return f"added {d.path} ({d.actual})"
    if d.kind == "removed":
        return f"removed {d.path} (was {d.expected})"
    if d.kind == "type":
        return f"{d.path}: {d.expected} → {d.actual}"
    label = "status" if d.kind == "status" else "content type"
    return f"{label} {d.expected} → {d.actual}"


def _check_line(route: RouteCheck) -> str:
    mark = {"ok": MARKS["passed"], "drift": MARKS["failed"], "error": "!", "skipped": "-"}[route.status]
    what = route.reason or ""
    if route.differences:
        what = "; ".join(difference_text(d) for d in route.differences[:3])
        if len(route.differences) > 3:
            what += f" (+{len(route.differences) - 3} more)"
    return f"{mark} {route.route}  {route.status}  {shorten(what, 160)}"


def _check_row(r: RouteCheck) -> str:
    state = "passed" if r.status == "ok" else "failed" if r.status == "drift" else "skipped"
    found = "".join(f"<div>{esc(difference_text(d))}</div>" for d in r.differences) or esc(r.reason or "")
    return row(
        [badge(state, r.status), f"<code>{esc(r.route)}</code> <small>{esc(r.source)}</small>", found],
        cls=f"pf-check-{r.status}",
    )


@renders(MockCheckResult)
def render_mock_check(result: MockCheckResult) -> tuple[str, str]:
    """`(text, html)` for check_mock: the summary, then one line per route."""
    text = "\n".join([result.summary, *(_check_line(r) for r in result.routes)])
    html = f"<div><b>{esc(result.summary)}</b></div>" + table(
        ["", "route", "differences"], [_check_row(r) for r in result.routes]
    )
    return text, wrap(html, cls="pf-mock-check")
