"""`Project`: the one object behind the SDK, the `preflight` CLI and the `preflight-mcp` tools.

Every public coroutine method here is an operation. The CLI commands and the MCP tools are
generated from these signatures and docstrings (see `preflight_sdk.export.registry`), so a
docstring is also a tool description: it is written for the agent that will read it.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING, Self

from .lifecycle.context import ProjectContext
from .lifecycle.init import initialize
from .operations import operation
from .results.lifecycle import InitResult

if TYPE_CHECKING:
    from .engine.base import Engine

__all__ = ["Project"]


class Project:
    """A project with an e2e.yaml: its Docker services, HTTP mocks and test suites.

    Create it with `Project.open(path)` (no I/O), then await its operations; each one initializes
    the project on first use. `async with Project.open(path) as p:` cleans up on exit.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ".",
        config_file: str | None = None,
        *,
        engine: Engine | None = None,
    ) -> None:
        self._ctx = ProjectContext(path, config_file, engine)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] = ".",
        config_file: str | None = None,
        *,
        engine: Engine | None = None,
    ) -> Self:
        """Return a Project for the directory `path` (or an e2e.yaml file). Does no I/O.

        Args:
            path: the project directory holding `e2e.yaml` (or `e2e.yml`), or the file itself.
            config_file: another config file name or path, relative to `path`.
            engine: a Docker engine to use instead of the default (tests pass a fake).
        """
        return cls(path, config_file, engine=engine)

    @property
    def path(self) -> str:
        """The project path given to `open`."""
        return str(self._ctx.path)

    def __repr__(self) -> str:
        state = self._ctx.session.state if self._ctx.session else "not initialized"
        return f"<Project {str(self._ctx.path)!r} ({state})>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        from .lifecycle.clean import clean_on_exit

        await clean_on_exit(self._ctx)

    # -- operations --------------------------------------------------------------------------

    @operation(title="Load the project", idempotent=True)
    async def init(self) -> InitResult:
        """Load and validate the project's e2e.yaml and open its session.

        Call it first, or let any other operation do it for you. Calling it again is cheap: with
        an unchanged file it returns the same session; after an edit it reloads, unless the
        environment is running (then clean first).

        Returns:
            The project name, config path, services (image, ports, whether a health check is
            set), mocks (port, route count), suites (id, runner, file), the session id and its
            lifecycle state (initialized, built, running or stopped).

        Example:
            `await Project.open("examples/shop").init()`

        Tips:
            A CONFIG_INVALID error lists every problem with its JSON path, line and column,
            and a did-you-mean for misspelt keys; fix them all, then call init again.
        """
        async with self._ctx.lock:
            return await initialize(self._ctx)
