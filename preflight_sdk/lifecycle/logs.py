"""`logs`: a container's stdout and stderr, interleaved by time, by service or container name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import datetime

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.durations import parse_duration, parse_since
from preflight_sdk.core.errors import InfrastructureError, InputError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.lifecycle import LogLine, LogsResult
from preflight_sdk.engine.base import ContainerInfo, Engine

from .session.state import SessionState
from .setup.labels import LABEL_ROOT, LABEL_SERVICE, LABEL_SESSION

__all__ = ["find_container", "follow", "logs"]

_MAX_LINES = 10_000
_ERROR_LINES = 20


async def find_container(
    engine: Engine, loaded: LoadedConfig, session: SessionState, name: str
) -> ContainerInfo:
    """Return the container of service (or container) `name`, preferring the current session's.

    Raises:
        InfrastructureError: `CONTAINER_NOT_FOUND`, listing the valid names.
    """
    found = await engine.list_containers({LABEL_ROOT: loaded.label_root})
    wanted = loaded.service(name)
    service_name = wanted.name if wanted else name
    matches = [
        c
        for c in found
        if c.labels.get(LABEL_SERVICE) == service_name or c.name == name or c.id.startswith(name)
    ]
    if not matches:
        valid = [s.name for s in loaded.services]
        raise InfrastructureError(
            f"no container for `{name}`" + ("" if wanted else " (not a service of this project)"),
            code="CONTAINER_NOT_FOUND",
            hint=f"valid names: {', '.join(valid) or '(no services)'}"
            + ("; call `setup` first" if wanted else ""),
            details={"container": name, "valid": valid},
        )
    matches.sort(key=lambda c: (c.labels.get(LABEL_SESSION) == session.session_id, c.running), reverse=True)
    return matches[0]


async def logs(
    engine: Engine,
    info: ContainerInfo,
    redactor: Redactor,
    *,
    container: str,
    lines: int,
    since: str | None,
    follow_for: float | None,
    reporter: Reporter,
) -> LogsResult:
    """Return the recent output of the container `info` (see `Project.logs`)."""
    if lines < 0 or lines > _MAX_LINES:
        raise InputError(
            f"`lines` must be between 0 and {_MAX_LINES}, got {lines}", details={"field": "lines"}
        )
    moment = parse_since(since) if since else None
    entries = [_redacted(line, redactor) for line in await engine.logs(info.id, tail=lines, since=moment)]
    if follow_for and info.running:
        last = entries[-1].timestamp if entries else None
        with anyio.move_on_after(follow_for):
            async for line in follow(engine, info.id, redactor, since=moment):
                if last is not None and line.timestamp <= last:
                    continue  # already in the tail
                entries.append(line)
                reporter.log(line.text, scope=container)
    kept = entries
    if not info.running and not follow_for:
        raise InfrastructureError(
            f"container `{container}` is not running ({info.status}"
            + (f", exit status {info.exit_code}" if info.exit_code is not None else "")
            + ")",
            code="CONTAINER_NOT_RUNNING",
            hint="details.lines holds its last output; call `setup` to start the environment again",
            details={
                "container": info.name,
                "containerStatus": info.status,
                "exitCode": info.exit_code,
                "lines": [line.text for line in kept[-_ERROR_LINES:]],
            },
        )
    return LogsResult(
        container=container,
        lines=kept,
        line_count=len(kept),
        container_status=info.status,
    )


async def follow(
    engine: Engine, container_id: str, redactor: Redactor, *, since: datetime | None = None
) -> AsyncIterator[LogLine]:
    """Yield new lines of a container as they are written (until the caller stops), redacted."""
    async with aclosing(engine.follow_logs(container_id, since=since)) as stream:
        async for line in stream:
            yield _redacted(line, redactor)


def _redacted(line: LogLine, redactor: Redactor) -> LogLine:
    """A container's line as every output shows it: secrets replaced, before progress or a reply."""
    return msgspec.structs.replace(line, text=redactor.text(line.text))


def follow_seconds(value: str | None) -> float | None:
    """Parse the follow duration of the logs tool."""
    return parse_duration(value, field="followFor") if value else None
