"""The mock traffic of a whole run, as `MOCK_REQUEST` events in its event log.

Failures carry the mock requests of their own moment; the report's timeline shows every request
of the run as a mark. So when the suites end, each mock's journal since the run's start is read
once (bounded: the newest `LIMIT` requests of each mock) and recorded at the moments the requests
arrived: `name` the mock, `message` `METHOD /path → status`, `status` the status (0: none sent).
Only the method, the path without its query (redacted like any text) and the status are kept.
"""

from __future__ import annotations

from datetime import UTC, datetime

import anyio

from .context import RunContext

__all__ = ["LIMIT", "record_mock_traffic"]

LIMIT = 2000
_BUDGET = 2.0  # seconds: a mock that does not answer costs the run no more than this


async def record_mock_traffic(run: RunContext) -> None:
    """Record what every mock received during the run (best effort, bounded in time and size),
    and give each request to the case it belongs to (what each case touched)."""
    env = run.env
    if not env.mocks:
        return
    read: set[str] = set()

    async def one(name: str) -> None:
        entries = await env.mock_entries(name, run.started)
        mock = env.loaded.config.mocks.get(name)
        limit = mock.journal_limit if mock is not None else None
        run.touches.mock_traffic(name, entries, complete=limit is None or len(entries) < limit)
        read.add(name)
        for entry in entries[-LIMIT:]:
            outcome = str(entry.status) if entry.status else (entry.fault or "no answer")
            run.log.record(
                "MOCK_REQUEST",
                name=name,
                status=str(entry.status or 0),
                message=env.redactor.text(f"{entry.method} {entry.path[:120]} → {outcome}"),
                at=datetime.fromtimestamp(entry.epoch_ms / 1000, UTC),
            )

    with anyio.move_on_after(_BUDGET):
        async with anyio.create_task_group() as tg:
            for name in env.mocks:
                tg.start_soon(one, name)
    for name in env.mocks:
        if name not in read:  # not answered in time: every case may have reached it
            run.touches.mock_unknown(name)
