"""Work that outlives the call that started it (a run handed back as a runId).

anyio is structured by design: every task belongs to a task group that its caller waits for.
A run that must keep going after `run(wait="0s")` has returned has no such caller, so it is an
asyncio task on the running loop, owned and awaited by the run supervisor instead. Only this
module steps outside anyio for that.
"""

from __future__ import annotations

import asyncio  # noqa: TID251 - see the module docstring
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Background"]


class Background:
    """Tasks started with `spawn`, kept referenced until they end (asyncio keeps only weak ones)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, fn: Callable[[], Awaitable[Any]], *, name: str) -> None:
        """Start `fn()` on the running loop, detached from the caller's task."""

        async def body() -> None:
            await fn()

        task = asyncio.get_running_loop().create_task(body(), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def __len__(self) -> int:
        return len(self._tasks)
