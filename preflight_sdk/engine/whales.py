"""`CliLane`: Docker (or Podman) through python-on-whales and the client's command line: the lane of
every engine that is not a unix socket here (tcp, ssh, contexts), of Podman, and of builds, pulls,
logs and images everywhere. Its `DockerClient` does short calls in worker threads; calls that may
last run as children that cancelling kills (`cli.py`); a few short calls use python-on-whales'
runner on the command line instead of a typed wrapper, each saying why.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from contextlib import aclosing, contextmanager
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec

from preflight_sdk.config.port_specs import PortSpec
from preflight_sdk.core.decoding import convert
from preflight_sdk.core.errors import InfrastructureError

from . import cli
from .base import ContainerSpec, EngineInfo, RemoveOutcome
from .errors import daemon_unreachable, is_daemon_down, name_the_engine, no_cli, translate_exception
from .inspect import bridge_gateway, docker_time, labels_of
from .lane import Inspected, IpamConfig, ListedContainer, ListedNetwork, read
from .output import BoundedOutput, removal_outcomes
from .run_options import SHARED_NETWORK, option_flags
from .target import endpoint_address, on_local_socket

if TYPE_CHECKING:
    from python_on_whales import DockerClient

__all__ = ["DOCKER_LISTING", "CliLane", "Listing", "run_cli", "run_cli_tolerant", "run_flags", "translated"]

T = TypeVar("T")


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    """How a command line lists (`ps -a`, `network ls`): the `--format` it is given, and how its
    output reads as the Engine API's `ListedContainer`s and `ListedNetwork`s."""

    format: str
    containers: Callable[[str], list[ListedContainer]]
    networks: Callable[[str], list[ListedNetwork]]


class _PsLine(msgspec.Struct, frozen=True, rename="pascal"):
    """A `docker ps --format '{{json .}}'` line: names and labels as text (`a,b`, `k=v,k2=v2`)."""

    id: str = msgspec.field(default="", name="ID")
    names: str = ""
    image: str = ""
    state: str = "unknown"
    labels: str = ""


class _NetworkLine(msgspec.Struct, frozen=True, rename="pascal"):
    """A `docker network ls --format '{{json .}}'` line."""

    id: str = msgspec.field(default="", name="ID")
    name: str = ""
    labels: str = ""


def _lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip()]


def _docker_containers(out: str) -> list[ListedContainer]:
    lines = [read(line, _PsLine, action="list containers") for line in _lines(out)]
    return [
        ListedContainer(
            id=line.id,
            names=line.names.split(","),
            image=line.image,
            state=line.state,
            labels=labels_of(line.labels),
        )
        for line in lines
    ]


def _docker_networks(out: str) -> list[ListedNetwork]:
    lines = [read(line, _NetworkLine, action="list networks") for line in _lines(out)]
    return [ListedNetwork(id=line.id, name=line.name, labels=labels_of(line.labels)) for line in lines]


DOCKER_LISTING = Listing(format="{{json .}}", containers=_docker_containers, networks=_docker_networks)


class CliLane:
    """Docker through python-on-whales: `docker` (or `docker_cmd[0]`) at `host`/`context`.

    Attributes:
        publish: the `--publish` argument for one port (Podman writes a free host port its way).
        log_line: one line of `logs --timestamps` as the parser reads it (Podman's needs mending).
        trusts_tail: whether `logs --tail` keeps whole lines (Podman's mangles lines written in
            pieces: the whole log is read and the tail taken here).
        listing: the `--format` of `ps` and `network ls` that prints JSON, and how it reads.
        died: the event a container's end is (Podman's `died`).
    """

    def __init__(
        self,
        docker: str = "docker",
        *,
        host: str | None = None,
        context: str | None = None,
        publish: Callable[[PortSpec], str] = PortSpec.docker_arg,
        log_line: Callable[[bytes], bytes] = bytes,
        trusts_tail: bool = True,
        listing: Listing = DOCKER_LISTING,
        died: str = "die",
    ) -> None:
        self.docker = docker
        self.host = host
        self.context = context
        self.publish = publish
        self.log_line = log_line
        self.trusts_tail = trusts_tail
        self.listing = listing
        self.died = died
        self._client: DockerClient | None = None
        self._limiter = anyio.CapacityLimiter(16)
        self._creating = anyio.Lock()

    # -- plumbing ----------------------------------------------------------------------------

    async def client(self) -> DockerClient:
        """The one python-on-whales client (imported in a worker thread: 0.4 s of pydantic models)."""
        if self._client is None:
            async with self._creating:
                if self._client is None:
                    self._client = await anyio.to_thread.run_sync(self._create_client)
        return self._client

    def _create_client(self) -> DockerClient:
        from python_on_whales import DockerClient

        return DockerClient(client_call=[self.docker], host=self.host, context=self.context)

    async def cmd(self, *args: str) -> list[str]:
        """The client's command line (binary, host, context, config) followed by `args`."""
        from python_on_whales.client_config import ClientNotFoundError

        client = await self.client()
        try:
            return [str(part) for part in [*client.client_config.docker_cmd, *args]]
        except ClientNotFoundError as exc:
            raise no_cli() from exc

    async def call(self, fn: Callable[[], T], *, action: str, subject: str | None = None) -> T:
        """A short python-on-whales call in a worker thread, its errors as `PreflightError`s."""
        with self.named(), translated(action, subject):
            return await cli.call(fn, limiter=self._limiter)

    async def text(self, *args: str, action: str, subject: str | None = None) -> str:
        """The stdout of a short docker command line (python-on-whales' runner and typed errors)."""
        argv = await self.cmd(*args)
        return await self.call(partial(run_cli, argv), action=action, subject=subject)

    async def lasting(self, *args: str, action: str, subject: str | None = None) -> str:
        """The stdout of a docker command line that may last (killed when cancelled)."""
        argv = await self.cmd(*args)
        with self.named(), translated(action, subject):
            return await cli.run(argv)

    async def stream(
        self, argv: list[str], *, action: str, subject: str | None = None, chunks: bool = False
    ) -> AsyncGenerator[tuple[str, bytes], None]:
        """`(stream, line)` pairs of a command line that may last; closing the stream kills it."""
        with self.named(), translated(action, subject):
            async with aclosing(cli.lines(argv, chunks=chunks)) as items:
                async for item in items:
                    yield item

    @contextmanager
    def named(self) -> Iterator[None]:
        """Say which engine did not answer, when it is not a socket of this machine."""
        try:
            yield
        except InfrastructureError as exc:
            named = name_the_engine(exc, self.host, self.context)
            if named is exc:
                raise
            raise named from exc

    def key(self) -> tuple[str, ...]:
        """What chooses the engine: DOCKER_HOST, DOCKER_CONTEXT and DOCKER_CONFIG count when nothing is named."""
        return (
            self.docker,
            self.host or os.environ.get("DOCKER_HOST", ""),
            self.context or os.environ.get("DOCKER_CONTEXT", ""),
            os.environ.get("DOCKER_CONFIG", ""),
        )

    # -- the lane ----------------------------------------------------------------------------

    async def facts(self) -> EngineInfo:
        """The daemon's version, bridge gateway and endpoint, asked at once (the first build asks
        for the builder: a docker process that status and setup need not wait for)."""
        client = await self.client()
        asked: dict[str, Any] = {}

        async def ask(name: str, fn: Callable[[], Any]) -> None:
            try:
                asked[name] = await self.call(fn, action="ask the daemon")
            except InfrastructureError as exc:
                asked[name] = exc

        def endpoint() -> str | None:
            # The context's docker endpoint (the default context's is DOCKER_HOST, else the socket).
            found = (client.context.inspect(self.context).endpoints or {}).get("docker")
            return str(found.host) if found is not None and found.host else None

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "version", client.version)
            tg.start_soon(ask, "bridge", lambda: client.network.inspect("bridge").ipam.config)
            if not self.host and not on_local_socket(self.host, self.context):
                tg.start_soon(ask, "endpoint", endpoint)
        if isinstance(asked["version"], InfrastructureError):
            raise asked["version"]
        server = getattr(getattr(asked["version"], "server", None), "version", None)
        if not server:
            raise daemon_unreachable("the daemon did not say its version")
        bridge, found = asked["bridge"], self.host or asked.get("endpoint")
        where = found if isinstance(found, str) else None
        address, routable = endpoint_address(where)
        return EngineInfo(
            server_version=str(server),
            host_gateway=None
            if isinstance(bridge, InfrastructureError)
            else bridge_gateway(convert(bridge or [], list[IpamConfig])),
            endpoint=where,
            address=address,
            routable=routable,
        )

    async def create_network(self, name: str, labels: Mapping[str, str]) -> str:
        client = await self.client()
        network = await self.call(
            lambda: client.network.create(name, labels=dict(labels)),
            action=f"create network {name}",
            subject=name,
        )
        return str(network.id)

    async def listed_containers(self, labels: Mapping[str, str]) -> list[ListedContainer]:
        return self.listing.containers(await self._listing(["ps", "-a"], labels))

    async def listed_networks(self, labels: Mapping[str, str]) -> list[ListedNetwork]:
        return self.listing.networks(await self._listing(["network", "ls"], labels))

    async def _listing(self, command: list[str], labels: Mapping[str, str]) -> str:
        # The client's command line: `container.list` and `network.list` return bare ids, and reading
        # a name or a state inspects each one (a docker process each); `ps` and `network ls` give
        # ids, names, states and labels of all of them in one.
        filters = [a for k, v in labels.items() for a in ("--filter", f"label={k}={v}")]
        return await self.text(
            *command, "--no-trunc", "--format", self.listing.format, *filters, action=f"list {command[0]}s"
        )

    async def remove(self, kind: str, refs: Sequence[str], *, force: bool = False) -> list[RemoveOutcome]:
        """Remove containers (with their anonymous volumes), images or networks; say what happened to each."""
        flags = ["--volumes", *(["--force"] if force else [])] if kind == "container" else []
        return await self.removed([kind, "rm", *flags], refs)

    async def removed(
        self, command: Sequence[str], refs: Sequence[str], *, unnamed_missing: bool = False
    ) -> list[RemoveOutcome]:
        """Run `command` (`container rm ...`, `network rm`) on `refs`; what it did to each (`removal_outcomes`)."""
        from python_on_whales.exceptions import DockerException

        # The client's command line: `container.remove` drops docker's stdout, the only place
        # that says which refs were removed (`rm -f` of a missing container exits 0 silently).
        argv = await self.cmd(*command, *refs)
        action = f"remove {command[0]}s"

        def remove() -> tuple[str, str, int]:
            try:
                return run_cli(argv), "", 0
            except DockerException as exc:
                # One failure fails the whole call: stdout still names what was removed.
                return exc.stdout or "", exc.stderr or "", exc.return_code

        stdout, stderr, code = await self.call(remove, action=action)
        return removal_outcomes(refs, stdout, stderr, code, action=action, unnamed_missing=unnamed_missing)

    async def run(self, spec: ContainerSpec) -> str:
        # The client's command line: `container.run(detach=True)` inspects the container it
        # started (one more docker process and a pydantic parse per service on setup's critical
        # path: +25 ms a service, 1.08x the floor for one service instead of 1.00x).
        argv = ["run", "--detach", "--pull", "never", "--name", spec.name, "--network", spec.network]
        if not spec.network.startswith(SHARED_NETWORK):  # another container's namespace has neither
            argv += [a for alias in spec.aliases for a in ("--network-alias", alias)]
            argv += [a for port in spec.ports for a in ("--publish", self.publish(port))]
        argv += [a for volume in spec.volumes for a in ("--volume", volume)]
        argv += [a for host, address in spec.add_hosts for a in ("--add-host", f"{host}:{address}")]
        argv += [*run_flags(spec), *option_flags(spec.options), spec.image, *(spec.command or [])]
        out = await self.text(*argv, action=f"start container {spec.name}", subject=spec.name)
        return out.strip().splitlines()[-1]

    async def inspect(self, into: type[Inspected], refs: Sequence[str]) -> list[Inspected]:
        # The client's command line: python-on-whales' `inspect([...])` runs one docker process per
        # object and parses each into pydantic models; status and clean inspect every container of
        # a project at once, in one process.
        action = f"inspect {into.KIND}s"
        argv = await self.cmd("inspect", "--type", into.KIND, *refs)
        out = await self.call(partial(run_cli_tolerant, argv, "[]"), action=action)
        return read(out.strip() or "[]", list[into], action=action)  # type: ignore[valid-type]

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        return False  # a docker process per container would cost more than the overlap saves

    async def rename(self, ref: str, name: str) -> None:
        client = await self.client()
        await self.call(
            lambda: client.container.rename(ref, name), action=f"rename container {ref}", subject=ref
        )

    async def exec(self, ref: str, command: Sequence[str], out: BoundedOutput, err: BoundedOutput) -> int:
        """`docker exec`: its output into `out` and `err`; return its exit code."""
        from python_on_whales.exceptions import DockerException

        argv = await self.cmd("exec", ref, *command)
        try:
            with translated(f"exec in {ref}", ref, keep=DockerException):
                async with aclosing(cli.lines(argv, chunks=True)) as pieces:
                    async for source, chunk in pieces:
                        (err if source == "stderr" else out).add(chunk)
        except DockerException as exc:
            stderr = exc.stderr or ""
            # docker's own failures, before the command ran: "No such container: x" (typed
            # NoSuchContainer), "Container x is not running" (not typed), exit 1 or 125-127.
            if exc.return_code in (1, 125, 126, 127) and (
                "No such container" in stderr or "is not running" in stderr
            ):
                with self.named(), translated(f"exec in {ref}", ref):
                    raise
            return exc.return_code
        return 0

    async def wait(self, ref: str) -> int:
        out = await self.lasting("container", "wait", ref, action=f"wait for {ref}", subject=ref)
        return int(out.strip().splitlines()[-1])

    async def deaths(self, labels: Mapping[str, str], since: datetime | None) -> AsyncGenerator[str, None]:
        # The client's command line, as a child that closing the stream kills: python-on-whales'
        # `system.events` leaves its docker process running when closed.
        argv = ["events", "--format", "{{.ID}}", "--filter", "type=container"]
        argv += ["--filter", f"event={self.died}"]
        argv += [a for k, v in labels.items() for a in ("--filter", f"label={k}={v}")]
        argv += ["--since", docker_time(since)] if since is not None else []
        async for source, raw in self.stream(await self.cmd(*argv), action="watch container exits"):
            if source == "stdout" and raw.strip():
                yield raw.decode().strip()


@contextmanager
def translated(
    action: str, subject: str | None, *, keep: type[BaseException] | None = None
) -> Iterator[None]:
    """Turn python-on-whales' exceptions into `PreflightError`s (`keep` passes through as is)."""
    from python_on_whales.client_config import ClientNotFoundError
    from python_on_whales.exceptions import DockerException

    try:
        yield
    except (ClientNotFoundError, FileNotFoundError) as exc:
        raise no_cli() from exc
    except DockerException as exc:
        if keep is not None and isinstance(exc, keep):
            raise
        raise translate_exception(exc, action=action, subject=subject) from exc


def run_cli(argv: list[str]) -> str:
    """Run a docker command line with python-on-whales' runner (its typed errors); return stdout."""
    from python_on_whales.utils import run

    return str(run(argv))


def run_cli_tolerant(argv: list[str], empty: str) -> str:
    """`run_cli` of a command naming objects some of which are gone ("No such ...", "... not found",
    Podman's "... not known"): what it printed for the others (else `empty`). Any other failure raises."""
    from python_on_whales.exceptions import DockerException

    try:
        return run_cli(argv)
    except DockerException as exc:
        stderr = (exc.stderr or "").lower()
        if is_daemon_down(stderr) or not any(
            gone in stderr for gone in ("no such", "not found", "not known")
        ):
            raise
        return exc.stdout or empty


def run_flags(spec: ContainerSpec) -> list[str]:
    """The flags `docker run` and `docker service create` share: env, labels, process, health."""
    argv = [a for k, v in spec.env.items() for a in ("--env", f"{k}={v}")]
    argv += [a for k, v in spec.labels.items() for a in ("--label", f"{k}={v}")]
    for flag, value in (
        ("--entrypoint", spec.entrypoint),
        ("--workdir", spec.working_dir),
        ("--user", spec.user),
    ):
        argv += [flag, value] if value is not None else []
    argv += ["--init"] if spec.init else []
    argv += ["--read-only"] if spec.read_only else []
    if spec.health is not None:
        health = spec.health
        argv += ["--health-cmd", health.command, "--health-retries", str(health.retries)]
        for flag, seconds in (
            ("--health-interval", health.interval),
            ("--health-timeout", health.timeout),
            ("--health-start-period", health.start_period),
        ):
            argv += [flag, f"{max(seconds, 0.001 if flag != '--health-start-period' else 0):g}s"]
    return argv
