"""`watch`: a run, then again each time a file of the project changes, until the caller stops iterating.

Changes come grouped from `lifecycle/watch.py` (one save, or a formatter rewriting many files, is
one re-run); a change to one suite's own file re-runs only that suite (within `filter`). Each
outcome is the run's result, or the error that stopped it: a broken e2e.yaml or a failing build
is said, and the next change runs again.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing

import anyio

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.lifecycle.watch import affected_suites, changes, watched_roots

__all__ = ["watch_runs"]

Run = Callable[[str | None], Awaitable[RunResult | PreflightError]]


async def watch_runs(
    run: Run, ctx: ProjectContext, *, filter: str | None, keep: bool
) -> AsyncGenerator[RunResult | PreflightError, None]:
    """Yield `run(filter)`, then `run(suites)` for the suites each change affects; clean at the end unless `keep`."""
    chosen = {part.strip() for part in filter.split(",") if part.strip()} if filter else None
    try:
        loaded = await ctx.ensure_loaded()
        roots = await anyio.to_thread.run_sync(watched_roots, loaded)
        async with aclosing(changes(roots)) as stream:
            await anext(stream)  # the watcher runs: a change made during the first run is seen
            yield await run(filter)
            async for changed in stream:
                if not changed:
                    continue
                try:
                    affected = affected_suites(await ctx.ensure_loaded(), changed)
                except PreflightError as exc:  # a broken e2e.yaml: say so, wait for the fix
                    yield exc
                    continue
                suites = set(affected) & chosen if affected and chosen else set(affected or chosen or ())
                if affected and chosen and not suites:
                    continue  # only suites outside `filter` changed
                yield await run(",".join(sorted(suites)) or None)
    finally:
        if not keep:
            from preflight_sdk.lifecycle.clean import clean

            with anyio.CancelScope(shield=True):
                await clean(ctx, force=True)
