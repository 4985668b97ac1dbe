"""Saved tests and suites: keep, list, delete, and run them as durable runs of the run store.

A saved test runs as a one-case YAML suite (its id is the suite id) and a saved suite as a YAML
suite of its tests' cases in `testIds` order, both through the same runner as a test file's
suites, so a failure report is exactly as rich. Neither is written to disk to run.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import anyio

from preflight_sdk.config import SuiteConfig, TestFile
from preflight_sdk.core.errors import InputError, PreflightError, StateError
from preflight_sdk.core.progress import ProgressSink
from preflight_sdk.core.redaction import REDACTED, Redactor
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.results.saved import (
    DeleteResult,
    StoredSuite,
    StoredTest,
    SuiteList,
    TestLine,
    TestList,
)
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.core.templates import has_template
from preflight_sdk.runs.supervisor import RunSupervisor, now_text
from preflight_sdk.store import (
    SavedStore,
    SavedSuiteRow,
    SavedTestRow,
    StoreError,
    StoreUnavailable,
    TestLineRow,
)
from preflight_sdk.suites.given import NO_SUITES, GivenSuites

from .definition import check_id, needs_environment, parse_case, suite_of

__all__ = ["ADHOC_SUITE", "SavedTests", "stored_test"]

ADHOC_SUITE = "adhoc"  # the suite id of an inline test's run
_MAX_TAGS = 20
_MAX_SUITE_TESTS = 500


class SavedTests:
    """The saved tests and suites of one project (through its run supervisor's store)."""

    def __init__(self, runs: RunSupervisor) -> None:
        self.runs = runs
        self._store: SavedStore | None = None

    async def store(self) -> SavedStore:
        """The project's saved-test store (the project must load)."""
        if self._store is None:
            self._store = SavedStore(await self.runs.store())
        return self._store

    async def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a store call in a worker thread; a failing store fails the operation (saving is its job)."""
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
        except StoreUnavailable as exc:
            raise exc.error from exc
        except StoreError as exc:
            raise PreflightError(
                f"the project's store could not be used: {exc}",
                code="FILESYSTEM_ERROR",
                hint="check that .preflight/ is writable and not on a network file system, then retry",
                retryable=True,
            ) from exc

    # -- tests -----------------------------------------------------------------------------------

    async def save_test(
        self,
        test_id: str,
        name: str,
        test: Any,
        *,
        description: str | None,
        tags: Sequence[str] | None,
        overwrite: bool,
    ) -> StoredTest:
        """Validate and store a test; INVALID_INPUT when the id is taken and `overwrite` is false."""
        check_id(test_id)
        _check_text(name, "name", 200)
        if description is not None:
            _check_text(description, "description", 2000, empty=True)
        tag_list = _check_tags(tags)
        definition, _ = parse_case(test, name=name)
        now = now_text()
        row = SavedTestRow(
            id=test_id, name=name, description=description, tags=tag_list, definition=definition,
            created_at=now, updated_at=now,
        )  # fmt: skip
        store = await self.store()
        stored, existed = await self.call(store.put_test, row, overwrite=overwrite)
        if existed and not overwrite:
            raise _taken("test", test_id, stored.updated_at)
        return stored_test(stored, (await self.runs.ctx.ensure_loaded()).redactor)

    async def get_test(self, test_id: str) -> StoredTest | None:
        """The stored test, or None."""
        check_id(test_id)
        store = await self.store()
        row = await self.call(store.test, test_id)
        return stored_test(row, (await self.runs.ctx.ensure_loaded()).redactor) if row is not None else None

    async def list_tests(self, tag: str | None) -> TestList:
        """Every saved test, compactly."""
        store = await self.store()
        rows = await self.call(store.test_lines, tag)
        return TestList(tests=[_line(r) for r in rows])

    async def delete_test(self, test_id: str) -> DeleteResult:
        """Delete a test and its runs (idempotent)."""
        check_id(test_id)
        store = await self.store()
        deleted, run_ids = await self.call(store.delete_test, test_id)
        return DeleteResult(deleted=deleted, runs_deleted=len(run_ids))

    async def require_tests(self, ids: Sequence[str]) -> list[SavedTestRow]:
        """The saved tests `ids`, in order; TEST_NOT_FOUND listing every missing one."""
        store = await self.store()
        found: dict[str, SavedTestRow] = await self.call(store.tests, ids)
        missing = [i for i in dict.fromkeys(ids) if i not in found]
        if missing:
            known = await self.call(store.test_ids)
            closest = {m: difflib.get_close_matches(m, known, n=3, cutoff=0.5) for m in missing}
            near = sorted({c for options in closest.values() for c in options})
            raise InputError(
                f"no saved test with id {', '.join(repr(m) for m in missing)}",
                code="TEST_NOT_FOUND",
                hint=(
                    f"closest stored ids: {', '.join(near)}" if near else "list_tests shows the stored tests"
                ),
                details={"missing": missing, "closest": closest},
            )
        return [found[i] for i in ids]

    # -- running ---------------------------------------------------------------------------------

    async def run_test(
        self,
        test: Any,
        test_id: str | None,
        *,
        wait: float | None,
        sink: ProgressSink | None,
    ) -> RunResult:
        """Run a saved test (recorded under its id) or an inline one (an ad-hoc run).

        A test that needs the environment finds it brought up to date and reset first, as for
        `run_suite`; one that only uses absolute URLs runs without it.
        """
        if (test is None) == (test_id is None):
            raise InputError(
                "give exactly one of `test` (an inline case) and `testId` (a saved test)",
                hint='e.g. testId="login-works", or test={"name": "health", "request": {"url": "…"}}',
            )
        if test_id is not None:
            check_id(test_id, field="testId")
            row = (await self.require_tests([test_id]))[0]
            definition, step = parse_case(row.definition, name=row.name)
            suite_id, name = test_id, row.name
        else:
            named = test.get("name") if isinstance(test, dict) else None
            definition, step = parse_case(test, name=None if named else "inline test")
            suite_id, name = ADHOC_SUITE, str(definition["name"])
        needs = needs_environment(step)
        if needs:
            await self._require_running()
        request = RunRequest(suites=(suite_id,), prepare="if_running" if needs else "none", test_id=test_id)
        given = GivenSuites(suites=(suite_of(suite_id, name, [definition]),), environment_optional=not needs)
        return await self.runs.run_tests(request, wait=wait, sink=sink, given=given)

    async def latest_run(self, test_id: str) -> RunResult | None:
        """The newest run of a saved test, or None."""
        check_id(test_id, field="testId")
        store = await self.runs.store()
        rows = await self.call(store.runs, test_id=test_id, limit=1)
        if not rows:
            return None
        return await self.runs.get(rows[0].run_id, 0.0)

    async def expand(self, suite_ids: Sequence[str] | None, *, tests_too: bool = False) -> GivenSuites:
        """The saved suites among `suite_ids` (those e2e.yaml does not define) as runnable suites.

        With `tests_too` (resuming a run), a saved test's id is its one-case suite, as `run_test`
        ran it. They may run without the environment when no case names a service or a mock,
        and e2e.yaml's suites are not among the ids.
        """
        if not suite_ids:
            return NO_SUITES
        loaded = await self.runs.ctx.ensure_loaded()
        configured = {s.id for s in loaded.suites}
        wanted = [i for i in dict.fromkeys(suite_ids) if i not in configured]
        if not wanted:
            return NO_SUITES
        store = await self.store()
        out: list[tuple[SuiteConfig, TestFile]] = []
        needs = any(i in configured for i in suite_ids)
        for suite_id in wanted:
            saved: SavedSuiteRow | None = await self.call(store.suite, suite_id)
            if saved is not None:
                name, test_ids = saved.name, saved.test_ids
            elif tests_too and (test := await self.call(store.test, suite_id)) is not None:
                name, test_ids = test.name, [suite_id]
            else:
                continue  # the orchestrator reports SUITE_NOT_FOUND
            cases = []
            for row in await self.require_tests(test_ids):
                definition, step = parse_case(row.definition, name=row.name)
                needs = needs or needs_environment(step)
                cases.append(definition)
            out.append(suite_of(suite_id, name, cases))
        return GivenSuites(suites=tuple(out), environment_optional=not needs)

    async def test_of_run(self, run_id: str) -> str | None:
        """The saved test a run was recorded under, if any."""
        store = await self.runs.store()
        row = await self.call(store.get, run_id)
        return row.test_id if row is not None else None

    async def ids(self) -> set[str]:
        """The ids of every saved test and suite (each one a suite id a run may have selected)."""
        store = await self.store()
        tests = await self.call(store.test_ids)
        return {*tests, *(s.id for s in await self.call(store.suites))}

    async def _require_running(self) -> None:
        loaded = await self.runs.ctx.ensure_loaded()
        session = self.runs.ctx.require_session()
        if (loaded.services or loaded.config.mocks) and session.state != "running":
            raise StateError(
                f"this test names a service or a mock, and the environment is not running "
                f"(state: {session.state})",
                code="NOT_RUNNING",
                hint="call `setup` first; a test that only uses absolute URLs runs without it",
                details={"state": session.state},
            )

    # -- suites ----------------------------------------------------------------------------------

    async def save_suite(
        self, suite_id: str, name: str, test_ids: Sequence[str], *, overwrite: bool
    ) -> StoredSuite:
        """Store a suite of saved tests; its id may not be an e2e.yaml suite id."""
        check_id(suite_id)
        _check_text(name, "name", 200)
        if not isinstance(test_ids, list | tuple) or not test_ids:
            raise InputError("testIds must list at least one saved test id", hint='e.g. ["login-works"]')
        if len(test_ids) > _MAX_SUITE_TESTS:
            raise InputError(f"testIds lists {len(test_ids)} tests; the limit is {_MAX_SUITE_TESTS}")
        for index, test_id in enumerate(test_ids):
            check_id(test_id, field=f"testIds[{index}]")
        loaded = await self.runs.ctx.ensure_loaded()
        if suite_id in {s.id for s in loaded.suites}:
            raise InputError(
                f"suite id {suite_id!r} is already a suite of e2e.yaml; a saved suite needs another id",
                hint=f"e.g. {suite_id + '-saved'!r}",
                details={"clash": suite_id},
            )
        await self.require_tests(test_ids)
        now = now_text()
        row = SavedSuiteRow(id=suite_id, name=name, test_ids=list(test_ids), created_at=now, updated_at=now)
        store = await self.store()
        stored, existed = await self.call(store.put_suite, row, overwrite=overwrite)
        if existed and not overwrite:
            raise _taken("suite", suite_id, stored.updated_at)
        return _stored_suite(stored)

    async def list_suites(self) -> SuiteList:
        """Every saved suite."""
        store = await self.store()
        return SuiteList(suites=[_stored_suite(r) for r in await self.call(store.suites)])

    async def delete_suite(self, suite_id: str) -> DeleteResult:
        """Delete a saved suite (its tests stay)."""
        check_id(suite_id)
        store = await self.store()
        return DeleteResult(deleted=await self.call(store.delete_suite, suite_id))


def stored_test(row: SavedTestRow, redactor: Redactor) -> StoredTest:
    """The result form of a stored test, its literal secrets replaced (templates are no secrets)."""
    return StoredTest(
        id=row.id, name=row.name, test=_shown(row.definition, redactor), tags=row.tags, description=row.description,
        created_at=row.created_at, updated_at=row.updated_at,
    )  # fmt: skip


def _line(row: TestLineRow) -> TestLine:
    return TestLine(
        id=row.id, name=row.name, tags=row.tags, updated_at=row.updated_at,
        last_run_status=row.last_run_status, last_run_id=row.last_run_id,  # type: ignore[arg-type]
    )  # fmt: skip


def _shown(value: Any, redactor: Redactor, *, under: str = "") -> Any:
    """`value` with literal secrets replaced: a header, query or body field with a secret name.

    `save` maps variable names to paths in the response, never secrets, so it is shown as it is.
    """
    if isinstance(value, dict):
        if under == "save":
            return value
        return {key: _field(str(key), item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item, redactor) for item in value]
    return redactor.text(value) if isinstance(value, str) and not has_template(value) else value


def _field(key: str, item: Any, redactor: Redactor) -> Any:
    literal = isinstance(item, str | int | float) and not has_template(item)
    return REDACTED if literal and redactor.secret(key) else _shown(item, redactor, under=key)


def _stored_suite(row: SavedSuiteRow) -> StoredSuite:
    return StoredSuite(
        id=row.id, name=row.name, test_ids=row.test_ids, created_at=row.created_at, updated_at=row.updated_at
    )


def _taken(kind: str, ident: str, updated_at: str) -> InputError:
    return InputError(
        f"a {kind} with id {ident!r} already exists (updated {updated_at})",
        hint="pass overwrite=true to replace it (createdAt is kept), or choose another id",
        details={"id": ident},
    )


def _check_text(value: object, field: str, limit: int, *, empty: bool = False) -> None:
    if not isinstance(value, str) or (not empty and not value.strip()) or len(value) > limit:
        raise InputError(
            f"{field} must be {'a' if empty else 'a non-empty'} string of at most {limit} characters",
            details={"field": field},
        )


def _check_tags(tags: Sequence[str] | None) -> list[str]:
    if tags is None:
        return []
    if not isinstance(tags, list | tuple) or len(tags) > _MAX_TAGS:
        raise InputError(
            f"tags must be a list of at most {_MAX_TAGS} strings", hint='e.g. ["smoke", "orders"]'
        )
    for tag in tags:
        _check_text(tag, "tags[]", 50)
    return list(dict.fromkeys(tags))
