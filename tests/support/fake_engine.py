"""`FakeEngine`: an in-memory Docker for unit tests of ordering, concurrency, states and errors.

Containers "run" according to a `Behaviour` per image (or per service label): ready after some
probes, exit with a status after a delay, write log lines. The fake also carries its own prober,
which the lifecycle uses (`lifecycle.health.probe.prober_for`), so health checks need no real port.
Every call is recorded in `calls` with the fake clock time, so tests can assert order and overlap.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import msgspec
from anyio.abc import TaskGroup

from preflight_sdk.core.errors import EnvironmentError_, PreflightError
from preflight_sdk.core.results.lifecycle import LogLine, PortMapping
from preflight_sdk.engine.base import (
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
from preflight_sdk.engine.errors import daemon_unreachable
from preflight_sdk.engine.inspect import parse_time
from preflight_sdk.lifecycle.health.probe import ProbeResult

__all__ = ["Behaviour", "FakeEngine"]


class Behaviour(msgspec.Struct, kw_only=True):
    """How a fake container acts.

    Attributes:
        ready_after: probes that fail before one succeeds (None: never ready).
        exit_after: seconds after start when the container exits (None: runs forever).
        exit_code: the status it exits with.
        logs: lines it writes at start (`stderr:` prefix for stderr).
        start_delay: seconds `run` takes.
        run_error: an error `run` raises instead of starting.
    """

    ready_after: int | None = 0
    exit_after: float | None = None
    exit_code: int = 0
    logs: list[str] = msgspec.field(default_factory=list)
    start_delay: float = 0.0
    run_error: Any = None


def _stamp(moment: datetime) -> str:
    """Docker's log timestamp of `moment` (RFC 3339, UTC, 9 fraction digits)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


class _Container:
    def __init__(self, cid: str, spec: ContainerSpec, behaviour: Behaviour, ports: list[PortMapping]) -> None:
        self.id = cid
        self.spec = spec
        self.behaviour = behaviour
        self.ports = ports
        self.started = datetime.now(UTC)
        self.running = True
        self.exit_code: int | None = None
        self.probes = 0
        self.exited = anyio.Event()
        self.logs = [
            LogLine(
                timestamp=_stamp(self.started),
                stream="stderr" if line.startswith("stderr:") else "stdout",
                text=line.removeprefix("stderr:").strip(),
            )
            for line in behaviour.logs
        ]


class _FakeProber:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine

    async def http(self, host: str, port: int, path: str, timeout: float) -> ProbeResult:
        return self.engine._probe(port=port, host=host)

    async def tcp(self, host: str, port: int, timeout: float, *, proxied: bool) -> ProbeResult:
        return self.engine._probe(port=port, host=host)


class FakeEngine:
    """An in-memory Engine (see the module docstring)."""

    def __init__(
        self,
        *,
        images: Sequence[str] = (),
        daemon_up: bool = True,
        builder: str = "legacy",
        address: str = "127.0.0.1",
        routable: bool = True,
        first_port: int = 40000,
    ) -> None:
        self.images: set[str] = set(images)
        # Where published ports are reached (another machine's address stands for a remote engine).
        self.address = address
        self.routable = routable
        self.probed_hosts: list[str] = []
        self.image_labels: dict[str, dict[str, str]] = {}  # labels of the images built here
        self.labels_free = True  # False: builds carry no labels, as with Docker's legacy builder
        self._image_builds = itertools.count(1)
        self.image_ids: dict[str, str] = {}
        self.daemon_up = daemon_up
        self.builder = builder
        self.behaviours: dict[str, Behaviour] = {}
        self.build_failures: dict[str, list[str]] = {}
        self.build_lines: list[str] = ["Step 1/2 : FROM scratch", "Successfully built"]
        self.build_delay = 0.0
        self.containers: dict[str, _Container] = {}
        self.networks: dict[str, NetworkInfo] = {}
        self.calls: list[tuple[float, str, str]] = []
        # Container or network name -> the error docker gives when asked to remove it.
        self.removal_errors: dict[str, str] = {}
        # Whether `detach` detaches (Docker on its socket) or declines (the CLI lane, a swarm); the
        # containers detached from their network, which no longer keep it in use.
        self.detaches = True
        self.detached: set[str] = set()
        self.prober = _FakeProber(self)
        self._ids = itertools.count(1)
        # Host ports given to `0:<port>` specs, in order (a test may serve a real server on the first).
        self._ports = itertools.count(first_port)
        self._exits: list[tuple[str, dict[str, str]]] = []
        self._exit_event = anyio.Event()
        self._tg: TaskGroup | None = None
        self._tg_cm: TaskGroup | None = None

    async def __aenter__(self) -> FakeEngine:
        self._tg_cm = anyio.create_task_group()
        self._tg = await self._tg_cm.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg_cm is not None
        self._tg_cm.cancel_scope.cancel()
        await self._tg_cm.__aexit__(None, None, None)
        self._tg = None

    # -- helpers for tests -------------------------------------------------------------------

    def behave(self, key: str, behaviour: Behaviour) -> None:
        """Set how containers of service (or image) `key` act."""
        self.behaviours[key] = behaviour

    def write_log(
        self,
        ref: str,
        text: str,
        *,
        stream: Literal["stdout", "stderr"] = "stdout",
        at: datetime | None = None,
    ) -> None:
        """Add a line to a container's output, written at `at` (default: now)."""
        container = self._find(ref)
        if container is None:
            raise KeyError(ref)
        line = LogLine(
            timestamp=_stamp(at or datetime.now(UTC)),
            stream=stream,
            text=text,
        )
        container.logs.append(line)
        container.logs.sort(key=lambda entry: entry.timestamp)  # docker returns them in time order

    def _record(self, call: str, subject: str = "") -> None:
        self.calls.append((anyio.current_time(), call, subject))

    def _check(self) -> None:
        if not self.daemon_up:
            raise daemon_unreachable(
                "Cannot connect to the Docker daemon at unix:///var/run/docker.sock (fake)"
            )

    def _behaviour(self, spec: ContainerSpec) -> Behaviour:
        service = spec.labels.get("preflight.service", "")
        return self.behaviours.get(service) or self.behaviours.get(spec.image) or Behaviour()

    def _probe(self, *, port: int, host: str = "127.0.0.1") -> ProbeResult:
        self.probed_hosts.append(host)
        for container in self.containers.values():
            owns = any(p.host == port or p.container == port for p in container.ports)
            if owns and container.running:
                container.probes += 1
                ready_after = container.behaviour.ready_after
                if ready_after is not None and container.probes > ready_after:
                    return ProbeResult(True, "HTTP 200")
                return ProbeResult(False, "connection refused")
        return ProbeResult(False, "connection refused")

    async def _lifecycle(self, container: _Container) -> None:
        if container.behaviour.exit_after is None:
            return
        await anyio.sleep(container.behaviour.exit_after)
        if container.running:
            self._stop(container, container.behaviour.exit_code)

    def _stop(self, container: _Container, code: int) -> None:
        container.running = False
        container.exit_code = code
        container.exited.set()
        self._exits.append((container.id, dict(container.spec.labels)))
        self._exit_event.set()
        self._exit_event = anyio.Event()

    # -- Engine ------------------------------------------------------------------------------

    async def info(self) -> EngineInfo:
        self._check()
        return EngineInfo(
            server_version="fake",
            builder="buildx" if self.builder == "buildx" else "legacy",
            host_gateway="127.0.0.1",
            endpoint=None if self.routable else f"tcp://{self.address}:2375",
            address=self.address,
            routable=self.routable,
        )

    async def reach(self) -> tuple[str, bool]:
        self._check()
        return self.address, self.routable

    async def inspect_image(self, ref: str) -> ImageInfo | None:
        self._check()
        ref = next((tag for tag in self.images if self._image_id(tag) == ref), ref)  # by id too
        if ref not in self.images:
            return None
        return ImageInfo(id=self._image_id(ref), labels=dict(self.image_labels.get(ref, {})), tags=[ref])

    async def pull(self, ref: str, on_line: LineSink) -> None:
        self._check()
        self._record("pull", ref)
        raise EnvironmentError_(f"cannot pull {ref}: no registry (fake)", code="DOCKER_ERROR")

    async def build(self, spec: BuildSpec, on_line: LineSink) -> str:
        self._check()
        self._record("build-start", spec.image)
        await anyio.sleep(self.build_delay)
        for line in self.build_failures.get(spec.image, self.build_lines):
            on_line(line)
        self._record("build-end", spec.image)
        if spec.image in self.build_failures:
            raise EnvironmentError_(
                f"docker build of {spec.image} failed",
                code="BUILD_FAILED",
                details={"logTail": self.build_failures[spec.image][-30:]},
            )
        self.images.add(spec.image)
        # Docker's legacy builder leaves labels off (each would be a build step of its own).
        self.image_labels[spec.image] = dict(spec.labels) if self.labels_free else {}
        self.image_ids[spec.image] = f"sha256:{spec.image}-{next(self._image_builds)}"
        return self.image_ids[spec.image]

    def _image_id(self, image: str) -> str:
        return self.image_ids.get(image, f"sha256:{image}")

    async def list_images(self, labels: Mapping[str, str]) -> list[ImageInfo]:
        self._check()
        return [
            ImageInfo(id=self._image_id(image), labels=dict(have), tags=[image])
            for image, have in self.image_labels.items()
            if image in self.images and all(have.get(k) == v for k, v in labels.items())
        ]

    async def remove_images(self, refs: Sequence[str]) -> list[RemoveOutcome]:
        self._check()
        by_id = {self._image_id(image): image for image in self.images}
        outcomes = []
        for ref in refs:
            image = by_id.get(ref, ref)
            self._record("image-remove", image)
            if image in self.removal_errors:
                outcomes.append(RemoveOutcome(ref=ref, action="failed", error=self.removal_errors[image]))
            elif image in self.images:
                self.images.discard(image)
                outcomes.append(RemoveOutcome(ref=ref, action="removed"))
            else:
                outcomes.append(RemoveOutcome(ref=ref, action="not_found"))
        return outcomes

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        self._check()
        self._record("network-create", name)
        if name in self.networks:
            raise EnvironmentError_(
                f"cannot create network {name}",
                code="DOCKER_ERROR",
                details={"stderr": f"network with name {name} already exists"},
            )
        self.networks[name] = NetworkInfo(id=f"net{len(self.networks)}", name=name, labels=dict(labels))
        return self.networks[name]

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkInfo]:
        self._check()
        return [n for n in self.networks.values() if all(n.labels.get(k) == v for k, v in labels.items())]

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        self._check()
        self._record("network-detach", network)
        if self.detaches:
            self.detached |= {
                c.id for c in map(self._find, refs) if c is not None and c.spec.network == network
            }
        return self.detaches

    async def remove_networks(self, names: Sequence[str]) -> list[RemoveOutcome]:
        self._check()
        outcomes = []
        for name in names:
            self._record("network-remove", name)
            if name in self.networks and name in self.removal_errors:
                outcomes.append(RemoveOutcome(ref=name, action="failed", error=self.removal_errors[name]))
                continue
            in_use = [
                c for c in self.containers.values() if c.spec.network == name and c.id not in self.detached
            ]
            if name in self.networks and in_use:
                # Docker's words for a network its containers still use.
                error = f"error while removing network: network {name} has active endpoints"
                outcomes.append(RemoveOutcome(ref=name, action="failed", error=error))
                continue
            found = self.networks.pop(name, None)
            outcomes.append(RemoveOutcome(ref=name, action="removed" if found else "not_found"))
        return outcomes

    async def run(self, spec: ContainerSpec) -> str:
        self._check()
        behaviour = self._behaviour(spec)
        self._record("run-start", spec.name)
        await anyio.sleep(behaviour.start_delay)
        if isinstance(behaviour.run_error, PreflightError):
            raise behaviour.run_error
        if spec.image not in self.images:
            raise EnvironmentError_(
                f"cannot start {spec.name}: image {spec.image} is not built",
                code="NOT_BUILT",
                hint="call `build` first",
                details={"image": spec.image},
            )
        if any(c.spec.name == spec.name for c in self.containers.values()):
            raise EnvironmentError_(
                f"cannot start {spec.name}: the name is already in use", code="DOCKER_ERROR"
            )
        cid = f"{next(self._ids):064x}"
        ports = [PortMapping(host=p.host or next(self._ports), container=p.container) for p in spec.ports]
        container = _Container(cid, spec, behaviour, ports)
        self.containers[cid] = container
        self._record("run-end", spec.name)
        if behaviour.exit_after == 0:
            self._stop(container, behaviour.exit_code)
        elif behaviour.exit_after is not None:
            if self._tg is None:
                raise RuntimeError(
                    "use `async with FakeEngine() as engine:` for behaviours with exit_after > 0"
                )
            self._tg.start_soon(self._lifecycle, container)
        return cid

    async def inspect(self, refs: Sequence[str]) -> list[ContainerInfo]:
        self._check()
        return [self._info(c) for ref in refs if (c := self._find(ref)) is not None]

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        self._check()
        return [
            self._info(c)
            for c in self.containers.values()
            if all(c.spec.labels.get(k) == v for k, v in labels.items())
        ]

    async def remove_containers(self, refs: Sequence[str], *, force: bool) -> list[RemoveOutcome]:
        self._check()
        outcomes = []
        for ref in refs:
            container = self._find(ref)
            self._record("remove", ref)
            if container is None:
                outcomes.append(RemoveOutcome(ref=ref, action="not_found"))
            elif container.spec.name in self.removal_errors:
                error = self.removal_errors[container.spec.name]
                outcomes.append(RemoveOutcome(ref=ref, action="failed", error=error))
            elif container.running and not force:
                outcomes.append(
                    RemoveOutcome(ref=ref, action="failed", error="container is running: stop it first")
                )
            else:
                if container.running:
                    self._stop(container, 137)
                del self.containers[container.id]
                outcomes.append(RemoveOutcome(ref=ref, action="removed"))
        return outcomes

    async def rename_container(self, ref: str, name: str) -> bool:
        self._check()
        self._record("rename", ref)
        container = self._find(ref)
        if container is None:
            raise EnvironmentError_(f"No such container: {ref}", code="CONTAINER_NOT_FOUND")
        container.spec = msgspec.structs.replace(container.spec, name=name)
        return True

    async def stop_containers(self, refs: Sequence[str], *, grace: float = 10.0) -> None:
        self._check()
        for ref in refs:
            self._record("stop", ref)
            container = self._find(ref)
            if container is not None and container.running:
                self._stop(container, 143)

    async def logs(
        self,
        ref: str,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[LogLine]:
        self._check()
        container = self._find(ref)
        if container is None:
            raise EnvironmentError_(f"no such container {ref}", code="CONTAINER_NOT_FOUND")
        lines = [line for line in container.logs if _within(line, since, until)]
        return lines[-tail:] if tail else lines if tail is None else []

    async def follow_logs(self, ref: str, *, since: datetime | None = None) -> AsyncGenerator[LogLine, None]:
        for line in await self.logs(ref, since=since):
            yield line
        await anyio.sleep_forever()

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        self._check()
        self._record("exec", ref)
        return ExecResult(exit_code=0, stdout="", stderr="", duration=0.0)

    async def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        seen = 0
        while True:
            while seen < len(self._exits):
                cid, container_labels = self._exits[seen]
                seen += 1
                if all(container_labels.get(k) == v for k, v in labels.items()):
                    yield cid
            await self._exit_event.wait()

    async def wait_exit(self, ref: str) -> int:
        container = self._find(ref)
        if container is None:
            raise EnvironmentError_(f"no such container {ref}", code="CONTAINER_NOT_FOUND")
        await container.exited.wait()
        return container.exit_code or 0

    # -- internals ---------------------------------------------------------------------------

    def _find(self, ref: str) -> _Container | None:
        for container in self.containers.values():
            if container.id == ref or container.id.startswith(ref) or container.spec.name == ref:
                return container
        return None

    def _info(self, container: _Container) -> ContainerInfo:
        return ContainerInfo(
            id=container.id,
            name=container.spec.name,
            image=container.spec.image,
            status="running" if container.running else "exited",
            running=container.running,
            exit_code=None if container.running else container.exit_code,
            started_at=container.started,
            ports=list(container.ports),
            labels=dict(container.spec.labels),
            networks={container.spec.network: f"10.0.0.{int(container.id, 16) % 250}"},
        )


def _within(line: LogLine, since: datetime | None, until: datetime | None) -> bool:
    """Whether `line` was written in [since, until], both ends included (as docker filters)."""
    moment = parse_time(line.timestamp)
    if moment is None:
        return since is None and until is None
    if since is not None and moment < _aware(since):
        return False
    return until is None or moment <= _aware(until)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
