"""A run as one page a person can look at: `report.html` in the run's folder.

`render_report` makes the self-contained document (CSS and script inline; no network; it works from
`file://`); `render_fragment` the same view as one element, for a notebook or an MCP Apps view.
The style (`report.css`) and the script (`report.js`) are files of this package.
"""

from __future__ import annotations

from .page import PreviousRun, group_by_cause, render_fragment, render_report
from .page_evidence import embed_full_screenshots
from .timeline import Lane, Mark, Span, Timeline, build_timeline

__all__ = [
    "Lane",
    "Mark",
    "PreviousRun",
    "Span",
    "Timeline",
    "build_timeline",
    "embed_full_screenshots",
    "group_by_cause",
    "render_fragment",
    "render_report",
]
