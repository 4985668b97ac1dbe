"""`Logs`: the engine's logs part: a container's (or a swarm service's) lines, through the client's command
line (`docker logs --timestamps`, stdout and stderr merged by the daemon's timestamps), as children of
our own (`cli.py`): a followed log ends when its reader leaves.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from datetime import datetime

from preflight_sdk.core.results.lifecycle import LogLine

from .inspect import docker_time, merge_log_streams, normalise_timestamp
from .whales import CliLane

__all__ = ["Logs"]

# How many raw log bytes one `logs` call may read while looking for N whole lines.
_LOGS_READ_LIMIT = 8 * 1024 * 1024


class Logs:
    """The logs of one engine's containers: `command` reads them (`container logs`, `service logs --raw`).

    Without `has_until` (`docker service logs`), lines after `until` are left out here.
    """

    def __init__(self, cli: CliLane, command: Sequence[str], *, has_until: bool = True) -> None:
        self.cli = cli
        self.command = list(command)
        self.has_until = has_until

    async def logs(
        self,
        ref: str,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[LogLine]:
        """The lines of `ref`, the last `tail` (see `Engine.logs`)."""
        cli = self.cli
        ask = tail if cli.trusts_tail else None
        while True:
            argv = [*self.command, "--timestamps"]
            argv += ["--tail", str(ask)] if ask is not None else []
            argv += ["--since", docker_time(since)] if since is not None else []
            argv += ["--until", docker_time(until)] if until is not None and self.has_until else []
            argv.append(ref)  # last: Podman takes no flag after it
            read = cli.stream(await cli.cmd(*argv), action=f"read the logs of {ref}", subject=ref)
            pieces = [(source, cli.log_line(raw)) async for source, raw in read]
            lines, entries = merge_log_streams(pieces)
            # `--tail` counts the daemon's log entries, and a line longer than 16 KB is several:
            # ask for more until N whole lines came back (or the daemon has no more).
            if tail is None or ask is None or len(lines) > tail or entries < ask:
                break
            if sum(len(raw) for _, raw in pieces) > _LOGS_READ_LIMIT:
                break
            ask *= 4
        if until is not None and not self.has_until:
            limit = normalise_timestamp(docker_time(until)) or ""
            lines = [line for line in lines if line.timestamp <= limit]
        return lines[-tail:] if tail is not None and tail > 0 else ([] if tail == 0 else lines)

    async def follow_logs(self, ref: str, *, since: datetime | None = None) -> AsyncGenerator[LogLine, None]:
        """Yield the lines of `ref` as they are written, until the reader leaves or the logs end."""
        argv = [*self.command, "--timestamps", "--follow"]
        argv += ["--since", docker_time(since)] if since is not None else []
        argv.append(ref)
        stream = self.cli.stream(await self.cli.cmd(*argv), action=f"follow the logs of {ref}", subject=ref)
        async with aclosing(stream) as pieces:  # closing this generator kills `logs --follow` at once
            async for source, raw in pieces:
                for line in merge_log_streams([(source, self.cli.log_line(raw))])[0]:
                    yield line
