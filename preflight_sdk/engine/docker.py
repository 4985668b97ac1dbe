"""`DockerEngine`: the `Engine` protocol on a real Docker daemon, through python-on-whales.

Every call goes through one `python_on_whales.DockerClient` built from the project's host and
context, and runs off the event loop: blocking calls in worker threads, streams (build, pull,
logs --follow, events) in a thread of their own; cancelling either kills its docker process
(`children.py`). A handful of calls use the client's command line (`client_config.docker_cmd`)
with python-on-whales' own runner and typed errors instead of a typed wrapper; each says why.
On this machine's socket the calls on setup's and clean's critical path go to the Engine API
instead (`api.py` says why and which).
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import aclosing, contextmanager
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio

from ..config.ports import PortSpec
from ..errors import EnvironmentError_
from ..results.lifecycle import LogLine
from . import children
from .api import EngineAPI, local_socket
from .base import (
    BuildSpec,
    ContainerInfo,
    ContainerSpec,
    EngineInfo,
    ExecResult,
    ImageInfo,
    LineSink,
    NetworkInfo,
    RemoveOutcome,
)
from .endpoint import LOOPBACK, endpoint_address, on_local_socket
from .errors import (
    daemon_unreachable,
    is_daemon_down,
    name_the_engine,
    no_cli,
    translate,
    translate_exception,
)
from .inspect import (
    container_from_api_list,
    container_from_inspect,
    container_from_ps,
    merge_log_streams,
    parse_log_bytes,
)
from .outcomes import removal_outcomes
from .output import BuildLines
from .probe import NetworkProber, Prober

if TYPE_CHECKING:
    from python_on_whales import DockerClient

__all__ = ["DockerEngine"]

T = TypeVar("T")
_BUILD_TAIL = 30
LABEL_MANAGED = "preflight.managed"  # on every image preflight builds (and its containers)
_INFO_CACHE: dict[tuple[str, ...], EngineInfo] = {}
_BUILDER_CACHE: dict[tuple[str, ...], Literal["buildx", "legacy"]] = {}
# How many raw log bytes one `logs` call may read while looking for N whole lines.
_LOGS_READ_LIMIT = 8 * 1024 * 1024


class DockerEngine:
    """The Engine on a Docker daemon: the local one, or `host`/`context` (else `DOCKER_HOST`/`DOCKER_CONTEXT`)."""

    prober: Prober = NetworkProber()  # stateless: one for every engine

    def __init__(
        self, docker: str = "docker", *, host: str | None = None, context: str | None = None
    ) -> None:
        self._docker = docker
        self._host = host
        self._context = context
        self._client: DockerClient | None = None
        self._limiter = anyio.CapacityLimiter(16)
        self._creating = anyio.Lock()
        self._engine_api: EngineAPI | bool | None = False  # False: not looked for yet

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

        children.install()
        return DockerClient(client_call=[self._docker], host=self._host, context=self._context)

    def _api(self) -> EngineAPI | None:
        """The Engine API on this machine's socket, for the stock `docker` client only (else None).

        A client given by path or name (Podman, a test's stand-in) gets every call.
        """
        if self._engine_api is False:
            path = local_socket(self._host, self._context) if self._docker == "docker" else None
            self._engine_api = EngineAPI(path) if path else None
        return self._engine_api if isinstance(self._engine_api, EngineAPI) else None

    async def _on_socket(self, fn: Callable[[], T]) -> T:
        """Run a blocking Engine API call in a worker thread; a cancelled caller waits for its answer
        (under a second), so nothing it creates is left unseen by the clean that follows.
        """
        return await anyio.to_thread.run_sync(fn, limiter=self._limiter)

    async def _cmd(self, *args: str) -> list[Any]:
        """The client's docker command line (binary, host, context, config) followed by `args`."""
        from python_on_whales.client_config import ClientNotFoundError

        client = await self._whales()
        try:
            return [*client.client_config.docker_cmd, *args]
        except ClientNotFoundError as exc:
            raise no_cli() from exc

    async def _call(
        self, fn: Callable[[], T], *, action: str, subject: str | None = None, lasting: bool = False
    ) -> T:
        with self._named_engine(), _translated(action, subject):
            return await children.call(fn, limiter=self._limiter, lasting=lasting)

    async def _stream(
        self, make: Callable[[], Iterable[T]], *, action: str, subject: str | None = None
    ) -> AsyncGenerator[T, None]:
        with self._named_engine(), _translated(action, subject):
            async with aclosing(children.stream(make)) as items:
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

    # -- daemon and images -------------------------------------------------------------------

    async def info(self) -> EngineInfo:
        # DOCKER_HOST, DOCKER_CONTEXT and DOCKER_CONFIG (where contexts live) choose the engine
        # when the project names none: each is part of the key.
        key = self._info_key()
        cached = _INFO_CACHE.get(key)
        if cached is not None:
            return cached
        if (api := self._api()) is not None:
            # Two requests instead of python-on-whales' import (0.36 s) and three docker processes;
            # the builder is asked by the first build (`_builder`).
            version = await self._on_socket(partial(api.expect, "GET", "/version", action="ask the daemon"))
            if not (version or {}).get("Version"):
                raise daemon_unreachable("the daemon did not say its version")
            _, bridge = await self._on_socket(partial(api.request, "GET", "/networks/bridge"))
            address, routable = endpoint_address(self._host)
            info = EngineInfo(
                server_version=str(version["Version"]),
                host_gateway=_bridge_gateway(((bridge or {}).get("IPAM") or {}).get("Config") or []),
                endpoint=self._host,
                address=address,
                routable=routable,
            )
            _INFO_CACHE[key] = info
            return info
        client = await self._whales()
        results: dict[str, Any] = {}

        async def ask(name: str, fn: Callable[[], Any]) -> None:
            try:
                results[name] = await self._call(fn, action="ask the daemon")
            except EnvironmentError_ as exc:
                results[name] = exc

        def endpoint() -> str | None:
            # The context's docker endpoint (the default context's is DOCKER_HOST, else the socket).
            context: Any = client.context.inspect(self._context)
            found = (context.endpoints or {}).get("docker")
            return str(found.host) if found is not None and found.host else None

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "version", client.version)
            tg.start_soon(ask, "buildx", client.buildx.version)
            tg.start_soon(ask, "bridge", lambda: client.network.inspect("bridge").ipam.config)
            if not self._host and not self._local_default():
                tg.start_soon(ask, "endpoint", endpoint)
        version = results["version"]
        if isinstance(version, EnvironmentError_):
            raise version
        server = getattr(getattr(version, "server", None), "version", None)
        if not server:
            raise daemon_unreachable("the daemon did not say its version")
        bridge = results["bridge"]
        found = self._host or results.get("endpoint")
        where = found if isinstance(found, str) else None
        address, routable = endpoint_address(where)
        info = EngineInfo(
            server_version=str(server),
            builder="legacy" if isinstance(results["buildx"], EnvironmentError_) else "buildx",
            host_gateway=None if isinstance(bridge, EnvironmentError_) else _bridge_gateway(bridge or []),
            endpoint=where,
            address=address,
            routable=routable,
        )
        # The daemon's facts do not change while it runs: ask once per process.
        _INFO_CACHE[key] = info
        return info

    def _info_key(self) -> tuple[str, ...]:
        return (
            self._docker,
            self._host or os.environ.get("DOCKER_HOST", ""),
            self._context or os.environ.get("DOCKER_CONTEXT", ""),
            os.environ.get("DOCKER_CONFIG", ""),
        )

    async def _builder(self, info: EngineInfo) -> Literal["buildx", "legacy"]:
        """buildx when the CLI has the plugin, else the legacy builder (asked once per process)."""
        if info.builder is not None:
            return info.builder
        key = self._info_key()
        if key not in _BUILDER_CACHE:
            client = await self._whales()
            try:
                await self._call(client.buildx.version, action="ask the daemon")
                _BUILDER_CACHE[key] = "buildx"
            except EnvironmentError_:
                _BUILDER_CACHE[key] = "legacy"
        return _BUILDER_CACHE[key]

    async def reach(self) -> tuple[str, bool]:
        if self._local_default():
            return LOOPBACK, True  # no daemon call: status and setup ask this often
        info = await self.info()
        return info.address, info.routable

    def _local_default(self) -> bool:
        return on_local_socket(self._host, self._context)

    async def image_exists(self, ref: str) -> bool:
        client = await self._whales()
        exists: bool = await self._call(
            lambda: client.image.exists(ref), action=f"inspect image {ref}", subject=ref
        )
        return exists

    async def image_id(self, ref: str) -> str | None:
        """Return the id of image `ref`, or None when there is none."""
        from python_on_whales.exceptions import NoSuchImage

        if (api := self._api()) is not None:
            found = await self._on_socket(partial(api.inspect, "image", ref))
            return None if found is None else str(found.get("Id", ""))
        client = await self._whales()

        def ask() -> str | None:
            try:
                return str(client.image.inspect(ref).id)
            except NoSuchImage:
                return None

        return await self._call(ask, action=f"inspect image {ref}", subject=ref)

    async def inspect_image(self, ref: str) -> ImageInfo | None:
        from python_on_whales.exceptions import NoSuchImage

        if (api := self._api()) is not None:
            found = await self._on_socket(partial(api.inspect, "image", ref))
            if found is None:
                return None
            labels = (found.get("Config") or {}).get("Labels") or {}
            return ImageInfo(
                id=str(found.get("Id", "")), labels=dict(labels), tags=list(found.get("RepoTags") or [])
            )
        client = await self._whales()

        def ask() -> ImageInfo | None:
            try:
                image = client.image.inspect(ref)
            except NoSuchImage:
                return None
            return ImageInfo(
                id=str(image.id), labels=dict(image.config.labels or {}), tags=list(image.repo_tags or [])
            )

        return await self._call(ask, action=f"inspect image {ref}", subject=ref)

    async def pull(self, ref: str, on_line: LineSink) -> None:
        from python_on_whales.utils import stream_stdout_and_stderr

        # The client's command line: `image.pull(stream_logs=True)` starts the CLI from a thread
        # pool of its own, out of reach of the cancellation of this call.
        argv = await self._cmd("image", "pull", ref)
        lines = BuildLines(on_line, tail=_BUILD_TAIL)
        try:
            async for source, raw in self._stream(
                lambda: stream_stdout_and_stderr(argv), action=f"pull {ref}", subject=ref
            ):
                lines.feed(raw, source)
        except EnvironmentError_:
            raise translate("\n".join(lines.tail), action=f"pull {ref}", subject=ref) from None

    async def build(self, spec: BuildSpec, on_line: LineSink) -> None:
        from python_on_whales.exceptions import DockerException
        from python_on_whales.utils import stream_stdout_and_stderr

        builder = await self._builder(await self.info())
        client = await self._whales()
        before = await self.inspect_image(spec.image)
        lines = BuildLines(on_line, tail=_BUILD_TAIL, legacy=builder == "legacy")

        def buildx() -> Iterator[str]:
            return client.buildx.build(  # type: ignore[return-value]
                spec.context,
                file=spec.dockerfile,
                tags=[spec.image],
                labels=dict(spec.labels),
                build_args=dict(spec.args),
                target=spec.target,
                cache=not spec.no_cache,
                load=True,
                progress="plain",
                stream_logs=True,
            )

        # The client's command line for the legacy builder: `image.legacy_build` prints its output
        # instead of yielding it and has no `--force-rm` (the legacy builder otherwise keeps the
        # intermediate container of a failed step).
        argv = await self._cmd("build", "--force-rm", "-f", spec.dockerfile, "-t", spec.image)
        argv += ["--no-cache"] if spec.no_cache else []
        argv += ["--target", spec.target] if spec.target else []
        argv += [a for k, v in spec.args.items() for a in ("--build-arg", f"{k}={v}")]
        argv += [a for k, v in spec.labels.items() for a in ("--label", f"{k}={v}")]
        argv.append(spec.context)

        def legacy() -> Iterable[tuple[str, bytes]]:
            return stream_stdout_and_stderr(argv, env={"DOCKER_BUILDKIT": "0"})

        failure: DockerException | None = None
        try:
            with _translated(f"build {spec.image}", spec.image, keep=DockerException):
                if builder == "buildx":
                    async with aclosing(children.stream(buildx)) as text:
                        async for piece in text:
                            lines.feed(piece.encode())
                else:
                    async with aclosing(children.stream(legacy)) as pairs:
                        async for source, raw in pairs:
                            lines.feed(raw, source)
        except DockerException as exc:
            failure = exc
        lines.flush()
        if failure is None:
            await self._drop_replaced(spec.image, before)
            return
        tail = lines.tail
        error = translate(
            "\n".join(tail) or (failure.stderr or ""), action=f"build {spec.image}", subject=spec.image
        )
        # Only an unreachable daemon is retryable: any other docker failure is the build's.
        if error.code == "DOCKER_ERROR" and not error.retryable:
            raise EnvironmentError_(
                f"docker build of {spec.image} failed (exit {failure.return_code}): "
                f"{lines.last_error or (tail[-1] if tail else 'no output')}",
                code="BUILD_FAILED",
                hint="read details.logTail (the last 30 lines of the build); fix the Dockerfile or the context",
                details={
                    "image": spec.image,
                    "dockerfile": spec.dockerfile,
                    "exitCode": failure.return_code,
                    "logTail": list(tail),
                },
            ) from failure
        raise error from failure

    async def _drop_replaced(self, ref: str, before: ImageInfo | None) -> None:
        """Remove the image a build took the tag from, when preflight built it and nothing else names it.

        Rebuilding a tag (another checkout, changed labels or sources) leaves the former image
        dangling (`<none>`); one a container still uses stays, as Docker refuses to remove it.
        """
        from python_on_whales.exceptions import DockerException

        if before is None or before.labels.get(LABEL_MANAGED) != "true":
            return
        after = await self.inspect_image(ref)
        if after is None or after.id == before.id:
            return
        client = await self._whales()

        def drop() -> None:
            try:
                if not client.image.inspect(before.id).repo_tags:
                    client.image.remove(before.id, prune=True)
            except DockerException:
                pass  # in use by a container, or gone already: nothing to tidy

        await self._call(drop, action=f"remove the image {ref} replaced")

    async def list_images(self, labels: Mapping[str, str]) -> list[ImageInfo]:
        client = await self._whales()
        filters: Any = [("label", f"{key}={value}") for key, value in labels.items()]

        def ask() -> list[ImageInfo]:
            # `image.list` gives ids; each image's tags are one inspect (a project has a few).
            return [
                ImageInfo(
                    id=str(image.id), labels=dict(image.config.labels or {}), tags=list(image.repo_tags or [])
                )
                for image in client.image.list(filters=filters)
            ]

        return sorted(await self._call(ask, action="list images"), key=lambda i: (i.tags, i.id))

    async def remove_images(self, refs: Sequence[str]) -> list[RemoveOutcome]:
        """Remove images (not forced: an image a container still uses stays, reported as failed)."""
        from python_on_whales.exceptions import DockerException, NoSuchImage

        client = await self._whales()

        def remove(ref: str) -> RemoveOutcome:
            try:
                client.image.remove(ref, prune=True)
            except NoSuchImage:
                return RemoveOutcome(ref=ref, action="not_found")
            except DockerException as exc:
                if is_daemon_down(exc.stderr or ""):
                    raise
                return RemoveOutcome(ref=ref, action="failed", error=_first_line(exc.stderr or str(exc)))
            return RemoveOutcome(ref=ref, action="removed")

        outcomes: list[RemoveOutcome] = []
        for ref in refs:  # one at a time: `docker rmi` of many stops at the first in use
            outcomes.append(await self._call(partial(remove, ref), action="remove images"))
        return outcomes

    # -- networks ----------------------------------------------------------------------------

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        if (api := self._api()) is not None:
            network_id = await self._on_socket(partial(api.create_network, name, labels))
            return NetworkInfo(id=network_id, name=name, labels=dict(labels))
        client = await self._whales()
        network = await self._call(
            lambda: client.network.create(name, labels=dict(labels)),
            action=f"create network {name}",
            subject=name,
        )
        return NetworkInfo(id=str(network.id), name=name, labels=dict(labels))

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkInfo]:
        if (api := self._api()) is not None:
            found = await self._on_socket(partial(api.list_networks, labels))
            return [
                NetworkInfo(
                    id=str(n.get("Id", "")), name=str(n.get("Name", "")), labels=dict(n.get("Labels") or {})
                )
                for n in found
            ]
        # The client's command line: `network.list` returns bare ids, and each name would be one
        # more `docker network inspect` (a docker process each) on clean's critical path.
        argv = await self._cmd("network", "ls", "--no-trunc", "--format", "{{json .}}")
        argv += [a for k, v in labels.items() for a in ("--filter", f"label={k}={v}")]
        out = await self._call(partial(_run_cli, argv), action="list networks")
        networks = []
        for raw in out.splitlines():
            if raw.strip():
                item = json.loads(raw)
                networks.append(
                    NetworkInfo(
                        id=item.get("ID", ""),
                        name=item.get("Name", ""),
                        labels=_labels(item.get("Labels", "")),
                    )
                )
        return networks

    async def remove_networks(self, names: Sequence[str]) -> list[RemoveOutcome]:
        if not names:
            return []
        if (api := self._api()) is not None:
            return await self._remove_on_socket(api, "network", names, force=False)
        client = await self._whales()
        return await self._removal(
            lambda: client.network.remove(list(names)), names, action="remove networks"
        )

    # -- containers --------------------------------------------------------------------------

    async def run(self, spec: ContainerSpec) -> str:
        if (api := self._api()) is not None:
            return await self._on_socket(partial(api.run, spec))
        # The client's command line: `container.run(detach=True)` inspects the container it
        # started (one more docker process and a pydantic parse per service on setup's critical
        # path: +25 ms a service, 1.08x the floor for one service instead of 1.00x).
        argv = await self._cmd(
            "run", "--detach", "--pull", "never", "--name", spec.name, "--network", spec.network
        )
        argv += [a for alias in spec.aliases for a in ("--network-alias", alias)]
        argv += [a for port in spec.ports for a in ("--publish", self._publish_arg(port))]
        argv += [a for volume in spec.volumes for a in ("--volume", volume)]
        argv += [a for host, address in spec.add_hosts for a in ("--add-host", f"{host}:{address}")]
        argv += run_flags(spec)
        argv += [spec.image, *(spec.command or [])]
        out = await self._call(
            partial(_run_cli, argv), action=f"start container {spec.name}", subject=spec.name
        )
        return out.strip().splitlines()[-1]

    def _log_pieces(
        self,
        client: DockerClient,
        ref: str,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        follow: bool = False,
    ) -> Iterable[tuple[str, bytes]]:
        """`(stream, line)` pairs of `logs --timestamps` (blocking; a swarm reads a service's)."""
        return client.container.logs(  # type: ignore[return-value]
            ref, tail=tail, since=since, until=until, timestamps=True, follow=follow, stream=True
        )

    def _log_line(self, raw: bytes) -> bytes:
        """One line of `logs --timestamps` as the parser reads it (Podman's needs mending)."""
        return raw

    def _publish_arg(self, port: PortSpec) -> str:
        """The `--publish` argument for one port (Podman writes a free host port differently)."""
        return port.docker_arg()

    async def inspect(self, refs: Sequence[str]) -> list[ContainerInfo]:
        from python_on_whales.exceptions import DockerException

        if not refs:
            return []
        if (api := self._api()) is not None:
            found = await self._each_on_socket(partial(api.inspect, "container"), refs)
            return [container_from_inspect(item) for item in found if item is not None]
        # The client's command line: `container.inspect([...])` runs one `docker inspect` per
        # container and parses each into pydantic models; status and clean inspect every
        # container of a project at once, in one process.
        argv = await self._cmd("container", "inspect", *refs)

        def ask() -> str:
            try:
                return _run_cli(argv)
            except DockerException as exc:
                # Some refs unknown ("No such container"): the others are still on stdout.
                if is_daemon_down(exc.stderr or "") or not (exc.stdout or "").strip().startswith("["):
                    if "no such" in (exc.stderr or "").lower():
                        return "[]"
                    raise
                return exc.stdout or "[]"

        out = await self._call(ask, action="inspect containers")
        try:
            items = json.loads(out or "[]")
        except json.JSONDecodeError:
            return []
        return [container_from_inspect(item) for item in items]

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        if (api := self._api()) is not None:
            listed = await self._on_socket(partial(api.list_containers, labels))
            if detail:
                return await self.inspect([str(item.get("Id", "")) for item in listed])
            return [container_from_api_list(item) for item in listed]
        filters = [a for k, v in labels.items() for a in ("--filter", f"label={k}={v}")]
        if detail:
            client = await self._whales()
            found = await self._call(
                lambda: client.container.list(
                    all=True, filters=[("label", f"{k}={v}") for k, v in labels.items()]
                ),
                action="list containers",
            )
            return await self.inspect([str(c.id) for c in found])
        # The client's command line: `container.list` returns bare ids, and reading a name or a
        # state inspects each container (a docker process each); `docker ps --format` gives id,
        # name, state and labels of all of them in one.
        argv = await self._cmd("ps", "-a", "--no-trunc", "--format", "{{json .}}", *filters)
        out = await self._call(partial(_run_cli, argv), action="list containers")
        return [container_from_ps(json.loads(line)) for line in out.splitlines() if line.strip()]

    async def remove_containers(self, refs: Sequence[str], *, force: bool) -> list[RemoveOutcome]:
        from python_on_whales.exceptions import DockerException

        if not refs:
            return []
        if (api := self._api()) is not None:
            return await self._remove_on_socket(api, "container", refs, force=force)
        # The client's command line: `container.remove` drops docker's stdout, the only place
        # that says which refs were removed (`rm -f` of a missing container exits 0 silently).
        argv = await self._cmd("container", "rm", "--volumes", *(["--force"] if force else []), *refs)

        def remove() -> tuple[str, str, int]:
            try:
                return _run_cli(argv), "", 0
            except DockerException as exc:
                return exc.stdout or "", exc.stderr or "", exc.return_code

        stdout, stderr, code = await self._call(remove, action="remove containers")
        return removal_outcomes(refs, stdout, stderr, code, action="remove containers")

    async def _remove_on_socket(
        self, api: EngineAPI, kind: str, refs: Sequence[str], *, force: bool
    ) -> list[RemoveOutcome]:
        """Remove each of `refs` at once, as `docker rm` and `docker network rm` do."""
        return await self._each_on_socket(partial(api.remove, kind, force=force), refs)

    async def _each_on_socket(self, fn: Callable[[str], T], refs: Sequence[str]) -> list[T]:
        """`fn(ref)` for every ref, each in a worker thread of its own; the answers in `refs`' order."""
        answers: dict[int, T] = {}

        async def one(index: int, ref: str) -> None:
            answers[index] = await self._on_socket(partial(fn, ref))

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

    async def stop_containers(self, refs: Sequence[str], *, grace: float = 10.0) -> None:
        if refs:
            client = await self._whales()
            await self._call(
                lambda: client.container.stop(list(refs), time=int(grace)), action="stop containers"
            )

    async def logs(
        self,
        ref: str,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[LogLine]:
        client = await self._whales()

        def read(count: int | None) -> list[tuple[str, bytes]]:
            return list(self._log_pieces(client, ref, tail=count, since=since, until=until))

        ask = tail
        while True:
            pieces = await self._call(partial(read, ask), action=f"read the logs of {ref}", subject=ref)
            lines, entries = merge_log_streams((source, self._log_line(raw)) for source, raw in pieces)
            # `--tail` counts the daemon's log entries, and a line longer than 16 KB is several:
            # ask for more until N whole lines came back (or the daemon has no more).
            if tail is None or ask is None or len(lines) > tail or entries < ask:
                break
            if sum(len(raw) for _, raw in pieces) > _LOGS_READ_LIMIT:
                break
            ask *= 4
        return lines[-tail:] if tail is not None and tail > 0 else ([] if tail == 0 else lines)

    async def follow_logs(self, ref: str, *, since: datetime | None = None) -> AsyncGenerator[LogLine, None]:
        client = await self._whales()

        def follow() -> Iterable[tuple[str, bytes]]:
            return self._log_pieces(client, ref, since=since, follow=True)

        async for source, raw in self._stream(follow, action=f"follow the logs of {ref}", subject=ref):
            parsed = parse_log_bytes(self._log_line(raw), "stderr" if source == "stderr" else "stdout")
            if parsed is not None:
                yield parsed

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        from python_on_whales.exceptions import DockerException

        client = await self._whales()
        out: list[bytes] = []
        err: list[bytes] = []

        def run() -> int:
            try:
                pieces: Any = client.container.execute(ref, list(command), stream=True)
                for source, chunk in pieces:
                    (err if source == "stderr" else out).append(chunk)
            except DockerException as exc:
                stderr = exc.stderr or ""
                # docker's own failures, before the command ran: "No such container: x" (typed
                # NoSuchContainer), "Container x is not running" (not typed), exit 1 or 125-127.
                if exc.return_code in (1, 125, 126, 127) and (
                    "No such container" in stderr or "is not running" in stderr
                ):
                    raise
                return exc.return_code
            return 0

        started = anyio.current_time()
        code: int | None = None
        with anyio.move_on_after(timeout):
            code = await self._call(run, action=f"exec in {ref}", subject=ref, lasting=True)
        elapsed = anyio.current_time() - started
        if code is None:
            return ExecResult(
                exit_code=-1,
                stdout="",
                stderr=f"timed out after {timeout:.1f}s",
                duration=timeout,
                timed_out=True,
            )
        return ExecResult(
            exit_code=code,
            stdout=b"".join(out).decode("utf-8", "replace"),
            stderr=b"".join(err).decode("utf-8", "replace"),
            duration=elapsed,
        )

    async def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        if (api := self._api()) is not None:
            wanted = {
                "type": ["container"],
                "event": ["die"],
                "label": [f"{k}={v}" for k, v in labels.items()],
            }
            async with aclosing(children.stream(partial(api.events, wanted, since))) as dying:
                async for died in dying:
                    yield str(died.get("id") or (died.get("Actor") or {}).get("ID", ""))
            return
        client = await self._whales()
        items = list(labels.items())
        # One label goes to the daemon (python-on-whales takes filters as a mapping, one value per
        # key); the others are checked on each event's attributes, which carry the labels.
        rest = dict(items[1:])
        filters = {"type": "container", "event": "die"}
        if items:
            filters["label"] = f"{items[0][0]}={items[0][1]}"

        def events() -> Iterable[Any]:
            return client.system.events(since=since, filters=filters)

        async for event in self._stream(events, action="watch container exits"):
            attributes = dict(getattr(event.actor, "attributes", None) or {})
            if all(attributes.get(k) == v for k, v in rest.items()):
                yield str(event.actor.id)

    async def wait_exit(self, ref: str) -> int:
        if (api := self._api()) is not None:
            return await children.call(partial(api.wait, ref), limiter=self._limiter)
        client = await self._whales()
        code = await self._call(
            lambda: client.container.wait(ref), action=f"wait for {ref}", subject=ref, lasting=True
        )
        return int(code)


@contextmanager
def _translated(
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


def _run_cli(argv: list[Any]) -> str:
    """Run a docker command line with python-on-whales' runner (its typed errors); return stdout."""
    from python_on_whales.utils import run

    return str(run(argv))


def run_flags(spec: ContainerSpec) -> list[str]:
    """The flags `docker run` and `docker service create` share: env, labels, process, health."""
    argv = [a for k, v in spec.env.items() for a in ("--env", f"{k}={v}")]
    argv += [a for k, v in spec.labels.items() for a in ("--label", f"{k}={v}")]
    if spec.entrypoint is not None:
        argv += ["--entrypoint", spec.entrypoint]
    if spec.working_dir is not None:
        argv += ["--workdir", spec.working_dir]
    if spec.user is not None:
        argv += ["--user", spec.user]
    if spec.init:
        argv.append("--init")
    if spec.read_only:
        argv.append("--read-only")
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


def _bridge_gateway(configs: list[dict[str, Any]]) -> str | None:
    """Return the default bridge's gateway: what `host-gateway` resolves to inside containers."""
    for config in configs:
        if config.get("Gateway") and ":" not in config["Gateway"]:
            return str(config["Gateway"])
        subnet = str(config.get("Subnet") or "")
        if subnet and ":" not in subnet:
            # Docker gives the bridge the first address of its subnet when no gateway is listed.
            network = ipaddress.ip_network(subnet, strict=False)
            return str(next(network.hosts()))
    return None


def _labels(text: str) -> dict[str, str]:
    labels = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            labels[key.strip()] = value
    return labels


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().removeprefix("Error response from daemon: ")
    return ""
