"""A run's page (its report.html) inline in a notebook: the same view as in the browser.

Inside a Jupyter kernel a test run shows its page, not the plain tables: the page's own markup,
style and script as one element (every style rule is scoped under `.pfr`, so the notebook around
it is untouched, and the script only adds search, filters and keys). A page larger than
`INLINE_LIMIT` is shown in its compact variant (every failure in full, the passing rows and the
timeline's case bars cut), rendered from the result and the run's event log. The text form stays
the run's terminal summary, for where HTML is not shown.
"""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.core.results.run import RunResult
from preflight_sdk.runs.report import read_events
from preflight_sdk.runs.report_html import embed_full_screenshots, render_fragment
from preflight_sdk.runs.report_html.page import asset

__all__ = ["INLINE_LIMIT", "report_html"]

INLINE_LIMIT = 600_000  # bytes of page shown whole in a notebook output; past it, the compact variant
# Inside a notebook the page's navigation scrolls with it (a sticky bar would ride over the cells).
_INLINE_CSS = ".pfr .pfr-nav{position:static}"


def _file(result: RunResult, name: str) -> Path | None:
    path = next((a.path for a in result.artifacts if a.name == name), None)
    return Path(path) if path else None


def report_html(result: RunResult) -> str | None:
    """The page of a test run as one element to show inline, or None (not a test run, still going)."""
    if result.kind != "test" or not result.finished:
        return None
    page = _file(result, "report.html")
    if page is not None:
        try:
            text = page.read_text(encoding="utf-8") if page.stat().st_size <= INLINE_LIMIT else None
        except OSError:
            text = None
        if text is not None and "<body>" in text and "</body>" in text:
            body = text.split("<body>", 1)[1].rsplit("</body>", 1)[0]
            body = embed_full_screenshots(body, result)  # a notebook cannot follow the run's relative links
            return f"<style>{asset('report.css')}{_INLINE_CSS}</style>{body}"
    events_file = _file(result, "events.ndjson")
    events = read_events(events_file) if events_file is not None else []
    fragment = render_fragment(result, events, compact=page is not None or result.totals.total > 300)
    return embed_full_screenshots(fragment, result).replace("</style>", f"{_INLINE_CSS}</style>", 1)
