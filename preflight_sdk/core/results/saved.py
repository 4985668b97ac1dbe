"""Results of the saved-test operations: stored tests and suites, their lists, export and import."""

from __future__ import annotations

from typing import Any

import msgspec

from .base import Part, Result
from .run import RunStatus

__all__ = [
    "DeleteResult",
    "ExportResult",
    "ImportResult",
    "StoredSuite",
    "StoredTest",
    "SuiteList",
    "TestLine",
    "TestList",
]


class StoredTest(Result, frozen=True, kw_only=True):
    """A saved test: its id, name, tags and definition (one case of the YAML test grammar)."""

    id: str
    name: str
    test: dict[str, Any]
    tags: list[str]
    description: str | None = None
    created_at: str
    updated_at: str


class TestLine(Part, frozen=True, kw_only=True):
    """A saved test, compactly, with the status of its newest run."""

    id: str
    name: str
    tags: list[str]
    updated_at: str
    last_run_status: RunStatus | None = None
    last_run_id: str | None = None


class TestList(Result, frozen=True, kw_only=True):
    """Saved tests, by id."""

    tests: list[TestLine]


class DeleteResult(Result, frozen=True, kw_only=True):
    """Whether the call deleted something (false when there was nothing to delete)."""

    deleted: bool
    runs_deleted: int = 0


class StoredSuite(Result, frozen=True, kw_only=True):
    """A saved suite: an ordered list of saved test ids, runnable wherever a suite id is."""

    id: str
    name: str
    test_ids: list[str]
    created_at: str
    updated_at: str


class SuiteList(Result, frozen=True, kw_only=True):
    """Saved suites, by id."""

    suites: list[StoredSuite]


class ExportResult(Result, frozen=True, kw_only=True):
    """The test file written, and the e2e.yaml `tests.suites` entry that runs it."""

    path: str
    test_ids: list[str]
    suite_entry: dict[str, str]
    suite_entry_yaml: str


class ImportResult(Result, frozen=True, kw_only=True):
    """The tests saved from a test file (ids made from the case names)."""

    path: str
    saved: list[str]
    warnings: list[str] = msgspec.field(default_factory=list)
