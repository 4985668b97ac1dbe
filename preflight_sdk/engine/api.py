"""The Docker Engine API on this machine's socket, through h11 and httpx: the transport of `SocketLane`.

A docker CLI call is one process: 29 ms for `docker ps -q` against 0.4 ms for the same request on
the socket (median of 20, 2 CPUs). Setup waits for two calls in a row (`network create`, then
`run`) and clean for two more (`rm -f`, `network rm`), so on an engine that is a unix socket here
with the stock `docker` client (`local_socket` says when), the engine's parts send requests here.

A plain request is one h11 exchange on its own connection (`exchange`: a CLI process does not
pay httpx's import for it); an answer that lasts is read through httpx's
`AsyncHTTPTransport(uds=...)`. Both are awaited on the event loop: cancelling a caller closes its
connection; no thread or process is involved. A request that changes something is shielded from
cancellation until its answer arrives (well under a second), so nothing it made is left unseen by
the clean that follows. An error answer reads by its HTTP status (`errors.from_status`), keeping
the daemon's message (the one the CLI prints); a socket that does not answer, or hangs up
mid-answer, is a retryable `DOCKER_ERROR`. `PREFLIGHT_DOCKER_API=0` turns this lane off (every
call through the CLI).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import anyio

from preflight_sdk.core.errors import InfrastructureError

from .errors import daemon_unreachable, from_status
from .exchange import Unanswered, exchange
from .lane import Inspected, read
from .target import on_local_socket

if TYPE_CHECKING:
    import httpx

__all__ = ["EngineAPI", "decoded", "failure", "local_socket", "message", "quoted"]

T = TypeVar("T")

DEFAULT_SOCKET = "/var/run/docker.sock"
# Creating, starting and removing answer in well under a second; removing a container that does
# not stop on SIGKILL, or a daemon under heavy load, can take longer. The CLI waits forever.
_TIMEOUT = 300.0


def local_socket(host: str | None, context: str | None) -> str | None:
    """Return the path of the engine's unix socket when the API lane applies, else None."""
    if os.environ.get("PREFLIGHT_DOCKER_API", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    if not on_local_socket(host, context):
        return None
    where = host or os.environ.get("DOCKER_HOST", "")
    path = where.removeprefix("unix://") if where.startswith("unix://") else DEFAULT_SOCKET
    return path if os.path.exists(path) else None


def quoted(ref: str) -> str:
    """A name or id as one path segment."""
    return quote(ref, safe="")


class EngineAPI:
    """Requests to the Docker Engine API on the unix socket at `path`: one httpx client per engine,
    without keep-alive (a local connection costs microseconds; none outlives its event loop)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._http: httpx.AsyncClient | None = None

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx  # lazy: 0.1 s, and `import preflight_sdk` must stay light

            transport = httpx.AsyncHTTPTransport(
                uds=self.path, verify=False, limits=httpx.Limits(max_keepalive_connections=0)
            )
            self._http = httpx.AsyncClient(
                transport=transport, base_url="http://docker", timeout=_TIMEOUT, trust_env=False
            )
        return self._http

    async def answer(
        self, method: str, path: str, *, params: Mapping[str, str] | None = None, body: Any = None
    ) -> tuple[int, bytes]:
        """Send one request; return its status and body (an error status is data here)."""
        payload = None if body is None else json.dumps(body).encode()
        with anyio.CancelScope(shield=method != "GET"):
            try:
                answered = await exchange(
                    self.path, method, path, params=params, body=payload, timeout=_TIMEOUT
                )
            except Unanswered as exc:
                raise self.unreachable(str(exc)) from exc
        return answered

    async def send(
        self, method: str, path: str, *, params: Mapping[str, str] | None = None, body: Any = None
    ) -> tuple[int, Any]:
        """Send one request; return `(status, decoded JSON or None)` (an error status is data here)."""
        status, content = await self.answer(method, path, params=params, body=body)
        return status, decoded(content)

    async def expect(
        self,
        method: str,
        path: str,
        *,
        action: str,
        subject: str | None = None,
        missing: tuple[str, str] | None = None,
        **options: Any,
    ) -> Any:
        """Send one request (`params`, `body`); return its JSON, or raise the `PreflightError` its
        error status reads as (`missing`: the kind and name of what a 404 says is gone)."""
        status, data = await self.send(method, path, **options)
        if status >= 400:
            raise failure(status, data, action=action, subject=subject, missing=missing)
        return data

    async def get(self, path: str, into: type[T], *, action: str, params: Mapping[str, str]) -> T:
        """`GET path`, its answer decoded straight into `into`; an error status as the `PreflightError` it reads as."""
        status, content = await self.answer("GET", path, params=params)
        return _read_answer(status, content, into, action=action, subject=None)

    async def inspect(self, into: type[Inspected], ref: str) -> Inspected | None:
        """`docker inspect` of one container, image, network, service or task (`into.KIND`), or None."""
        kind = into.KIND
        path = f"/{kind}s/{quoted(ref)}" + ("/json" if kind in ("container", "image") else "")
        status, content = await self.answer("GET", path)
        if status == 404:
            return None
        return _read_answer(status, content, into, action=f"inspect {kind} {ref}", subject=ref)

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        action: str,
        subject: str | None = None,
        missing: tuple[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> AsyncIterator[httpx.Response]:
        """An answer that lasts (events, a wait, an exec's output), read as it comes (an error status
        as `expect` reads it).

        Leaving the block, or cancelling its reader, closes the connection.
        """
        import httpx

        timeout = httpx.Timeout(_TIMEOUT, read=None)
        with self.reached():
            request = self._client().stream(method, path, params=params, json=body, timeout=timeout)
            async with request as reply:
                if reply.status_code >= 400:
                    content = await reply.aread()
                    raise failure(
                        reply.status_code, decoded(content), action=action, subject=subject, missing=missing
                    )
                yield reply

    async def lines(
        self, method: str, path: str, *, action: str, params: Mapping[str, str]
    ) -> AsyncGenerator[Any, None]:
        """The JSON objects of an answer that sends one per line (`GET /events`)."""
        async with self.stream(method, path, action=action, params=params) as reply:
            with self.reached():
                async for line in reply.aiter_lines():
                    if line.strip():
                        yield json.loads(line)

    @contextmanager
    def reached(self) -> Iterator[None]:
        """Turn a socket that does not answer (or hangs up mid-answer) into the CLI's words for it."""
        import httpx

        try:
            yield
        except (httpx.TransportError, OSError) as exc:
            raise self.unreachable(str(exc) or type(exc).__name__) from exc

    def unreachable(self, detail: str) -> InfrastructureError:
        """The error for a socket that does not answer, in the CLI's words."""
        if "permission denied" in detail.lower():
            return daemon_unreachable(
                f"Got permission denied while trying to connect to the Docker daemon socket at unix://{self.path}: {detail}"
            )
        return daemon_unreachable(
            f"Cannot connect to the Docker daemon at unix://{self.path}. Is the docker daemon running? ({detail})"
        )


def decoded(raw: bytes) -> Any:
    """An answer's JSON (a text that is not JSON as a message)."""
    try:
        return json.loads(raw) if raw.strip() else None
    except ValueError:
        return {"message": raw.decode("utf-8", "replace")}


def message(data: Any) -> str:
    """The daemon's error message in an answer."""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def _read_answer(status: int, content: bytes, into: type[T], *, action: str, subject: str | None) -> T:
    """An answer's bytes decoded into `into`, or its error status raised as the `PreflightError` it reads as."""
    if status >= 400:
        raise failure(status, decoded(content), action=action, subject=subject)
    return read(content, into, action=action)


def failure(
    status: int,
    data: Any,
    *,
    action: str,
    subject: str | None,
    missing: tuple[str, str] | None = None,
) -> InfrastructureError:
    """The `PreflightError` for an error answer, by its status (`errors.from_status`)."""
    return from_status(status, message(data), action=action, subject=subject, missing=missing)
