"""The store's schema, as numbered migrations (`PRAGMA user_version` counts those applied).

Append a migration; never edit one that has shipped. Each runs in one `BEGIN IMMEDIATE`
transaction, so a process that finds the file half-way through another's migration waits.
"""

from __future__ import annotations

__all__ = ["APPLICATION_ID", "MIGRATIONS", "OUR_TABLES"]

# `PRAGMA application_id`: "PFLT". A database with another id belongs to another program.
APPLICATION_ID = 0x50464C54

MIGRATIONS: list[str] = [
    # 1: runs, their cases and artifacts, and the operation log.
    """
    CREATE TABLE runs (
        run_id           TEXT PRIMARY KEY,
        kind             TEXT NOT NULL,
        status           TEXT NOT NULL,
        started_at       TEXT NOT NULL,
        finished_at      TEXT,
        duration_ms      INTEGER NOT NULL DEFAULT 0,
        total            INTEGER NOT NULL DEFAULT 0,
        passed           INTEGER NOT NULL DEFAULT 0,
        failed           INTEGER NOT NULL DEFAULT 0,
        skipped          INTEGER NOT NULL DEFAULT 0,
        summary          TEXT NOT NULL DEFAULT '',
        suites           TEXT NOT NULL DEFAULT '[]',
        config_hash      TEXT,
        request_hash     TEXT,
        git_commit       TEXT,
        git_dirty        INTEGER,
        idempotency_key  TEXT,
        resumed_from     TEXT,
        test_id          TEXT,
        owner_pid        INTEGER,
        owner_host       TEXT,
        heartbeat_at     REAL,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        phase            TEXT,
        done_cases       INTEGER NOT NULL DEFAULT 0,
        total_cases      INTEGER NOT NULL DEFAULT 0,
        trace_id         TEXT,
        result           BLOB,
        error            BLOB
    );
    CREATE INDEX runs_by_status ON runs(status, run_id);
    CREATE INDEX runs_by_kind ON runs(kind, run_id);
    CREATE INDEX runs_by_test ON runs(test_id, run_id);
    CREATE UNIQUE INDEX runs_by_idempotency_key ON runs(idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE TABLE run_suites (
        run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        suite  TEXT NOT NULL,
        PRIMARY KEY (suite, run_id)
    ) WITHOUT ROWID;
    CREATE TABLE cases (
        run_id          TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        case_id         TEXT NOT NULL,
        suite           TEXT NOT NULL,
        name            TEXT NOT NULL,
        status          TEXT NOT NULL,
        duration_ms     INTEGER NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 1,
        passed_on_retry INTEGER NOT NULL DEFAULT 0,
        cause           TEXT,
        PRIMARY KEY (run_id, case_id)
    ) WITHOUT ROWID;
    CREATE INDEX cases_by_case ON cases(case_id, run_id);
    CREATE TABLE artifacts (
        run_id       TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        name         TEXT NOT NULL,
        size         INTEGER NOT NULL,
        content_type TEXT NOT NULL,
        sha256       TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    ) WITHOUT ROWID;
    CREATE TABLE operations (
        id          INTEGER PRIMARY KEY,
        operation   TEXT NOT NULL,
        started_at  TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        outcome     TEXT NOT NULL,
        error_code  TEXT,
        run_id      TEXT,
        pid         INTEGER
    );
    CREATE INDEX operations_by_time ON operations(started_at)
    """,
    # 2: saved tests (one case of the YAML test grammar each) and saved suites (lists of test ids).
    """
    CREATE TABLE saved_tests (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        description TEXT,
        tags        TEXT NOT NULL DEFAULT '[]',
        definition  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE saved_test_tags (
        test_id TEXT NOT NULL REFERENCES saved_tests(id) ON DELETE CASCADE,
        tag     TEXT NOT NULL,
        PRIMARY KEY (tag, test_id)
    ) WITHOUT ROWID;
    CREATE TABLE saved_suites (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        test_ids   TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    # 3: a suite's recorded cases, newest first (what a sharded run splits its suites by).
    """
    CREATE INDEX cases_by_suite ON cases(suite, run_id)
    """,
    # 4: the values a run's YAML cases saved (`save:`), so resuming the run gives them back; a value
    # the redaction policy would hide is kept as redacted only (value NULL).
    """
    CREATE TABLE run_values (
        run_id   TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        seq      INTEGER NOT NULL,
        suite    TEXT NOT NULL,
        case_id  TEXT NOT NULL,
        name     TEXT NOT NULL,
        value    TEXT,
        redacted INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID
    """,
    # 5: what each case touched (services, mocks, pages: a JSON list, NULL when unknown), the inputs
    # a run ran on (e2e.yaml, engine, each service's container, each mock's routes, each suite's
    # files: JSON), and each case's newest run, so a run finds what an edit can affect in one read.
    """
    ALTER TABLE cases ADD COLUMN touches TEXT;
    ALTER TABLE runs ADD COLUMN inputs TEXT;
    CREATE TABLE case_latest (
        case_id TEXT PRIMARY KEY,
        suite   TEXT NOT NULL,
        run_id  TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE
    ) WITHOUT ROWID;
    CREATE INDEX case_latest_by_suite ON case_latest(suite);
    CREATE INDEX case_latest_by_run ON case_latest(run_id);
    INSERT INTO case_latest (case_id, suite, run_id)
        SELECT case_id, suite, MAX(run_id) FROM cases GROUP BY case_id
    """,
]

OUR_TABLES = frozenset(
    {
        "runs",
        "run_suites",
        "cases",
        "artifacts",
        "operations",
        "sqlite_sequence",
        "saved_tests",
        "saved_test_tags",
        "saved_suites",
        "run_values",
        "case_latest",
    }
)
