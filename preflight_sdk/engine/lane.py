"""`Lane`: the narrow transport an engine's operations are written against, chosen once per engine:
the Engine API on this machine's socket (`socket_lane.py`), python-on-whales and the docker command
line (`whales.py`: remote hosts, ssh, contexts) or Podman's (`podman.py`). Raises `PreflightError`s only.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from .base import ContainerSpec, EngineInfo, RemoveOutcome
from .output import BoundedOutput

__all__ = ["Lane"]


class Lane(Protocol):
    """The wire operations of one engine."""

    async def facts(self) -> EngineInfo:
        """The daemon's version and where it is (asked once per process: the engine caches it)."""

    async def create_network(self, name: str, labels: Mapping[str, str]) -> str: ...

    async def remove(self, kind: str, refs: Sequence[str], *, force: bool = False) -> list[RemoveOutcome]:
        """Remove `container`s (with their anonymous volumes), `image`s or `network`s; say what happened to each."""

    async def run(self, spec: ContainerSpec) -> str:
        """Create and start a container (`docker run --detach --pull never`); return its id."""

    async def inspect(self, kind: str, refs: Sequence[str]) -> list[dict[str, Any]]:
        """The `docker inspect` JSON of each of `refs` there is (`container`, `image`, `network`, `service`, `task`)."""

    async def listed(self, kind: str, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """Every `container` (running or not) or `network` carrying all of `labels`, as the lane lists
        them (read by `inspect.container_from_list` and `network_from_list`)."""

    async def rename(self, ref: str, name: str) -> None: ...

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        """See `Engine.detach`."""

    async def exec(self, ref: str, command: Sequence[str], out: BoundedOutput, err: BoundedOutput) -> int:
        """Run a command in a container, its output into `out` and `err`; return its exit code."""

    async def wait(self, ref: str) -> int: ...

    def deaths(self, labels: Mapping[str, str], since: datetime | None) -> AsyncGenerator[str, None]:
        """The id of each container with all `labels` that dies, from `since` on."""
