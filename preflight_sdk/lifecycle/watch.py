"""What `watch` looks at: the project's files and its build contexts, and which suites a change affects.

File notifications come from watchfiles (inotify, FSEvents), grouped until the files are quiet
for a moment, so one save (or a formatter rewriting ten files) is one re-run.

What changed while a run went on is no reason to run again: a suite or a fixture that touches a
source file (or writes and deletes one) would otherwise start the next run, and that one the
next. The notifications of those changes arrive after the run, so each changed path is told
apart by when it last changed (`split_at`): its own time stamps (a deleted path: its folder's),
read against the clock the file system stamps them with (`now`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncGenerator, Iterable
from pathlib import Path

from preflight_sdk.config import LoadedConfig

from .session.state import STATE_DIR

__all__ = ["affected_suites", "changes", "named", "now", "split_at", "watched_roots"]

_WAKE_MS = 200
# Written by the runs themselves (reports, caches): never a reason to run again.
_IGNORED_DIRS = {
    STATE_DIR,
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "node_modules",
}


def watched_roots(loaded: LoadedConfig) -> list[Path]:
    """The e2e.yaml directory and every build context outside it (nested ones are covered)."""
    roots = [Path(loaded.root).resolve()]
    for service in loaded.services:
        if service.build.dockerfile is None:
            continue
        for path in (loaded.resolve(service.build.context), loaded.resolve(service.build.dockerfile)):
            folder = Path(path).resolve()
            folder = folder if folder.is_dir() else folder.parent
            if not any(folder == root or root in folder.parents for root in roots):
                roots.append(folder)
    return roots


def affected_suites(loaded: LoadedConfig, changed: set[Path]) -> list[str] | None:
    """The suites to run again: those whose own file alone changed, else None (all of them)."""
    files = {Path(loaded.resolve(s.file)).resolve(): s.id for s in loaded.suites if s.file}
    ids = [files.get(path) for path in changed]
    if not changed or None in ids:
        return None
    return sorted({suite for suite in ids if suite is not None})


async def changes(roots: list[Path], *, step_ms: int = 150) -> AsyncGenerator[set[Path], None]:
    """Yield each batch of changed paths under `roots`, once the files were quiet for `step_ms`.

    Empty batches come often (every `_WAKE_MS`): the first says the watcher is running (no change
    from then on is missed, even while the caller is busy), the rest let a cancellation (Ctrl-C)
    through quickly. Callers skip them.
    """
    from watchfiles import DefaultFilter, awatch  # lazy: only `watch` needs it

    class _Filter(DefaultFilter):
        ignore_dirs = (*DefaultFilter.ignore_dirs, *_IGNORED_DIRS)

    async for batch in awatch(
        *roots,
        watch_filter=_Filter(),
        step=step_ms,
        debounce=2000,
        rust_timeout=_WAKE_MS,
        yield_on_timeout=True,
        recursive=True,
    ):
        yield {Path(path) for _, path in batch}


# Linux stamps files with its coarse real-time clock, up to a tick (4 ms) behind the fine one: a
# change made just after a moment of the fine clock may carry an earlier stamp. Python's `time`
# does not name that clock; its id is 5 (CLOCK_REALTIME_COARSE in <linux/time.h>).
_COARSE = 5 if sys.platform.startswith("linux") else None


def now() -> float:
    """The time, as the file system stamps a change made at this moment."""
    return time.clock_gettime(_COARSE) if _COARSE is not None else time.time()


def _stamp(path: Path) -> float:
    """When `path` last changed (its content or its entry); a deleted path: when its folder did."""
    for candidate in (path, *path.parents):
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        return max(info.st_mtime, info.st_ctime)
    return float("inf")


def split_at(paths: Iterable[Path], moment: float) -> tuple[set[Path], set[Path]]:
    """(the paths that changed at `moment` or later, those that last changed before it)."""
    after: set[Path] = set()
    before: set[Path] = set()
    for path in paths:
        stamp = _stamp(path)
        # A file system that keeps whole seconds (ext3, HFS+) floors the stamp: compare whole seconds.
        (after if stamp >= (int(moment) if stamp.is_integer() else moment) else before).add(path)
    return after, before


def named(paths: Iterable[Path], root: str, *, most: int = 3) -> str:
    """`app/app.py, tests/x.sh and 4 more`: paths relative to `root`, the first `most` of them."""
    base = Path(root).resolve()
    shown = []
    for path in sorted(paths):
        try:
            shown.append(str(path.resolve().relative_to(base)))
        except ValueError:
            shown.append(str(path))
    head = ", ".join(shown[:most])
    return f"{head} and {len(shown) - most} more" if len(shown) > most else head
