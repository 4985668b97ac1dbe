"""Text and HTML of recorded mocks: which recorded or replayed in a run, and `check_mock`'s drift.

A run's page and summary say, per mock, `recorded` (from which upstream, how many calls, what
the route file gained) or `replayed` (how many recorded routes, recorded when). A route that
answered a failing case's request says it was recorded, and when (see `recorded_note`).
"""

from __future__ import annotations

from preflight_sdk.core.results.recording import MockCheckResult, MockRecording, RouteCheck

from ..kit import MARKS, badge, esc, plural, row, shorten, table, wrap
from . import renders

__all__ = ["recorded_note", "recording_html", "recording_lines", "render_mock_check"]


def recorded_note(recorded: str | None) -> str:
    """` (recorded 2026-11-30)`: the note beside a route that was recorded; empty for a hand-written one."""
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
        for label in r.added[:5]:
            lines.append(f"    + {shorten(label, 120)}")
        for label in r.replaced[:5]:
            lines.append(f"    ~ {shorten(label, 120)}")
        if r.error is not None:
            lines.append(f"    ! [{r.error.code}] {shorten(r.error.message, 200)}")
    return lines


def recording_html(recordings: list[MockRecording]) -> str:
    """The same as a small table (class `pf-recordings`, a row `pf-recording-<mode>` per mock)."""
    if not recordings:
        return ""
    rows = []
    for r in recordings:
        changes = "".join(f"<div>+ {esc(a)}</div>" for a in r.added) + "".join(
            f"<div>~ {esc(a)}</div>" for a in r.replaced
        )
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


def _check_line(route: RouteCheck) -> str:
    mark = {"ok": MARKS["passed"], "drift": MARKS["failed"], "error": "!", "skipped": "-"}[route.status]
    first = route.differences[0] if route.differences else None
    what = route.reason or ""
    if first is not None:
        where = f" {first.path}" if first.path else ""
        what = f"{first.kind}{where}: route {first.expected!r}, upstream {first.actual!r}"
        if len(route.differences) > 1:
            what += f" (+{len(route.differences) - 1} more)"
    return f"{mark} {route.route}  {route.status}  {shorten(what, 140)}"


@renders(MockCheckResult)
def render_mock_check(result: MockCheckResult) -> tuple[str, str]:
    """`(text, html)` for check_mock: the summary, then one line per route."""
    text = "\n".join([result.summary, *(_check_line(r) for r in result.routes)])
    rows = (
        row(
            [
                badge(
                    "passed" if r.status == "ok" else "failed" if r.status == "drift" else "skipped", r.status
                ),
                f"<code>{esc(r.route)}</code> <small>{esc(r.source)}</small>",
                "".join(
                    f"<div>{esc(d.kind)} <code>{esc(d.path or '')}</code>: "
                    f"{esc(repr(d.expected))} → {esc(repr(d.actual))}</div>"
                    for d in r.differences
                )
                or esc(r.reason or ""),
            ],
            cls=f"pf-check-{r.status}",
        )
        for r in result.routes
    )
    html = f"<div><b>{esc(result.summary)}</b></div>" + table(["", "route", "differences"], rows)
    return text, wrap(html, cls="pf-mock-check")
