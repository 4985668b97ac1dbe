"""What `watch` looks at: the project's files and its build contexts, and which suites a change affects.

File notifications come from watchfiles (inotify, FSEvents), grouped until the files are quiet
for a moment, so one save (or a formatter rewriting ten files) is one re-run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

from preflight_sdk.config import LoadedConfig

from .session.state import STATE_DIR

__all__ = ["affected_suites", "changes", "watched_roots"]

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
