"""The rows the store reads and writes, as Structs (snake_case; the store's own vocabulary)."""

from __future__ import annotations

import msgspec

__all__ = ["ArtifactRow", "CaseRow", "LatestCaseRow", "NewRun", "OperationRow", "RunRow", "RunSummaryRow"]


class NewRun(msgspec.Struct, frozen=True, kw_only=True):
    """What a run adds to its request when it is opened: its id, start, the suites it selected,
    the hashes that tell the same request again, its trace, and the cases it expects."""

    run_id: str
    started_at: str
    suites: tuple[str, ...] = ()
    config_hash: str | None = None
    request_hash: str | None = None
    trace_id: str | None = None
    total_cases: int = 0


class CaseRow(msgspec.Struct, frozen=True, kw_only=True):
    """One case's outcome in one run. `cause` is a short signature of why it failed.

    `touches`: what the case touched (`service:orders`, `mock:payments`, `page:…`, `all`), None
    when it is not known (a run recorded before touches were, or rebuilt from its files).
    """

    case_id: str
    suite: str
    name: str
    status: str
    duration_ms: int
    attempts: int = 1
    passed_on_retry: bool = False
    cause: str | None = None
    touches: list[str] | None = None


class LatestCaseRow(CaseRow, frozen=True, kw_only=True):
    """A case in the newest run that ran it, with that run's start and inputs (JSON, or None)."""

    run_id: str
    started_at: str
    inputs: str | None = None


class ArtifactRow(msgspec.Struct, frozen=True, kw_only=True):
    """A file of a run, under `.preflight/runs/<runId>/`."""

    name: str
    size: int
    content_type: str
    sha256: str


class RunSummaryRow(msgspec.Struct, frozen=True, kw_only=True):
    """The columns `list_runs` shows."""

    run_id: str
    kind: str
    status: str
    started_at: str
    duration_ms: int
    total: int
    passed: int
    failed: int
    skipped: int
    summary: str
    resumed_from: str | None = None
    test_id: str | None = None


class RunRow(RunSummaryRow, frozen=True, kw_only=True):
    """Everything the store keeps about one run (the result JSON included): its summary columns and the rest."""

    finished_at: str | None
    suites: list[str]
    config_hash: str | None
    request_hash: str | None
    git_commit: str | None
    git_dirty: bool | None
    idempotency_key: str | None
    owner_pid: int | None
    owner_host: str | None
    heartbeat_at: float | None
    cancel_requested: bool
    phase: str | None
    done_cases: int
    total_cases: int
    trace_id: str | None
    result: bytes | None
    error: bytes | None
    inputs: str | None = None


class OperationRow(msgspec.Struct, frozen=True, kw_only=True):
    """One call of an operation, on any face."""

    operation: str
    started_at: str
    duration_ms: int
    outcome: str
    error_code: str | None = None
    run_id: str | None = None
    pid: int | None = None
