"""Results of the run-store operations: list_runs, cancel_run, diff_runs, get_artifact, prune_runs."""

from __future__ import annotations

from typing import Literal

import msgspec

from .base import Part, Result
from .contracts import CoverageChange
from .run import RunKind, RunResult, RunStatus, Totals

__all__ = [
    "ArtifactContent",
    "CancelResult",
    "CaseChange",
    "OperationCall",
    "OperationLog",
    "PruneResult",
    "RunDiff",
    "RunLine",
    "RunList",
]


class RunLine(Part, frozen=True, kw_only=True):
    """One run, compactly."""

    run_id: str
    kind: RunKind
    status: RunStatus
    started_at: str
    duration: int
    totals: Totals
    summary: str
    resumed_from: str | None = None
    test_id: str | None = None


class RunList(Result, frozen=True, kw_only=True):
    """Runs, newest first. Pass `nextBefore` as `before` for the page after."""

    runs: list[RunLine]
    next_before: str | None = None


class CancelResult(Result, frozen=True, kw_only=True):
    """`cancelled` is true when this call stopped a live run; a finished run comes back unchanged."""

    cancelled: bool
    run: RunResult


class CaseChange(Part, frozen=True, kw_only=True):
    """A case whose outcome differs between two runs (or that failed in both)."""

    id: str
    base: str | None = None
    head: str | None = None
    cause_changed: bool | None = None
    base_cause: str | None = None
    head_cause: str | None = None


class RunDiff(Result, frozen=True, kw_only=True):
    """What changed from `base` to `head`, per case, and each contract's coverage (`contracts`).

    A case that a run carries (it did not run it: a resumed run, `affected=True`) counts with the
    verdict it carries. `notRerun` names the cases `head` did not run again and whose verdict it
    carries from `base` (they count as unchanged): between a run and its resume, those that passed.
    """

    base: str
    head: str
    newly_failing: list[CaseChange]
    fixed: list[CaseChange]
    still_failing: list[CaseChange]
    added: list[CaseChange]
    removed: list[CaseChange]
    unchanged: int
    summary: str
    not_rerun: list[str] = msgspec.field(default_factory=list)
    contracts: list[CoverageChange] = msgspec.field(default_factory=list)


class ArtifactContent(Result, frozen=True, kw_only=True):
    """A file of a run. `content` is UTF-8 text, or base64 when `encoding` is base64.

    `sha256` and `size` are over the whole raw file; `content` holds at most `limit` bytes from
    `offset` (`nextOffset` is set when more remains).
    """

    run_id: str
    name: str
    content_type: str
    sha256: str
    size: int
    encoding: Literal["utf-8", "base64"]
    content: str
    offset: int = 0
    next_offset: int | None = None


class PruneResult(Result, frozen=True, kw_only=True):
    """The runs deleted (with their folders) and how many remain."""

    deleted: list[str]
    remaining: int


class OperationCall(Part, frozen=True, kw_only=True):
    """One call of an operation, from any face."""

    operation: str
    started_at: str
    duration: int
    outcome: str
    error_code: str | None = None
    run_id: str | None = None


class OperationLog(Result, frozen=True, kw_only=True):
    """The newest operation calls on the project, newest first."""

    calls: list[OperationCall]
