"""The report's part about recorded mocks: which recorded (and what their route files gained) or replayed."""

from __future__ import annotations

from preflight_sdk.core.results.recording import MockRecording
from preflight_sdk.core.results.run import RunResult

from .evidence import esc

__all__ = ["recorded_note", "recordings_html"]


def recorded_note(recorded: str | None) -> str:
    """`<small>recorded 2026-11-30 10:00</small>` beside a recorded route; empty for a hand-written one."""
    return (
        f' <small class="pfr-recorded">recorded {esc(recorded[:16].replace("T", " "))}</small>'
        if recorded
        else ""
    )


def _row(r: MockRecording) -> str:
    if r.mode == "replayed":
        what = f"replayed {r.routes} recorded route(s) from <code>{esc(r.file)}</code>{recorded_note(r.recorded_at)}"
    else:
        what = f"recorded {r.exchanges} call(s) from <code>{esc(r.upstream or '?')}</code>"
        if r.written:
            what += (
                f"; {r.routes} route(s) written to <code>{esc(r.file)}</code>: {len(r.added)} added, "
                f"{len(r.replaced)} replaced, {r.unchanged} unchanged, {r.kept} kept"
            )
        elif r.error is None:
            what += "; nothing written"
        if r.failed:
            what += f"; {r.failed} call(s) the upstream did not answer"
    changes = "".join(f"<li>added <code>{esc(a)}</code></li>" for a in r.added)
    changes += "".join(f"<li>replaced <code>{esc(a)}</code></li>" for a in r.replaced)
    error = f'<p class="pfr-error">[{esc(r.error.code)}] {esc(r.error.message)}</p>' if r.error else ""
    listed = f"<ul>{changes}</ul>" if changes else ""
    return (
        f'<tr class="pfr-recording-{esc(r.mode)}"><td><b>{esc(r.mock)}</b></td><td>{esc(r.mode)}</td>'
        f"<td>{what}{listed}{error}</td></tr>"
    )


def recordings_html(result: RunResult) -> str:
    """A table of the mocks that recorded or replayed in the run (empty when none did)."""
    if not result.recordings:
        return ""
    rows = "".join(_row(r) for r in result.recordings)
    return (
        '<table class="pfr-recordings"><thead><tr><th>mock</th><th>routes</th><th>what happened</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )
