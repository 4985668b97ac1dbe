"""Renderers for the result types: importing this module registers them with `renders`.

One module per result family keeps each small: `run_view` (RunResult), `lifecycle_view` (init,
build, setup, status, logs, clean) and `mocks_view` (mock_requests), `runs_view` (the run store's lists, diffs and files).
`verify` and `clarify`
register their own renderers next to their results.
"""

from __future__ import annotations

from . import lifecycle_view, mocks_view, run_view, runs_view

__all__ = ["lifecycle_view", "mocks_view", "run_view", "runs_view"]
