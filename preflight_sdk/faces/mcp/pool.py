"""The projects an MCP server works on: one object per project path, kept for the server's life.

The pool also remembers which projects had their environment started through it, so that the
server can clean them when its client goes away (stdin closes, SIGTERM) instead of leaving
containers and mocks running with nobody to stop them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from preflight_sdk.core.errors import InputError

__all__ = ["ProjectFactory", "ProjectPool", "default_factory"]

logger = logging.getLogger("preflight_sdk.faces.mcp")

ProjectFactory = Callable[..., Any]  # (path, config_file, *, engine_host=None, context=None)
"""Makes the object whose methods the tools call: `(absolute path, config file or None) -> Project`."""

# A clean that hangs must not keep a dying server alive forever.
CLEAN_TIMEOUT = 120.0
# The longest path and path component the file system accepts (Linux PATH_MAX, NAME_MAX).
MAX_PATH = 4096
MAX_NAME = 255


def check_path(value: str, field: str) -> None:
    """Refuse a path no file system accepts, before it reaches one (an OSError would be INTERNAL)."""
    longest = max((len(part.encode(errors="surrogatepass")) for part in value.split("/")), default=0)
    if len(value) > MAX_PATH or longest > MAX_NAME or "\0" in value:
        raise InputError(
            f"{field} is not a usable path ({len(value)} characters, longest name {longest})",
            hint=f"give a path of at most {MAX_PATH} characters whose names have at most {MAX_NAME}",
            details={"field": field, "expected": "path"},
        )


def default_factory(
    path: str, config_file: str | None, *, engine_host: str | None = None, context: str | None = None
) -> Any:
    """Open a `Project` (no I/O until its first operation), on another engine when one is named."""
    from preflight_sdk.project import Project

    return Project.open(path, config_file, engine_host=engine_host, context=context)


# A run stopping at shutdown has this long to record its end (its suite's teardown included).
STOP_TIMEOUT = 60.0


async def _stop_runs(project: Any, reason: str) -> None:
    """Stop the runs a project object owns, as interrupted (a stand-in project may own none)."""
    stop = getattr(project, "_stop_runs", None)
    if stop is None:
        return
    with anyio.move_on_after(STOP_TIMEOUT) as scope:
        try:
            await stop(reason)
        except Exception:  # one project's runs must not keep the others running
            logger.exception("stopping the runs of %s failed", getattr(project, "path", "?"))
    if scope.cancelled_caught:
        logger.error("the runs of %s did not stop within %.0fs", getattr(project, "path", "?"), STOP_TIMEOUT)


class ProjectPool:
    """Project objects by resolved absolute path, plus the ones whose environment we started."""

    def __init__(
        self,
        factory: ProjectFactory = default_factory,
        *,
        default_path: str | os.PathLike[str] | None = None,
        allow_other_projects: bool = False,
    ) -> None:
        self._factory = factory
        self.default_path = self.resolve(default_path) if default_path is not None else None
        # With a default project, a call may name only it or a folder inside it (a model must not
        # point the tools at any readable directory), unless the launcher allowed others.
        self.confined_to: Path | None = None
        if self.default_path is not None and not allow_other_projects:
            default = Path(self.default_path)
            self.confined_to = default.parent if default.is_file() else default
        self._projects: dict[str, tuple[Any, str | None]] = {}
        self._started: dict[int, tuple[str, Any]] = {}
        self._before: dict[int, tuple[str, tuple[Any, str | None] | None]] = {}
        self._closed = False
        self._close_lock = anyio.Lock()

    @staticmethod
    def resolve(path: str | os.PathLike[str]) -> str:
        """Return the absolute, symlink-free form of `path` (relative to the working directory)."""
        return str(Path(path).expanduser().resolve())

    @property
    def default_folder(self) -> str | None:
        """The folder of the default project (the file's folder when it names e2e.yaml)."""
        if self.default_path is None:
            return None
        default = Path(self.default_path)
        return str(default.parent if default.is_file() else default)

    def key(self, path: str | None, *, field: str = "projectPath") -> str:
        """Return the pool key of a tool's `projectPath` (the server default when it is left out);
        errors about the path name `field`, the argument that gave it."""
        if path is None or path == "":
            if self.default_path is None:
                raise InputError(
                    "projectPath is required: this server was started without --project",
                    hint="pass projectPath (the folder with e2e.yaml) or start preflight-mcp --project PATH",
                    details={"field": "projectPath", "expected": "string"},
                )
            return self.default_path
        check_path(path, field)
        resolved = self.resolve(path)
        self._check_inside(resolved, field, path)
        return resolved

    def _check_inside(self, resolved: str, field: str, given: str) -> None:
        """Refuse a path outside the default project (and its subfolders) when the pool is confined."""
        root = self.confined_to
        if root is None or Path(resolved).is_relative_to(root):
            return
        raise InputError(
            f"{field} {given!r} is outside this server's project {str(root)!r}",
            code="PROJECT_NOT_ALLOWED",
            hint=f"leave {field} out (or name a folder inside {root}); to serve other projects, start "
            "preflight-mcp with --allow-any-project",
            details={"field": field, "project": str(root), "given": given},
        )

    def get(self, path: str | None, config_file: str | None = None, *, field: str = "projectPath") -> Any:
        """Return the project at `path`; a different `config_file` opens it anew.

        The new project replaces the old one only once a call on it succeeds (`settle`): a
        failed call with a bad `config_file` leaves the pool as it was. Errors about `path` name
        `field`.
        """
        key = self.key(path, field=field)
        if config_file is not None:
            check_path(config_file, "configFile")
            folder = Path(key).parent if Path(key).is_file() else Path(key)
            self._check_inside(
                self.resolve(folder / Path(config_file).expanduser()), "configFile", config_file
            )
        found = self._projects.get(key)
        if found is not None and (config_file is None or config_file == found[1]):
            return found[0]
        project = self._factory(key, config_file)
        if config_file is not None:
            self._before[id(project)] = (key, found)
        self._projects[key] = (project, config_file)
        return project

    def settle(self, project: Any, *, ok: bool) -> None:
        """Keep a project opened by `get` (its call succeeded), or put back the one it replaced."""
        pending = self._before.pop(id(project), None)
        if pending is None or ok:
            return
        key, previous = pending
        current = self._projects.get(key)
        if current is not None and current[0] is project:
            if previous is None:
                del self._projects[key]
            else:
                self._projects[key] = previous

    def mark_started(self, project: Any) -> None:
        """Remember that this server started (or is starting) the project's environment."""
        self._started[id(project)] = (getattr(project, "path", "?"), project)

    def mark_cleaned(self, project: Any) -> None:
        """Forget a project whose environment was cleaned through a tool."""
        self._started.pop(id(project), None)

    @property
    def started(self) -> list[Any]:
        """Projects whose environment this server started and did not clean."""
        return [project for _, project in self._started.values()]

    async def aclose(self, *, keep: bool = False, reason: str = "the MCP server shut down") -> None:
        """End the runs of every project (`interrupted`, saying `reason`), then clean every
        environment this server started (once; `keep=True` leaves them running)."""
        async with self._close_lock:
            if self._closed:
                return
            self._closed = True
            with anyio.CancelScope(shield=True):
                for project, _ in list(self._projects.values()):
                    await _stop_runs(project, reason)
            if keep:
                if self._started:
                    logger.info("leaving %d environment(s) running (--keep-on-exit)", len(self._started))
                return
            with anyio.CancelScope(shield=True):
                for path, project in list(self._started.values()):
                    logger.info("cleaning the environment of %s", path)
                    with anyio.move_on_after(CLEAN_TIMEOUT) as scope:
                        try:
                            await project.clean()
                        except Exception:  # a failing clean must not stop the others
                            logger.exception("clean failed for %s", path)
                    if scope.cancelled_caught:
                        logger.error("clean of %s did not finish within %.0fs", path, CLEAN_TIMEOUT)
                self._started.clear()
