"""Browser steps (a page of a service opened in the run's Chromium) and Playwright suites.

`host` owns the run's one browser; `step` runs one `browser` step in a context of its own, with
`actions`, `checks` (the page expectations), `watch` (console, failed requests, navigations) and
`evidence` (screenshot, DOM excerpt, trace) beside it; `explain` words its failure.
"""

from __future__ import annotations

from .explain import explain_browser
from .host import BrowserHost
from .step import BrowserRun, run_browser_step

__all__ = ["BrowserHost", "BrowserRun", "explain_browser", "run_browser_step"]
