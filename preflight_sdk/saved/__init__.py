"""Saved tests and saved suites: an agent's or a person's tests kept in the project's store.

A saved test is one case of the YAML test grammar; a saved suite lists saved test ids. Both run
as durable runs (the run store's RunResult) through the YAML runner, and go out to (or come in
from) ordinary test files in the project.

May import: `runs/`, `suites/`, `store/`, `config/`, and the core.
"""

from __future__ import annotations

from .exchange import export_tests, import_tests
from .service import ADHOC_SUITE, SavedTests

__all__ = ["ADHOC_SUITE", "SavedTests", "export_tests", "import_tests"]
