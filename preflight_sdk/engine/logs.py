"""A container's (or a swarm service's) logs as whole lines, through the client's command line.

`docker logs --timestamps` prints stdout and stderr apart; the lines are merged by the daemon's
timestamps (`inspect.merge_log_streams`). Both reads run as children of our own (`cli.py`): a
followed log ends when its reader leaves.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime

from preflight_sdk.core.results.lifecycle import LogLine

from .inspect import docker_time, merge_log_streams, normalise_timestamp, parse_log_bytes
from .whales import CliLane

__all__ = ["follow_logs", "read_logs"]

# How many raw log bytes one `logs` call may read while looking for N whole lines.
_LOGS_READ_LIMIT = 8 * 1024 * 1024


async def read_logs(
    cli: CliLane,
    command: list[str],
    ref: str,
    *,
    tail: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    has_until: bool = True,
) -> list[LogLine]:
    """The lines of `command` (`container logs`, `service logs --raw`) for `ref`, the last `tail`.

    Without `has_until` (`docker service logs`), lines after `until` are left out here.
    """
    ask = tail if cli.trusts_tail else None
    while True:
        argv = [*command, "--timestamps"]
        argv += ["--tail", str(ask)] if ask is not None else []
        argv += ["--since", docker_time(since)] if since is not None else []
        argv += ["--until", docker_time(until)] if until is not None and has_until else []
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
    if until is not None and not has_until:
        limit = normalise_timestamp(docker_time(until)) or ""
        lines = [line for line in lines if line.timestamp <= limit]
    return lines[-tail:] if tail is not None and tail > 0 else ([] if tail == 0 else lines)


async def follow_logs(
    cli: CliLane, command: list[str], ref: str, *, since: datetime | None = None
) -> AsyncGenerator[LogLine, None]:
    """Yield the lines of `command` as they are written, until the reader leaves or the logs end."""
    argv = [*command, "--timestamps", "--follow"]
    argv += ["--since", docker_time(since)] if since is not None else []
    argv.append(ref)
    async for source, raw in cli.stream(
        await cli.cmd(*argv), action=f"follow the logs of {ref}", subject=ref
    ):
        parsed = parse_log_bytes(cli.log_line(raw), "stderr" if source == "stderr" else "stdout")
        if parsed is not None:
            yield parsed
