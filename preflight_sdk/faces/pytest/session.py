"""One environment per pytest session, shared by every pytest-xdist worker through a file lock.

`.preflight/pytest-session.json` (changed only under the `flock` of `.preflight/pytest.lock`) says
which test run owns the environment, how many workers use it, and the setup error if setup failed.
The first worker of a run builds and sets up (and serves the mocks, which live in its process);
the others attach to what it started. On leaving, the owner waits until every other worker has
left, then cleans (unless asked to keep the environment).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from preflight_sdk.core.results.lifecycle import StatusResult
    from preflight_sdk.sync import SyncProject

__all__ = ["SetupFailed", "SharedSession"]

_STATE = "pytest-session.json"
_LOCK = "pytest.lock"
_POLL = 0.1
_OWNER_WAIT = 3600.0


class SetupFailed(Exception):
    """Setup failed, in this process (`here`) or in another worker of the run."""

    def __init__(self, report: str, headline: str, *, here: bool) -> None:
        super().__init__(headline)
        self.report = report
        self.headline = headline
        self.here = here


class SharedSession:
    """This process's share of the run's environment."""

    def __init__(self, root: Path, run: str, *, keep: bool) -> None:
        self.root = root
        self.run = run
        self.keep = keep
        self.owner = False
        self.project: SyncProject | None = None

    def join(self) -> tuple[SyncProject, StatusResult]:
        """Set the environment up (first worker) or attach to it; return the project and its status.

        Raises:
            SetupFailed: with preflight's error, rendered once for the report.
        """
        from preflight_sdk.core.errors import PreflightError
        from preflight_sdk.project import Project

        project = Project.open(self.root).sync
        self.project = project
        with self._locked() as state:
            if state.get("run") == self.run and not state.get("closed"):
                if state.get("error"):
                    error = state["error"]
                    raise SetupFailed(error["report"], error["headline"], here=False)
                state["workers"] = [*_alive(state), os.getpid()]
                return project, project.status()
            try:
                project.build()
                project.setup()
                status = project.status()
            except PreflightError as exc:
                report, headline = render_error(exc)
                state.clear()
                state.update(run=self.run, error={"report": report, "headline": headline}, workers=[])
                project.close()
                raise SetupFailed(report, headline, here=True) from None
            self.owner = True
            state.clear()
            state.update(run=self.run, owner=os.getpid(), workers=[os.getpid()])
            return project, status

    def leave(self) -> None:
        """Give back this worker's share; the owner waits for the others, then cleans up."""
        with self._locked() as state:
            if state.get("run") == self.run:
                state["workers"] = [pid for pid in _alive(state) if pid != os.getpid()]
        if not self.owner or self.project is None:
            return
        deadline = time.monotonic() + _OWNER_WAIT
        while time.monotonic() < deadline:
            with self._locked() as state:
                # A worker that died (xdist replaces crashed ones) is no longer waited for.
                state["workers"] = _alive(state)
                if not state["workers"] or state.get("run") != self.run:
                    state["closed"] = True
                    break
            time.sleep(_POLL)
        if not self.keep:
            self.project.clean()
        self.project.close()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        folder = self.root / ".preflight"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            path = folder / _STATE
            try:
                state = json.loads(path.read_text(encoding="utf-8"))
                state = state if isinstance(state, dict) else {}
            except (OSError, ValueError):
                state = {}
            try:
                yield state
            finally:
                temporary = path.with_suffix(".tmp")
                temporary.write_text(json.dumps(state), encoding="utf-8")
                temporary.replace(path)
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _alive(state: dict[str, Any]) -> list[int]:
    """The pids in `state["workers"]` whose process still exists."""
    workers = state.get("workers")
    alive: list[int] = []
    for pid in workers if isinstance(workers, list) else []:
        if not isinstance(pid, int):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass  # it exists, under another user
        alive.append(pid)
    return alive


def render_error(exc: Any) -> tuple[str, str]:
    """Return preflight's error as a report (code, message, hint, the failing service's log tail)."""
    headline = f"[{exc.code}] {exc.message}"
    lines = [f"preflight setup failed: {headline}"]
    if exc.hint:
        from preflight_sdk.faces.cli.words import CLI  # a person at a terminal: the commands to run

        lines.append(f"hint: {exc.hint_for(CLI)}")
    details = exc.details if isinstance(exc.details, dict) else {}
    if details.get("service"):
        lines.append(f"service: {details['service']}")
    tail = details.get("logTail") or details.get("lines") or []
    if tail:
        lines.append("log tail:")
        lines += [f"  {line}" for line in tail[-30:]]
    for problem in getattr(exc, "problems", None) or []:
        lines.append(f"  {problem.render()}")
    return "\n".join(lines), headline
