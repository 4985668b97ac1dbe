"""The `Engine` protocol: every Docker operation the lifecycle and the runners need.

`DockerEngine` and `SwarmEngine` implement it (an in-memory one serves the unit tests). Everything
above this layer sees only these Structs and `PreflightError`s: no python-on-whales model and no
`DockerException` escapes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol

import msgspec

from preflight_sdk.config.port_specs import PortSpec
from preflight_sdk.config.run_options import RunOptions
from preflight_sdk.core.results.lifecycle import ContainerStatus, LogLine, PortMapping

__all__ = [
    "BuildSpec",
    "ContainerInfo",
    "ContainerSpec",
    "Engine",
    "EngineInfo",
    "ExecResult",
    "HealthSpec",
    "ImageInfo",
    "LineSink",
    "NetworkInfo",
    "RemoveOutcome",
]

LineSink = Callable[[str], None]


class EngineInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The daemon that answered, and where it is from here.

    Attributes:
        host_gateway: where the bridge's containers reach this machine (mocks listen there too).
        endpoint: the engine's address as DOCKER_HOST spells it (a context resolved), if known.
        address: where the engine's published ports are reached (127.0.0.1 for a local socket).
        routable: whether container IPs are reachable from here (only an engine on a local socket).
        builder: how images build; None until the first build asks.
    """

    server_version: str
    builder: Literal["buildx", "legacy"] | None = None
    host_gateway: str | None = None
    name: Literal["docker", "podman"] = "docker"
    endpoint: str | None = None
    address: str = "127.0.0.1"
    routable: bool = True


class BuildSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One image to build (paths are absolute)."""

    image: str
    context: str
    dockerfile: str
    args: Mapping[str, str] = msgspec.field(default_factory=dict)
    no_cache: bool = False
    target: str | None = None
    # Put on the image where they cost nothing (BuildKit, Podman); Docker's legacy builder makes
    # each a build step (about 70 ms apiece): there they are left off (images are known by id).
    labels: Mapping[str, str] = msgspec.field(default_factory=dict)
    # The id this tag held when preflight last built it: removed when this build leaves it untagged.
    replaces: str | None = None


class HealthSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Docker's own health check of a container (durations in seconds)."""

    command: str
    interval: float
    timeout: float
    retries: int
    start_period: float


class ContainerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One container to start, detached, on a network."""

    name: str
    image: str
    network: str
    aliases: Sequence[str] = ()
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    ports: Sequence[PortSpec] = ()
    volumes: Sequence[str] = ()
    labels: Mapping[str, str] = msgspec.field(default_factory=dict)
    add_hosts: Sequence[tuple[str, str]] = ()
    command: Sequence[str] | None = None
    entrypoint: str | None = None
    working_dir: str | None = None
    user: str | None = None
    init: bool = False
    read_only: bool = False
    health: HealthSpec | None = None
    # Further `docker run` options (capabilities, sysctls, limits...): see `engine.run_options`.
    options: RunOptions = msgspec.field(default_factory=RunOptions)


class ContainerInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A container as `docker inspect` shows it, reduced to what preflight uses."""

    id: str
    name: str
    image: str
    status: ContainerStatus
    running: bool
    exit_code: int | None = None
    health: Literal["healthy", "unhealthy", "starting", "none"] = "none"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    ports: list[PortMapping] = msgspec.field(default_factory=list)
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    networks: dict[str, str] = msgspec.field(default_factory=dict)  # network name -> container IP
    oom_killed: bool = False
    error: str | None = None


class ImageInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A local image: its id (changes with every rebuild that changes it), labels and tags."""

    id: str
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    tags: list[str] = msgspec.field(default_factory=list)


class NetworkInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A network as `docker network inspect` shows it."""

    id: str
    name: str
    gateway: str | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    containers: list[str] = msgspec.field(default_factory=list)


class ExecResult(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of a command run in a container."""

    exit_code: int
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False


class RemoveOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to one resource asked to be removed."""

    ref: str
    action: Literal["removed", "force_removed", "not_found", "failed"]
    error: str | None = None


class Engine(Protocol):
    """Docker, as preflight needs it. All methods raise `PreflightError`s only."""

    async def info(self) -> EngineInfo:
        """Return daemon facts, or raise `DOCKER_ERROR` (with how to start Docker)."""

    async def reach(self) -> tuple[str, bool]:
        """Return where published ports are reached and whether container IPs are routable from here.

        `("127.0.0.1", True)` for an engine on this machine's socket; a remote engine's host and False.
        """

    async def inspect_image(self, ref: str) -> ImageInfo | None:
        """Return the local image's id and labels, or None when it does not exist."""

    async def pull(self, ref: str, on_line: LineSink) -> None:
        """Pull an image (only when the user asked for it)."""

    async def build(self, spec: BuildSpec, on_line: LineSink) -> str:
        """Build an image, streaming each whole output line, and return its id; `BUILD_FAILED` with the last lines."""

    async def list_images(self, labels: Mapping[str, str]) -> list[ImageInfo]:
        """Return the images carrying all of `labels`."""

    async def remove_images(self, refs: Sequence[str]) -> list[RemoveOutcome]:
        """Remove images (not forced: one a container uses stays, reported as failed)."""

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        """Create a bridge network."""

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkInfo]:
        """Return the networks carrying all of `labels`."""

    async def remove_networks(self, names: Sequence[str]) -> list[RemoveOutcome]:
        """Remove networks; report each truthfully."""

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        """Disconnect containers from `network` at once, forced (errors ignored), so it can be removed
        while they are; False when this engine does not, cheaply (then remove them first). With no
        `refs` it only says which."""

    async def run(self, spec: ContainerSpec) -> str:
        """Start a detached container and return its id (`PORT_CONFLICT`, `DOCKER_ERROR`)."""

    async def inspect(self, refs: Sequence[str]) -> list[ContainerInfo]:
        """Inspect containers by id or name in one call; unknown ones are left out."""

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        """Return every container (running or not) carrying all of `labels`.

        Without `detail`, only id, name, state and labels are filled (one cheap call).
        """

    async def remove_containers(self, refs: Sequence[str], *, force: bool) -> list[RemoveOutcome]:
        """Remove containers (force: kill running ones); report each truthfully."""

    async def rename_container(self, ref: str, name: str) -> bool:
        """Rename a container, freeing its name; False when this engine has no such thing (a swarm)."""

    async def stop_containers(self, refs: Sequence[str], *, grace: float = 10.0) -> None:
        """Stop running containers (SIGTERM, then SIGKILL after `grace` seconds)."""

    async def logs(
        self,
        ref: str,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[LogLine]:
        """Return stdout and stderr lines, interleaved by timestamp."""

    def follow_logs(self, ref: str, *, since: datetime | None = None) -> AsyncGenerator[LogLine, None]:
        """Yield log lines as the container writes them, until cancelled or it stops."""

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        """Run a command in a running container.

        Each stream keeps at most 8 MiB (its first and last 4 MiB, the rest counted between them);
        past `timeout` the result says `timed_out` (with what the command wrote until then) and
        the command is left to run on: the caller stops it if it must.
        """

    def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        """Yield the id of each container with `labels` that stops (since `since`), as it happens."""

    async def wait_exit(self, ref: str) -> int:
        """Wait until the container exits and return its exit code."""
