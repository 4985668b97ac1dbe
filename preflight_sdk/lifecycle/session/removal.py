"""Notice that another process removed this process's environment (a `clean` from elsewhere).

`clean` removes `.preflight/state.json`; a later `setup` writes a new session. Either way the
session this process started is over: its mocks stop listening and `preflight up` stops waiting.
"""

from __future__ import annotations

import os

import anyio

from .state import read_state_checked

__all__ = ["SessionWatch", "until_removed"]

WATCH_INTERVAL = 1.0


class SessionWatch:
    """Calling it returns False once the state file is gone or names another session.

    A changing operation writes its session before it starts anything, so the file names the
    session from the start; with `seen=False` the session counts as alive until the file has
    named it once. An unreadable file is not ours to judge.
    """

    def __init__(self, root: str | os.PathLike[str], session_id: str, *, seen: bool = True) -> None:
        self.root = root
        self.session_id = session_id
        self.seen = seen

    def __call__(self) -> bool:
        """Whether the session is still the checkout's current one (blocking: reads a small file)."""
        state, problem = read_state_checked(self.root)
        if state is None:
            return problem is not None or not self.seen
        if state.session_id == self.session_id:
            self.seen = True
            return True
        return not self.seen


async def until_removed(
    root: str | os.PathLike[str], session_id: str, interval: float = WATCH_INTERVAL
) -> None:
    """Return once the session `session_id` of the checkout at `root` is no longer the current one."""
    alive = SessionWatch(root, session_id)
    while True:
        if not await anyio.to_thread.run_sync(alive):
            return
        await anyio.sleep(interval)  # polling a file another process changes: no event to wait on
