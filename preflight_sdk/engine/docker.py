"""`DockerEngine`: the `Engine` protocol as one façade over a lane and its parts.

The lane is chosen once, when the engine is made (`lane.py`): the Engine API on this machine's
socket for the stock `docker` client on a local socket, else the docker command line (any host,
ssh, context), or Podman's. Every operation has one body, written against the lane; builds,
pulls, image lists and logs go through the CLI on every engine (`images.py`, `logs.py`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime

import anyio

from .api import local_socket
from .base import ContainerInfo, EngineInfo, ExecResult, NetworkInfo, RemoveOutcome
from .images import Images
from .inspect import container_from_inspect, container_from_list, network_from_list
from .lane import ContainerObject, Lane
from .logs import Logs
from .output import BoundedOutput
from .socket_lane import SocketLane
from .target import LOOPBACK, on_local_socket
from .whales import CliLane

__all__ = ["DockerEngine"]

_INFO_CACHE: dict[tuple[str, ...], EngineInfo] = {}


class DockerEngine:
    """The Engine on a Docker daemon: the local one, or `host`/`context` (else `DOCKER_HOST`/`DOCKER_CONTEXT`).

    `cli` is python-on-whales and the client's command line, `lane` the transport of the other
    calls (the socket, or `cli`); `images` and `logs_part` are parts whose methods it exposes.
    """

    def __init__(
        self,
        docker: str = "docker",
        *,
        host: str | None = None,
        context: str | None = None,
        cli: CliLane | None = None,
        lane: Lane | None = None,
    ) -> None:
        self.cli = cli or CliLane(docker, host=host, context=context)
        # The socket only for the stock `docker`: a client given by path (a test's stand-in,
        # another build of docker) or Podman gets every call.
        path = local_socket(host, context) if lane is None and self.cli.docker == "docker" else None
        self.lane: Lane = lane or (SocketLane(path, host=host) if path else self.cli)
        # The parts: each of their methods is the Engine's method of the same name.
        self.images = images = Images(self.lane, self.cli, self.info)
        self.inspect_image, self.pull, self.build = images.inspect_image, images.pull, images.build
        self.list_images, self.remove_images = images.list_images, images.remove_images
        self.logs_part = Logs(self.cli, ["container", "logs"])
        self.logs, self.follow_logs = self.logs_part.logs, self.logs_part.follow_logs
        # What the lane does as the Engine asks it.
        self.run, self.detach, self.wait_exit = self.lane.run, self.lane.detach, self.lane.wait

    # -- the daemon --------------------------------------------------------------------------

    async def info(self) -> EngineInfo:
        # The daemon's facts do not change while it runs: asked once per process and engine.
        key = self.cli.key()
        if key not in _INFO_CACHE:
            _INFO_CACHE[key] = await self.lane.facts()
        return _INFO_CACHE[key]

    async def reach(self) -> tuple[str, bool]:
        if self.cli.docker == "docker" and on_local_socket(self.cli.host, self.cli.context):
            return LOOPBACK, True  # no daemon call: status and setup ask this often
        info = await self.info()
        return info.address, info.routable

    # -- networks ----------------------------------------------------------------------------

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        return NetworkInfo(id=await self.lane.create_network(name, labels), name=name, labels=dict(labels))

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkInfo]:
        return [network_from_list(item) for item in await self.lane.listed_networks(labels)]

    async def remove_networks(self, names: Sequence[str]) -> list[RemoveOutcome]:
        return await self.lane.remove("network", names) if names else []

    # -- containers --------------------------------------------------------------------------

    async def inspect(self, refs: Sequence[str]) -> list[ContainerInfo]:
        found = await self.lane.inspect(ContainerObject, refs) if refs else []
        return [container_from_inspect(item) for item in found]

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        listed = [container_from_list(item) for item in await self.lane.listed_containers(labels)]
        return await self.inspect([c.id for c in listed]) if detail else listed

    async def remove_containers(self, refs: Sequence[str], *, force: bool) -> list[RemoveOutcome]:
        return await self.lane.remove("container", refs, force=force) if refs else []

    async def rename_container(self, ref: str, name: str) -> bool:
        await self.lane.rename(ref, name)
        return True

    async def stop_containers(self, refs: Sequence[str], *, grace: float = 10.0) -> None:
        if refs:
            client = await self.cli.client()
            await self.cli.call(
                lambda: client.container.stop(list(refs), time=int(grace)), action="stop containers"
            )

    # -- execs, events -----------------------------------------------------------------------

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        out, err = BoundedOutput(), BoundedOutput()
        started = anyio.current_time()
        code: int | None = None
        with anyio.move_on_after(timeout):
            # Cancelling closes the connection, or kills the docker process; the command runs on.
            code = await self.lane.exec(ref, list(command), out, err)
        if code is None:  # what it wrote until then, and why it ends there
            late = f"timed out after {timeout:.1f}s"
            before = err.text()
            stderr = f"{before}\n{late}" if before and not before.endswith("\n") else before + late
            return ExecResult(
                exit_code=-1, stdout=out.text(), stderr=stderr, duration=timeout, timed_out=True
            )
        elapsed = anyio.current_time() - started
        return ExecResult(exit_code=code, stdout=out.text(), stderr=err.text(), duration=elapsed)

    async def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        async with aclosing(self.lane.deaths(labels, since)) as dying:
            async for died in dying:
                yield died
