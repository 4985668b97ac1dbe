"""`SavedStore`: saved tests and saved suites of one project, next to its runs (blocking calls).

A saved test keeps its definition (one case of the YAML test grammar) as JSON text, exactly as
it was given; its tags also go to `saved_test_tags` so listing by tag is an index lookup.
Deleting a test deletes its runs through the `RunStore`, so their folders go too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import msgspec

from .database import rows_as_dicts
from .runs import RunStore

__all__ = ["SavedStore", "SavedSuiteRow", "SavedTestRow", "TestLineRow"]

_Row = TypeVar("_Row")


class SavedTestRow(msgspec.Struct, frozen=True, kw_only=True):
    """A saved test as stored."""

    id: str
    name: str
    description: str | None
    tags: list[str]
    definition: dict[str, Any]
    created_at: str
    updated_at: str


class TestLineRow(msgspec.Struct, frozen=True, kw_only=True):
    """A saved test as listed, with its newest run."""

    id: str
    name: str
    tags: list[str]
    updated_at: str
    last_run_id: str | None
    last_run_status: str | None


class SavedSuiteRow(msgspec.Struct, frozen=True, kw_only=True):
    """A saved suite as stored."""

    id: str
    name: str
    test_ids: list[str]
    created_at: str
    updated_at: str


class SavedStore:
    """Saved tests and suites in the store of `runs` (blocking: call from a worker thread)."""

    def __init__(self, runs: RunStore) -> None:
        self.runs = runs
        self.db = runs.db

    # -- tests -----------------------------------------------------------------------------------

    def put_test(self, row: SavedTestRow, *, overwrite: bool) -> tuple[SavedTestRow, bool]:
        """Insert (or, with `overwrite`, replace) a test; return the stored row and whether it existed.

        An existing test without `overwrite` is left unchanged and returned with True. On
        overwrite `createdAt` is kept.
        """

        def write(conn: sqlite3.Connection, created_at: str) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO saved_tests (id, name, description, tags, definition, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.name, row.description, json.dumps(row.tags), json.dumps(row.definition),
                 created_at, row.updated_at),
            )  # fmt: skip
            conn.execute("DELETE FROM saved_test_tags WHERE test_id = ?", (row.id,))
            conn.executemany(
                "INSERT OR IGNORE INTO saved_test_tags (test_id, tag) VALUES (?, ?)",
                [(row.id, tag) for tag in row.tags],
            )

        return self._put("saved_tests", row.id, row.created_at, overwrite, write, self._test)

    def test(self, test_id: str) -> SavedTestRow | None:
        """One saved test, or None."""
        with self.db.read() as conn:
            return self._test(conn, test_id)

    def tests(self, ids: Sequence[str]) -> dict[str, SavedTestRow]:
        """The saved tests among `ids`, by id."""
        out: dict[str, SavedTestRow] = {}
        with self.db.read() as conn:
            for test_id in dict.fromkeys(ids):
                row = self._test(conn, test_id)
                if row is not None:
                    out[test_id] = row
        return out

    def test_lines(self, tag: str | None = None) -> list[TestLineRow]:
        """Every saved test (with `tag`, only those carrying it), by id, with its newest run."""
        sql = (
            "SELECT t.id, t.name, t.tags, t.updated_at, r.run_id AS last_run_id, r.status AS last_run_status "
            "FROM saved_tests t LEFT JOIN runs r ON r.run_id = "
            "(SELECT run_id FROM runs WHERE test_id = t.id ORDER BY run_id DESC LIMIT 1)"
        )
        args: tuple[Any, ...] = ()
        if tag is not None:
            sql += " WHERE t.id IN (SELECT test_id FROM saved_test_tags WHERE tag = ?)"
            args = (tag,)
        sql += " ORDER BY t.id"
        rows = self.db.select(sql, args)
        return [TestLineRow(**{**r, "tags": json.loads(r["tags"])}) for r in rows]

    def test_ids(self) -> list[str]:
        """The ids of every saved test."""
        with self.db.read() as conn:
            return [r[0] for r in conn.execute("SELECT id FROM saved_tests ORDER BY id")]

    def delete_test(self, test_id: str) -> tuple[bool, list[str]]:
        """Delete a test and its runs (with their folders); return whether it existed and the run ids."""
        with self.db.write() as conn:
            run_ids = [r[0] for r in conn.execute("SELECT run_id FROM runs WHERE test_id = ?", (test_id,))]
            deleted = conn.execute("DELETE FROM saved_tests WHERE id = ?", (test_id,)).rowcount > 0
        if run_ids:
            self.runs.delete(run_ids)
        return deleted, run_ids

    @staticmethod
    def _test(conn: sqlite3.Connection, test_id: str) -> SavedTestRow | None:
        r = _by_id(conn, "saved_tests", test_id)
        if r is None:
            return None
        return SavedTestRow(**{**r, "tags": json.loads(r["tags"]), "definition": json.loads(r["definition"])})

    # -- suites ----------------------------------------------------------------------------------

    def put_suite(self, row: SavedSuiteRow, *, overwrite: bool) -> tuple[SavedSuiteRow, bool]:
        """Insert (or replace) a suite, as `put_test` does."""

        def write(conn: sqlite3.Connection, created_at: str) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO saved_suites (id, name, test_ids, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (row.id, row.name, json.dumps(row.test_ids), created_at, row.updated_at),
            )

        return self._put("saved_suites", row.id, row.created_at, overwrite, write, self._suite)

    def suite(self, suite_id: str) -> SavedSuiteRow | None:
        """One saved suite, or None."""
        with self.db.read() as conn:
            return self._suite(conn, suite_id)

    def suites(self) -> list[SavedSuiteRow]:
        """Every saved suite, by id."""
        with self.db.read() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM saved_suites ORDER BY id")]
            return [s for s in (self._suite(conn, i) for i in ids) if s is not None]

    def delete_suite(self, suite_id: str) -> bool:
        """Delete a suite (its tests stay); return whether it existed."""
        with self.db.write() as conn:
            return conn.execute("DELETE FROM saved_suites WHERE id = ?", (suite_id,)).rowcount > 0

    @staticmethod
    def _suite(conn: sqlite3.Connection, suite_id: str) -> SavedSuiteRow | None:
        r = _by_id(conn, "saved_suites", suite_id)
        if r is None:
            return None
        return SavedSuiteRow(**{**r, "test_ids": json.loads(r["test_ids"])})

    # -- both ------------------------------------------------------------------------------------

    def _put(
        self,
        table: str,
        row_id: str,
        created_at: str,
        overwrite: bool,
        write: Callable[[sqlite3.Connection, str], None],
        read: Callable[[sqlite3.Connection, str], _Row | None],
    ) -> tuple[_Row, bool]:
        """Write a row of `table` unless it exists and `overwrite` is off; return the stored row and whether it existed.

        `write` gets the creation time to store: the existing row's when it is replaced.
        """
        with self.db.write() as conn:
            found = conn.execute(f"SELECT created_at FROM {table} WHERE id = ?", (row_id,)).fetchone()
            if found is None or overwrite:
                write(conn, created_at if found is None else found[0])
            stored = read(conn, row_id)
        assert stored is not None
        return stored, found is not None


def _by_id(conn: sqlite3.Connection, table: str, row_id: str) -> dict[str, Any] | None:
    rows = rows_as_dicts(conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)))
    return rows[0] if rows else None
