"""`Lane`: the narrow transport an engine's operations are written against, chosen once per engine:
the Engine API on this machine's socket (`socket_lane.py`), python-on-whales and the docker command
line (`whales.py`: remote hosts, ssh, contexts) or Podman's (`podman.py`). Raises `PreflightError`s only.

Each lane answers the daemon's objects (what `docker inspect` and the listings say of a container,
image, network, service or task) as the Structs below, holding only what the engine reads, decoded
once where the answer arrives (`read`): the socket lane the Engine API's bytes, the CLI lanes what
`docker`/`podman` print. Field names follow Docker's JSON (PascalCase, `ID`, `IPAM`); every other
field is ignored, and every field may be missing or `null` (Podman leaves many out).
"""

# No `from __future__ import annotations` here: msgspec reads these Structs' annotations on their
# first decode, in every CLI process, and real types take it about 0.3 ms for a container where
# strings to evaluate take 0.9 ms. So each Struct comes before what names it.
from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import datetime
from typing import ClassVar, Protocol, TypeVar

import msgspec

from preflight_sdk.core.decoding import decode
from preflight_sdk.core.errors import InfrastructureError

from .base import ContainerSpec, EngineInfo, RemoveOutcome
from .output import BoundedOutput

__all__ = [
    "ContainerObject",
    "ImageObject",
    "Inspected",
    "IpamConfig",
    "Lane",
    "ListedContainer",
    "ListedNetwork",
    "NetworkObject",
    "PublishedPort",
    "ServiceObject",
    "TaskObject",
    "read",
]

T = TypeVar("T")


class _Object(msgspec.Struct, frozen=True, rename="pascal"):
    """Docker's spelling of a field: its Python name in PascalCase, unless the field names it."""


# -- containers ------------------------------------------------------------------------------


class ContainerHealth(_Object, frozen=True):
    status: str | None = None


class ContainerState(_Object, frozen=True):
    status: str = "unknown"
    running: bool = False
    exit_code: int | None = None
    health: ContainerHealth | None = None
    started_at: str | None = None
    finished_at: str | None = None
    oom_killed: bool = msgspec.field(default=False, name="OOMKilled")
    error: str | None = None


class ContainerConfig(_Object, frozen=True):
    image: str = ""
    labels: dict[str, str] | None = None


class PortBinding(_Object, frozen=True):
    host_ip: str = ""
    host_port: str = ""


class EndpointSettings(_Object, frozen=True):
    ip_address: str | None = msgspec.field(default=None, name="IPAddress")


class NetworkSettings(_Object, frozen=True):
    networks: dict[str, EndpointSettings | None] | None = None
    # "8080/tcp" -> its host bindings (null for a port exposed but not published).
    ports: dict[str, list[PortBinding] | None] | None = None


class ContainerObject(_Object, frozen=True):
    """`docker inspect --type container` (Docker's and Podman's)."""

    KIND: ClassVar[str] = "container"
    id: str = ""
    name: str = ""
    state: ContainerState | None = None
    config: ContainerConfig | None = None
    network_settings: NetworkSettings | None = None


class ListedContainer(_Object, frozen=True):
    """One container of a listing as the Engine API and `podman ps --format json` give it."""

    id: str = ""
    names: list[str] | None = None
    image: str = ""
    state: str = "unknown"
    labels: dict[str, str] | None = None


# -- images and networks ---------------------------------------------------------------------


class ImageConfig(_Object, frozen=True):
    labels: dict[str, str] | None = None


class ImageObject(_Object, frozen=True):
    """`docker inspect --type image`."""

    KIND: ClassVar[str] = "image"
    id: str = ""
    repo_tags: list[str] | None = None
    config: ImageConfig | None = None


class IpamConfig(_Object, frozen=True):
    subnet: str | None = None
    gateway: str | None = None


class Ipam(_Object, frozen=True):
    config: list[IpamConfig] | None = None


class NetworkObject(_Object, frozen=True):
    """`docker inspect --type network`."""

    KIND: ClassVar[str] = "network"
    id: str = ""
    name: str = ""
    labels: dict[str, str] | None = None
    ipam: Ipam | None = msgspec.field(default=None, name="IPAM")


class ListedNetwork(_Object, frozen=True):
    """One network of a listing as the Engine API gives it."""

    id: str = ""
    name: str = ""
    labels: dict[str, str] | None = None


# -- swarm services and tasks ----------------------------------------------------------------


class PublishedPort(_Object, frozen=True):
    protocol: str = "tcp"
    published_port: int | None = None
    target_port: int | None = None


class Ports(_Object, frozen=True):
    ports: list[PublishedPort] | None = None


class Healthcheck(_Object, frozen=True):
    test: list[str] | None = None


class ServiceContainerSpec(_Object, frozen=True):
    image: str = ""
    healthcheck: Healthcheck | None = None


class TaskTemplate(_Object, frozen=True):
    container_spec: ServiceContainerSpec | None = None


class ServiceSpec(_Object, frozen=True):
    name: str = ""
    labels: dict[str, str] | None = None
    task_template: TaskTemplate | None = None


class ServiceObject(_Object, frozen=True):
    """`docker service inspect`."""

    KIND: ClassVar[str] = "service"
    id: str = msgspec.field(default="", name="ID")
    spec: ServiceSpec | None = None
    endpoint: Ports | None = None


class TaskContainerStatus(_Object, frozen=True):
    container_id: str | None = msgspec.field(default=None, name="ContainerID")
    exit_code: int | None = None


class TaskStatus(_Object, frozen=True):
    state: str | None = None
    timestamp: str | None = None
    err: str | None = None
    container_status: TaskContainerStatus | None = None
    port_status: Ports | None = None


class NetworkSpec(_Object, frozen=True):
    name: str = ""


class AttachedNetwork(_Object, frozen=True):
    spec: NetworkSpec | None = None


class NetworkAttachment(_Object, frozen=True):
    network: AttachedNetwork | None = None


class TaskObject(_Object, frozen=True):
    """`docker inspect --type task`."""

    KIND: ClassVar[str] = "task"
    id: str = msgspec.field(default="", name="ID")
    service_id: str = msgspec.field(default="", name="ServiceID")
    node_id: str = msgspec.field(default="", name="NodeID")
    created_at: str = ""
    status: TaskStatus | None = None
    networks_attachments: list[NetworkAttachment] | None = None


# What `Lane.inspect` answers: the kind it inspects is the type's `KIND`.
Inspected = TypeVar("Inspected", ContainerObject, ImageObject, NetworkObject, ServiceObject, TaskObject)


class Lane(Protocol):
    """The wire operations of one engine."""

    async def facts(self) -> EngineInfo:
        """The daemon's version and where it is (asked once per process: the engine caches it)."""

    async def create_network(self, name: str, labels: Mapping[str, str]) -> str: ...

    async def remove(self, kind: str, refs: Sequence[str], *, force: bool = False) -> list[RemoveOutcome]:
        """Remove `container`s (with their anonymous volumes), `image`s or `network`s; say what happened to each."""

    async def run(self, spec: ContainerSpec) -> str:
        """Create and start a container (`docker run --detach --pull never`); return its id."""

    async def inspect(self, into: type[Inspected], refs: Sequence[str]) -> list[Inspected]:
        """What `docker inspect` says of each of `refs` there is, as `into` (`ContainerObject`,
        `ImageObject`, `NetworkObject`, `ServiceObject`, `TaskObject`: the kind is its `KIND`)."""

    async def listed_containers(self, labels: Mapping[str, str]) -> list[ListedContainer]:
        """Every container (running or not) carrying all of `labels` (read by `inspect.container_from_list`)."""

    async def listed_networks(self, labels: Mapping[str, str]) -> list[ListedNetwork]:
        """Every network carrying all of `labels` (read by `inspect.network_from_list`)."""

    async def rename(self, ref: str, name: str) -> None: ...

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        """See `Engine.detach`."""

    async def exec(self, ref: str, command: Sequence[str], out: BoundedOutput, err: BoundedOutput) -> int:
        """Run a command in a container, its output into `out` and `err`; return its exit code."""

    async def wait(self, ref: str) -> int: ...

    def deaths(self, labels: Mapping[str, str], since: datetime | None) -> AsyncGenerator[str, None]:
        """The id of each container with all `labels` that dies, from `since` on."""


def read(data: bytes | str, into: type[T], *, action: str) -> T:
    """Decode the JSON of an answer into `into`; an answer of another shape is a `DOCKER_ERROR`."""
    try:
        return decode(data, into)
    except msgspec.DecodeError as exc:
        # The answer itself stays out: an inspected container carries its environment's values.
        raise InfrastructureError(
            f"cannot {action}: the engine answered what preflight cannot read ({exc})",
            code="DOCKER_ERROR",
            hint="check the engine's version (`docker version`): preflight reads Docker's and Podman's JSON",
            details={"answerLength": len(data)},
        ) from exc
