"""Follow a container's output through the Docker API, which says of every line whether it is stdout or stderr.

`docker logs --follow` writes the two streams to two pipes; reading both would need a task inside
an async generator. The API's log stream interleaves them in frames of `[stream, 0, 0, 0, size
(4 bytes, big-endian)]` + payload, so one connection read in order keeps each line's stream and
order. It is used when the daemon is on a local unix socket (the common case); any other
`DOCKER_HOST` or a non-default docker context goes through the CLI instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from datetime import datetime
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from ..results.lifecycle import LogLine
from .errors import translate
from .inspect import parse_log_line

__all__ = ["follow_api", "local_socket"]

_DEFAULT_SOCKET = "/var/run/docker.sock"
_STREAMS: dict[int, Literal["stdout", "stderr"]] = {0: "stdout", 1: "stdout", 2: "stderr"}


def local_socket() -> str | None:
    """The unix socket of the daemon the docker CLI would talk to, or None when it is elsewhere.

    Blocking (reads the docker CLI's config): call it from a worker thread.
    """
    context = os.environ.get("DOCKER_CONTEXT", "")
    if context not in ("", "default"):
        return None
    host = os.environ.get("DOCKER_HOST", "")
    if host:
        return host.removeprefix("unix://") if host.startswith("unix://") else None
    config = Path(os.environ.get("DOCKER_CONFIG", "~/.docker")).expanduser() / "config.json"
    try:
        current = json.loads(config.read_text(encoding="utf-8")).get("currentContext")
    except (OSError, ValueError, AttributeError):
        current = None
    if current not in (None, "", "default"):
        return None
    return _DEFAULT_SOCKET if os.path.exists(_DEFAULT_SOCKET) else None


async def follow_api(socket: str, ref: str, *, since: datetime | None) -> AsyncGenerator[LogLine, None]:
    """Yield the container's lines (its history since `since`, then new ones) until closed."""
    import httpx

    params = {"follow": "1", "stdout": "1", "stderr": "1", "timestamps": "1"}
    if since is not None:
        params["since"] = f"{since.timestamp():.9f}"
    transport = httpx.AsyncHTTPTransport(uds=socket)
    timeout = httpx.Timeout(10.0, read=None)  # a quiet container sends nothing for a long time
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://docker", timeout=timeout) as client,
        client.stream("GET", f"/containers/{quote(ref, safe='')}/logs", params=params) as response,
    ):
        if response.status_code != 200:
            body = (await response.aread()).decode("utf-8", "replace")
            try:
                message = str(json.loads(body).get("message", body))
            except (ValueError, AttributeError):
                message = body
            raise translate(message, action=f"follow the logs of {ref}", subject=ref)
        frames = _Frames()
        async for chunk in response.aiter_raw():
            for stream, line in frames.feed(chunk):
                parsed = parse_log_line(line, stream)
                if parsed is not None:
                    yield parsed
        for stream, line in frames.flush():
            parsed = parse_log_line(line, stream)
            if parsed is not None:
                yield parsed


class _Frames:
    """Cut the byte stream into frames, and each stream's payload into lines.

    Only LF ends a docker log line (a CR inside one, from a progress bar, belongs to its text). A
    container with a TTY has one raw stream without frames: it is all stdout.
    """

    def __init__(self) -> None:
        self._pending = b""
        self._framed: bool | None = None
        self._partial: dict[Literal["stdout", "stderr"], bytes] = {"stdout": b"", "stderr": b""}

    def feed(self, chunk: bytes) -> list[tuple[Literal["stdout", "stderr"], str]]:
        self._pending += chunk
        if self._framed is None:
            if len(self._pending) < 4:
                return []
            head = self._pending[:4]
            self._framed = head[0] in _STREAMS and head[1:4] == b"\0\0\0"
        if not self._framed:
            data, self._pending = self._pending, b""
            return self._lines("stdout", data)
        lines: list[tuple[Literal["stdout", "stderr"], str]] = []
        while len(self._pending) >= 8:
            size = int.from_bytes(self._pending[4:8], "big")
            if len(self._pending) < 8 + size:
                break
            stream = _STREAMS.get(self._pending[0], "stdout")
            payload, self._pending = self._pending[8 : 8 + size], self._pending[8 + size :]
            lines += self._lines(stream, payload)
        return lines

    def flush(self) -> list[tuple[Literal["stdout", "stderr"], str]]:
        rest: list[tuple[Literal["stdout", "stderr"], str]] = []
        if self._framed is False and self._pending:
            rest += self._lines("stdout", self._pending)
        self._pending = b""
        for stream, partial in self._partial.items():
            if partial:
                rest.append((stream, partial.rstrip(b"\r").decode("utf-8", "replace")))
        self._partial = {"stdout": b"", "stderr": b""}
        return rest

    def _lines(
        self, stream: Literal["stdout", "stderr"], data: bytes
    ) -> list[tuple[Literal["stdout", "stderr"], str]]:
        *complete, self._partial[stream] = (self._partial[stream] + data).split(b"\n")
        return [(stream, line.rstrip(b"\r").decode("utf-8", "replace")) for line in complete]
