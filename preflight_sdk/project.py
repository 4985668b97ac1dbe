"""`Project`: the one object behind the SDK, the `preflight` CLI and the `preflight-mcp` tools.

Every public coroutine method of `Project` is an operation. They are written in
`preflight_sdk/operations/`, one class per tool group (environment, runs, tests, contracts,
verify, clarify), which `Project` joins as its bases, in that order: the order the faces list
them. The CLI commands and the MCP tools are generated from these signatures and docstrings (see
`preflight_sdk.faces.reflection.registry`), so a docstring is also a tool description: it is
written for the agent that will read it.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Self

from preflight_sdk.core.errors import InputError
from preflight_sdk.lifecycle.environment import Environment
from preflight_sdk.operations.clarify import ClarifyOperations
from preflight_sdk.operations.contracts import ContractOperations
from preflight_sdk.operations.environment import EnvironmentOperations
from preflight_sdk.operations.runs import RunOperations
from preflight_sdk.operations.saved_tests import SavedTestOperations
from preflight_sdk.operations.verify import VerifyOperations

if TYPE_CHECKING:
    from preflight_sdk.engine.base import Engine
    from preflight_sdk.sync import SyncProject

__all__ = ["Project"]


class Project(
    EnvironmentOperations,
    RunOperations,
    SavedTestOperations,
    ContractOperations,
    VerifyOperations,
    ClarifyOperations,
):
    """A project with an e2e.yaml: its Docker services, HTTP mocks and test suites.

    Create it with `Project.open(path)` (no I/O), then await its operations; each one initializes
    the project on first use. `async with Project.open(path) as p:` cleans up on exit.
    """

    def __init__(self, env: Environment) -> None:
        """Hold `env`, the environment `open` builds from a path (call `open`, not this)."""
        if not isinstance(env, Environment):  # `Project("path")`: an easy slip, told at once
            raise InputError(
                f"Project() takes the Environment that Project.open builds, not {type(env).__name__}",
                hint=f"use Project.open({env!r})"
                if isinstance(env, str | os.PathLike)
                else "use Project.open(path)",
            )
        self._env = env
        # `run(keep=True)` keeps pytest warm for the next run in this process (see
        # suites/commands/warm_pytest.py); a caller that runs once and exits turns it off.
        self.keep_warm = True

    def _record_call(
        self, name: str, started: float, duration: int, outcome: str, code: str | None, run_id: str | None
    ) -> None:
        """Queue one operation call for the store's operation log (only for a loaded project)."""
        loaded = self._env.loaded
        if loaded is None:
            return  # no project file: nothing is written anywhere
        from preflight_sdk.store.calls import note_call

        note_call((loaded.root, name, started, duration, outcome, code, run_id, os.getpid()))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] = ".",
        config_file: str | None = None,
        *,
        engine: Engine | None = None,
        engine_host: str | None = None,
        context: str | None = None,
    ) -> Self:
        """Return a Project for the directory `path` (or an e2e.yaml file). Does no I/O.

        Args:
            path: the project directory holding `e2e.yaml` (or `e2e.yml`), or the file itself.
            config_file: another config file name or path, relative to `path`.
            engine: a Docker engine to use instead of the default (tests pass a fake).
            engine_host: run on this Docker engine (`ssh://user@host`, `tcp://host:2375`,
                `unix:///path`) instead of e2e.yaml's `engine:`.
            context: run on this `docker context` instead of e2e.yaml's `engine:`.
        """
        target = None
        if engine_host or context:
            from preflight_sdk.config.engine_target import EngineTarget

            target = EngineTarget(host=engine_host, context=context)
        return cls(Environment(path, config_file, engine, target))

    @cached_property
    def sync(self) -> SyncProject:
        """The same operations, blocking: `project.sync.build()` for code that cannot `await`.

        Runs them on a private event loop in a background thread (an anyio blocking portal), so it
        also works inside a Jupyter kernel. Use either the async methods or `sync` on one Project.
        """
        from preflight_sdk.sync import SyncProject

        return SyncProject(self)

    def __repr__(self) -> str:
        state = self._env.session.state if self._env.session else "not initialized"
        return f"<Project {str(self._env.path)!r} ({state})>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if "_runs" in vars(self):  # a supervisor was started (`_runs` is cached on first use)
            await self._runs.shutdown()
        await self._env.stop_pytest_servers()
        await self._env.clean_on_exit()

    async def _stop_runs(self, reason: str) -> None:
        """End the runs this object owns as `interrupted`, saying `reason` (its face shuts down)."""
        if "_runs" in vars(self):  # a supervisor was started (`_runs` is cached on first use)
            await self._runs.shutdown(reason)
