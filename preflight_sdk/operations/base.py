"""The base of every group of `Project`'s operations: what they read, and the helpers they share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from preflight_sdk.config import find_config
from preflight_sdk.core.durations import wait_seconds
from preflight_sdk.core.errors import ConfigError, InputError, PreflightError
from preflight_sdk.core.progress import ProgressArg, Reporter, resolve_sink
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.lifecycle.environment import Environment
from preflight_sdk.lifecycle.session.filelock import project_lock
from preflight_sdk.lifecycle.session.state import STATE_DIR

if TYPE_CHECKING:
    from preflight_sdk.runs.supervisor import RunSupervisor
    from preflight_sdk.saved import SavedTests


__all__ = ["Operations"]


class Operations:
    """What every group of operations reads: the project's environment, its runs and saved tests, and the
    helpers they share. `Project` joins the groups; each group is one of its bases."""

    _env: Environment
    keep_warm: bool

    @property
    def path(self) -> str:
        """The project path given to `open`."""
        return str(self._env.path)

    @cached_property
    def _runs(self) -> RunSupervisor:
        from preflight_sdk.runs.supervisor import RunSupervisor

        return RunSupervisor(self._env)

    @cached_property
    def _saved(self) -> SavedTests:
        from preflight_sdk.saved import SavedTests

        return SavedTests(self._runs)

    async def _record_request(self, record: str | None, *, sharded: bool) -> Any:
        """The mocks a run or setup records, checked against e2e.yaml before anything starts."""
        if not record:
            return None
        if sharded:
            raise InputError(
                "`record` and `shards` do not go together", hint="record in a run without shards"
            )
        from preflight_sdk.lifecycle.mockhost.recording import record_request

        return record_request(await self._env.ensure_loaded(persist=False), record)

    async def _test_run(self, request: RunRequest, wait: str | None, progress: ProgressArg) -> RunResult:
        """Start the test run `request` asks for, with the saved suites among its suites."""
        seconds = wait_seconds(wait)
        given = await self._saved.expand(request.suites, tests_too=request.resumed_from is not None)
        return await self._runs.run_tests(
            request, wait=seconds, sink=resolve_sink(progress, "run"), given=given
        )

    def _lock_place(self, optional: bool) -> tuple[Path, bool]:
        """The checkout's root and whether its lock file may (and can) be used (blocking)."""
        if not optional:
            return self._env.root, True
        try:
            root = find_config(self._env.path, self._env.config_file).parent
        except ConfigError:
            return self._env.root, False  # not a project: write nothing there
        folder = root / STATE_DIR
        usable = not (folder / "lock").is_dir() and (folder.is_dir() or not folder.exists())
        return root, usable

    @asynccontextmanager
    async def _operation(
        self, progress: ProgressArg, name: str, *, lock_if_possible: bool = False
    ) -> AsyncIterator[Reporter]:
        """Serialise a changing operation on this project and report its start and end.

        With `lock_if_possible` (clean) the operation also runs without the checkout's lock file
        when there is no project file (nothing may be written there) or `.preflight/` is broken.
        """
        reporter = Reporter(resolve_sink(progress, name), name)
        try:
            async with self._env.lock:
                root, lockable = await anyio.to_thread.run_sync(self._lock_place, lock_if_possible)
                waiting = lambda text: reporter.step(text)  # noqa: E731
                if not lockable:
                    yield reporter
                    return
                async with project_lock(root, name, wait=self._env.lock_wait, on_wait=waiting):
                    yield reporter
        except BaseException as exc:
            message = exc.message if isinstance(exc, PreflightError) else type(exc).__name__
            reporter.finish(ok=False, message=f"{name} failed: {message}")
            raise
        reporter.finish(ok=True)
