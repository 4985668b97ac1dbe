"""The operations of the tool group `tests`: tests and suites saved in the project's store, run by
id with their history, and exchanged with YAML test files and other tools' collections.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.durations import wait_seconds
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.core.operations import operation
from preflight_sdk.core.progress import ProgressArg, resolve_sink
from preflight_sdk.core.redaction import DEFAULT
from preflight_sdk.core.results.imports import ImportedTests
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.results.saved import (
    DeleteResult,
    ExportResult,
    ImportResult,
    StoredSuite,
    StoredTest,
    SuiteList,
    TestList,
)

from .base import Operations

__all__ = ["SavedTestOperations"]


class SavedTestOperations(Operations):
    """Saved tests and suites (tool group `tests`): save, run, list, delete, import and export them."""

    @operation(title="Save a test", group="tests")
    async def save_test(
        self,
        id: str,
        name: str,
        test: dict[str, Any],
        description: str | None = None,
        tags: list[str] | None = None,
        overwrite: bool = False,
    ) -> StoredTest:
        """Save an HTTP or browser test in the project's store, to run it later by id and keep its history.

        Args:
            id: a lowercase slug, e.g. "login-works".
            name: a short title (the case's name).
            test: one case of the YAML test grammar (request or browser, expect, save, retry);
                templates as in suites ({{services.api.url}}). A browser test:
                {"browser": {"goto": "/", "actions": [{"click": "#buy"}]}, "expect": {"text": "Thanks"}}.
            description: free text.
            tags: labels to list by.
            overwrite: replace an existing test (createdAt is kept).

        Returns:
            The stored test: id, name, test, tags, description, createdAt, updatedAt.

        Example:
            `await project.save_test(id="health", name="health", test={"request": {"path": "/health"}})`

        Tips:
            A bad `test` is INVALID_INPUT naming each problem's path ($.test.expect.staus).
        """
        return await self._saved.save_test(
            id, name, test, description=description, tags=tags, overwrite=overwrite
        )

    @operation(title="Read a saved test", read_only=True, group="tests")
    async def get_test(self, id: str) -> StoredTest | None:
        """Return a saved test, or null when there is none.

        Args:
            id: the saved test's id.

        Example:
            `await project.get_test("health")`
        """
        return await self._saved.get_test(id)

    @operation(title="List saved tests", read_only=True, group="tests")
    async def list_tests(self, tag: str | None = None) -> TestList:
        """List the saved tests: id, name, tags, updatedAt and the status of each one's newest run.

        Args:
            tag: only the tests carrying this tag.

        Example:
            `await project.list_tests(tag="smoke")`
        """
        return await self._saved.list_tests(tag)

    @operation(title="Delete a saved test", destructive=True, idempotent=True, group="tests")
    async def delete_test(self, id: str) -> DeleteResult:
        """Delete a saved test and all its runs (their files too). Deleting a missing test is no error.

        Args:
            id: the saved test's id.

        Returns:
            deleted (false when there was no such test) and runsDeleted.

        Example:
            `await project.delete_test("health")`
        """
        return await self._saved.delete_test(id)

    @operation(title="Run a test", group="tests")
    async def run_test(
        self,
        test_id: str | None = None,
        test: dict[str, Any] | None = None,
        wait: str | None = None,
        progress: ProgressArg = None,
    ) -> RunResult:
        """Run one saved test by id (recorded in its history), or an inline test (an ad-hoc run).

        Args:
            test_id: a saved test's id.
            test: instead, one case of the YAML test grammar (as for save_test).
            wait: how long to wait for the verdict (as for run).

        Returns:
            The same report as `run`: status, summary and, for a failure, the request, response,
            assertions, logs, mock requests, suggested fix and history.

        Example:
            `await project.run_test(test_id="health")`

        Tips:
            A test naming a service or mock needs setup first (NOT_RUNNING); absolute URLs run
            without it. TEST_NOT_FOUND lists the closest stored ids.
        """
        return await self._saved.run_test(
            test, test_id, wait=wait_seconds(wait), sink=resolve_sink(progress, "run")
        )

    @operation(title="Read a test's newest run", read_only=True, group="tests")
    async def get_latest_run(self, test_id: str) -> RunResult | None:
        """Return the newest run of a saved test (the report of `run`), or null when it has none.

        Args:
            test_id: the saved test's id.

        Example:
            `await project.get_latest_run("health")`
        """
        return await self._saved.latest_run(test_id)

    @operation(title="Save a suite of saved tests", group="tests")
    async def save_suite(
        self, id: str, name: str, test_ids: list[str], overwrite: bool = False
    ) -> StoredSuite:
        """Save a suite: saved tests run together, in order, wherever a suite id goes (run_suite, run).

        Args:
            id: a lowercase slug, not an e2e.yaml suite id.
            name: a short title.
            test_ids: saved tests, in run order.
            overwrite: replace an existing suite.

        Example:
            `await project.save_suite(id="smoke-saved", name="smoke", test_ids=["health", "login-works"])`

        Tips:
            TEST_NOT_FOUND lists every missing test id.
        """
        return await self._saved.save_suite(id, name, test_ids, overwrite=overwrite)

    @operation(title="List saved suites", read_only=True, group="tests")
    async def list_suites(self) -> SuiteList:
        """List the saved suites with their test ids.

        Example:
            `await project.list_suites()`
        """
        return await self._saved.list_suites()

    @operation(title="Delete a saved suite", destructive=True, idempotent=True, group="tests")
    async def delete_suite(self, id: str) -> DeleteResult:
        """Delete a saved suite; its tests stay. Deleting a missing suite is no error.

        Args:
            id: the saved suite's id.

        Example:
            `await project.delete_suite("smoke-saved")`
        """
        return await self._saved.delete_suite(id)

    @operation(title="Export saved tests to a test file", group="tests")
    async def export_tests(
        self,
        path: str,
        test_ids: list[str] | None = None,
        suite_id: str | None = None,
        overwrite: bool = False,
    ) -> ExportResult:
        """Write saved tests as a YAML test file in the project, to review and version them.

        Args:
            path: the file to write, inside the project.
            test_ids: these saved tests (default: all).
            suite_id: instead, this saved suite's tests.
            overwrite: replace an existing file.

        Returns:
            path, testIds, and suiteEntry: the e2e.yaml `tests.suites` entry that runs the file.

        Example:
            `await project.export_tests(path="tests/smoke.yaml", suite_id="smoke-saved")`
        """
        from preflight_sdk.saved import export_tests as _export

        return await _export(
            self._saved, path=path, test_ids=test_ids, suite_id=suite_id, overwrite=overwrite
        )

    @operation(title="Import tests from a test file", group="tests")
    async def import_tests(
        self, path: str, tags: list[str] | None = None, overwrite: bool = False
    ) -> ImportResult:
        """Save each case of a YAML test file in the project as a saved test (id: its name as a slug).

        Args:
            path: the test file, relative to the project.
            tags: tags for every imported test.
            overwrite: replace saved tests with the same ids.

        Example:
            `await project.import_tests(path="tests/orders.yaml", tags=["orders"])`
        """
        from preflight_sdk.saved import import_tests as _import

        return await _import(self._saved, path=path, tags=tags, overwrite=overwrite)

    @operation(title="Import Postman, .http or Hurl tests", group="tests")
    async def import_file(
        self,
        source: str,
        output: str | None = None,
        hosts: dict[str, str] | None = None,
        environment: str | None = None,
        overwrite: bool = False,
        dry_run: bool = False,
    ) -> ImportedTests:
        """Convert a Postman collection, `.http` or Hurl file into a YAML test file.

        Hosts become services or mocks (by `hosts`, name or port). What does not convert is in
        `notConverted` with its place. Add `suiteEntry` to e2e.yaml to run it.

        Args:
            source: `.json` (Postman), `.http` or `.hurl`, relative to the project.
            output: default `tests/<name>.yaml`.
            hosts: host, origin or base-URL variable → service or mock.
            environment: a Postman environment file.
            overwrite: replace an existing file.
            dry_run: write nothing; the YAML is in `text`.

        Example:
            `await project.import_file("api.postman_collection.json", hosts={"baseUrl": "api"})`
        """
        from preflight_sdk.importers import convert_file

        loaded = await self._config_if_any()
        root = Path(loaded.root) if loaded is not None else self._env.root
        redactor = loaded.redactor if loaded is not None else DEFAULT
        convert = partial(convert_file, source, root=root, loaded=loaded, output=output, hosts=hosts)
        return await anyio.to_thread.run_sync(
            partial(convert, environment=environment, overwrite=overwrite, dry_run=dry_run, redactor=redactor)
        )

    async def _config_if_any(self) -> LoadedConfig | None:
        """The project's configuration, or None where there is no e2e.yaml (an invalid one raises)."""
        try:
            return await self._env.ensure_loaded(persist=False)
        except ConfigError as exc:
            if exc.code == "CONFIG_NOT_FOUND":
                return None
            raise
