"""`watch`: a run, then again each time a file of the project changes, until the caller stops iterating.

Changes come grouped from `lifecycle/watch.py` (one save, or a formatter rewriting many files, is
one re-run); a change to one suite's own file re-runs only that suite (within `filter`). Each
outcome is the run's result, or the error that stopped it: a broken e2e.yaml or a failing build
is said, and the next change runs again.

A file changed while a run went on (by its suites or fixtures, most often) starts no run: its
notification arrives after the run, and `split_at` tells it apart by its time stamp. The
progress says which files those were, and which files started each run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing

import anyio

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.lifecycle.watch import affected_suites, changes, named, now, split_at, watched_roots

__all__ = ["watch_runs"]

Run = Callable[[str | None], Awaitable[RunResult | PreflightError]]


async def watch_runs(
    run: Run, ctx: ProjectContext, *, filter: str | None, keep: bool, reporter: Reporter
) -> AsyncGenerator[RunResult | PreflightError, None]:
    """Yield `run(filter)`, then `run(suites)` for the suites each change made after a run affects;
    clean at the end unless `keep`."""
    chosen = {part.strip() for part in filter.split(",") if part.strip()} if filter else None
    ended = 0.0

    async def timed(suites: str | None) -> RunResult | PreflightError:
        nonlocal ended
        try:
            return await run(suites)
        finally:
            ended = now()

    try:
        loaded = await ctx.ensure_loaded()
        roots = await anyio.to_thread.run_sync(watched_roots, loaded)
        async with aclosing(changes(roots)) as stream:
            await anext(stream)  # the watcher runs: a change made during the first run is seen
            yield await timed(filter)
            async for batch in stream:
                if not batch:
                    continue
                changed, during = await anyio.to_thread.run_sync(split_at, batch, ended)
                if during:
                    reporter.step(
                        f"{named(during, loaded.root)} changed while the run went on: not run again for it",
                        status="skipped",
                    )
                if not changed:
                    continue
                reporter.step(f"{named(changed, loaded.root)} changed: running again")
                try:
                    affected = affected_suites(await ctx.ensure_loaded(), changed)
                except PreflightError as exc:  # a broken e2e.yaml: say so, wait for the fix
                    yield exc
                    continue
                suites = set(affected) & chosen if affected and chosen else set(affected or chosen or ())
                if affected and chosen and not suites:
                    continue  # only suites outside `filter` changed
                yield await timed(",".join(sorted(suites)) or None)
    finally:
        if not keep:
            from preflight_sdk.lifecycle.clean import clean

            with anyio.CancelScope(shield=True):
                await clean(ctx, force=True)
