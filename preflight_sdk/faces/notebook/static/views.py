"""Renderers for the result types: importing this module registers them with `renders`.

One module per result family keeps each small: `run_view` (RunResult), `lifecycle_view` (init,
build, setup, status, logs, clean), `mocks_view` (mock_requests),
`recording_view` (recorded mocks, check_mock), `runs_view` (the run store's
lists, diffs and files), `saved_view` (saved tests and suites), `verify_view` (verify) and
`clarify_view` (clarify, read_architecture).
"""

from __future__ import annotations

from . import (
    clarify_view,
    lifecycle_view,
    mocks_view,
    recording_view,
    run_view,
    runs_view,
    saved_view,
    verify_view,
)

__all__ = [
    "clarify_view",
    "lifecycle_view",
    "mocks_view",
    "recording_view",
    "run_view",
    "runs_view",
    "saved_view",
    "verify_view",
]
