"""How `DockerEngine` reaches Docker: one python-on-whales client, the Engine API, off the event loop.

`DockerCalls` holds the plumbing every Docker call goes through: the project's one
`python_on_whales.DockerClient` (built from its host and context), the Engine API on this
machine's socket when it applies (`api.py`), worker threads and command lines that cancelling
ends (`cli.py`), and the translation of python-on-whales' errors into `PreflightError`s.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..errors import EnvironmentError_
from . import cli
from .api import EngineAPI, SocketCalls, local_socket
from .base import RemoveOutcome
from .errors import name_the_engine, no_cli, translate_exception
from .outcomes import removal_outcomes

if TYPE_CHECKING:
    from python_on_whales import DockerClient

__all__ = ["DockerCalls", "first_line", "labels_of", "run_cli", "translated"]

T = TypeVar("T")


class DockerCalls:
    """The plumbing of `DockerEngine`: its client, its lanes, its worker threads."""

    def __init__(
        self, docker: str = "docker", *, host: str | None = None, context: str | None = None
    ) -> None:
        self._docker = docker
        self._host = host
        self._context = context
        self._client: DockerClient | None = None
        self._limiter = anyio.CapacityLimiter(16)
        self._creating = anyio.Lock()
        self._engine_api: SocketCalls | bool | None = False  # False: not looked for yet

    # -- plumbing ----------------------------------------------------------------------------

    async def _whales(self) -> DockerClient:
        """The project's one python-on-whales client (imported in a worker thread: 0.4 s of pydantic models)."""
        if self._client is None:
            async with self._creating:
                if self._client is None:
                    self._client = await anyio.to_thread.run_sync(self._create_client)
        return self._client

    def _create_client(self) -> DockerClient:
        from python_on_whales import DockerClient

        return DockerClient(client_call=[self._docker], host=self._host, context=self._context)

    def _api(self) -> SocketCalls | None:
        """The Engine API on this machine's socket, for the stock `docker` client only (else None).

        A client given by path or name (Podman, a test's stand-in) gets every call.
        """
        if self._engine_api is False:
            path = local_socket(self._host, self._context) if self._docker == "docker" else None
            self._engine_api = SocketCalls(EngineAPI(path)) if path else None
        return self._engine_api if isinstance(self._engine_api, SocketCalls) else None

    async def _cmd(self, *args: str) -> list[Any]:
        """The client's docker command line (binary, host, context, config) followed by `args`."""
        from python_on_whales.client_config import ClientNotFoundError

        client = await self._whales()
        try:
            return [*client.client_config.docker_cmd, *args]
        except ClientNotFoundError as exc:
            raise no_cli() from exc

    async def _call(self, fn: Callable[[], T], *, action: str, subject: str | None = None) -> T:
        with self._named_engine(), translated(action, subject):
            return await cli.call(fn, limiter=self._limiter)

    async def _lasting(self, argv: list[Any], *, action: str, subject: str | None = None) -> str:
        """Run a command line that may last (killed when cancelled); return its stdout."""
        with self._named_engine(), translated(action, subject):
            return await cli.run([str(a) for a in argv])

    async def _stream(
        self,
        argv: list[Any],
        *,
        action: str,
        subject: str | None = None,
        env: dict[str, str] | None = None,
        chunks: bool = False,
    ) -> AsyncGenerator[tuple[str, bytes], None]:
        """`(stream, line)` pairs of a command line that may last; closing the stream kills it."""
        with self._named_engine(), translated(action, subject):
            async with aclosing(cli.lines([str(a) for a in argv], env=env, chunks=chunks)) as items:
                async for item in items:
                    yield item

    @contextmanager
    def _named_engine(self) -> Iterator[None]:
        """Say which engine did not answer, when it is not a socket of this machine."""
        try:
            yield
        except EnvironmentError_ as exc:
            named = name_the_engine(exc, self._host, self._context)
            if named is exc:
                raise
            raise named from exc

    def _info_key(self) -> tuple[str, ...]:
        return (
            self._docker,
            self._host or os.environ.get("DOCKER_HOST", ""),
            self._context or os.environ.get("DOCKER_CONTEXT", ""),
            os.environ.get("DOCKER_CONFIG", ""),
        )

    async def _remove_on_socket(
        self, api: SocketCalls, kind: str, refs: Sequence[str], *, force: bool
    ) -> list[RemoveOutcome]:
        """Remove each of `refs` at once, as `docker rm` and `docker network rm` do."""
        return await self._each_on_socket(partial(api.remove, kind, force=force), refs)

    async def _each_on_socket(self, fn: Callable[[str], Awaitable[T]], refs: Sequence[str]) -> list[T]:
        """`fn(ref)` for every ref, all at once; the answers in `refs`' order."""
        answers: dict[int, T] = {}

        async def one(index: int, ref: str) -> None:
            answers[index] = await fn(ref)

        if len(refs) == 1:
            await one(0, refs[0])
        else:
            async with anyio.create_task_group() as tg:
                for index, ref in enumerate(refs):
                    tg.start_soon(one, index, ref)
        return [answers[index] for index in range(len(refs))]

    async def _removal(
        self, fn: Callable[[], object], refs: Sequence[str], *, action: str
    ) -> list[RemoveOutcome]:
        from python_on_whales.exceptions import DockerException

        def remove() -> tuple[str, str, int]:
            try:
                fn()
            except DockerException as exc:
                # One failure fails the whole call: stdout still names what was removed.
                return exc.stdout or "", exc.stderr or "", exc.return_code
            return "\n".join(refs), "", 0

        stdout, stderr, code = await self._call(remove, action=action)
        return removal_outcomes(refs, stdout, stderr, code, action=action)


@contextmanager
def translated(
    action: str, subject: str | None, *, keep: type[BaseException] | None = None
) -> Iterator[None]:
    """Turn python-on-whales' exceptions into `PreflightError`s (`keep` passes through as is)."""
    from python_on_whales.client_config import ClientNotFoundError
    from python_on_whales.exceptions import DockerException

    try:
        yield
    except ClientNotFoundError as exc:
        raise no_cli() from exc
    except FileNotFoundError as exc:
        raise no_cli() from exc
    except DockerException as exc:
        if keep is not None and isinstance(exc, keep):
            raise
        raise translate_exception(exc, action=action, subject=subject) from exc


def run_cli(argv: list[Any]) -> str:
    """Run a docker command line with python-on-whales' runner (its typed errors); return stdout."""
    from python_on_whales.utils import run

    return str(run(argv))


def labels_of(text: str) -> dict[str, str]:
    labels = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            labels[key.strip()] = value
    return labels


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().removeprefix("Error response from daemon: ")
    return ""
