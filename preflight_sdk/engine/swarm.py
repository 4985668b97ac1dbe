"""`SwarmEngine`: the `Engine` protocol on a Docker Swarm, one single-replica service per container.

A façade of its own over the manager's `DockerEngine` (its images, networks and CLI), not a kind
of it: only what a swarm does differently is written here. Each container the lifecycle asks for
is a service on an attachable overlay network, its image pushed to the registry first so every
node pulls the same one; the preflight labels are on the service and on its task's container.

Choices that hold on any swarm, also one whose daemons run without iptables or IPVS (which the
ingress routing mesh and service virtual IPs need): `--endpoint-mode dnsrr` (a service's name
and aliases resolve to its task's address); ports published `mode=host`, so a service that
publishes ports runs on the manager this engine talks to, where the tests reach them; mocks
reached at the manager's `docker_gwbridge` gateway when the manager is this machine (else
`engine.mockHost` must name this machine: `UNSUPPORTED_ON_ENGINE`); restart condition `none`,
so a task that exits stays exited, as a container would.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

import anyio
import msgspec

from preflight_sdk.core.decoding import convert
from preflight_sdk.core.errors import InfrastructureError

from ..config.run_options import RunOptions
from ..core.addresses import can_bind
from .base import ContainerInfo, ContainerSpec, EngineInfo, ExecResult, NetworkInfo, RemoveOutcome
from .docker import DockerEngine
from .errors import translate, unsupported
from .inspect import bridge_gateway
from .lane import IpamConfig, NetworkObject, ServiceObject, TaskObject
from .logs import Logs
from .swarm_text import (
    latest_tasks,
    mocks_unreachable,
    mount_arg,
    not_a_manager,
    publish_arg,
    service_info,
)
from .whales import run_cli_tolerant, run_flags

if TYPE_CHECKING:
    from python_on_whales import DockerClient

__all__ = ["GATEWAY_BRIDGE", "SwarmEngine"]

GATEWAY_BRIDGE = "docker_gwbridge"
# Labels swarm puts on each task's container.
_SERVICE_ID = "com.docker.swarm.service.id"
_SERVICE_NAME = "com.docker.swarm.service.name"
_POLL = 0.5  # seconds between two looks at the tasks (a swarm has no event for a task's end)
_START_WAIT = 120.0  # seconds for a task to be placed, pull its image and start
_CANNOT_START = 125  # the exit status `docker run` gives a container that could not start


class _Swarm(msgspec.Struct, frozen=True):
    node_id: str
    gateway: str | None  # the manager's docker_gwbridge gateway, when it is an address of this machine


class SwarmEngine:
    """The Engine on the swarm of the Docker manager at `host`/`context`, pushing images to `registry`."""

    def __init__(self, *, registry: str, host: str | None = None, context: str | None = None) -> None:
        self.docker = DockerEngine(host=host, context=context)  # the manager's engine
        self.cli = self.docker.cli
        # What a swarm does as its manager's engine does: images are built and read there.
        docker = self.docker
        self.reach, self.inspect_image = docker.reach, docker.inspect_image
        self.pull, self.build = docker.pull, docker.build
        self.list_images, self.list_networks = docker.list_images, docker.list_networks
        # `--raw`: each line as `<timestamp> <text>`, stdout and stderr apart, as `docker logs`.
        self.logs_part = Logs(self.cli, ["service", "logs", "--raw"], has_until=False)
        self.logs, self.follow_logs = self.logs_part.logs, self.logs_part.follow_logs
        self._where = host or context
        self._registry = registry.rstrip("/")
        self._swarm: _Swarm | None = None
        self._pushed: dict[str, str] = {}  # registry ref -> id of the local image pushed there

    # -- the swarm ---------------------------------------------------------------------------

    async def info(self) -> EngineInfo:
        """The daemon's facts, with the gateway the services reach this machine at; `SWARM_NOT_ACTIVE`."""
        base = await self.docker.info()
        return msgspec.structs.replace(base, host_gateway=(await self._facts()).gateway)

    async def _facts(self) -> _Swarm:
        if self._swarm is None:
            client = await self.cli.client()
            swarm = await self.cli.call(
                lambda: client.system.info().swarm, action="ask the engine about its swarm"
            )
            state = (swarm.local_node_state if swarm else None) or "inactive"
            if swarm is None or state != "active" or not swarm.control_available:
                raise not_a_manager(state, self._where)
            gateway = await self.cli.call(partial(_gateway, client), action=f"read network {GATEWAY_BRIDGE}")
            self._swarm = _Swarm(node_id=str(swarm.node_id), gateway=gateway)
        return self._swarm

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        """Create an attachable overlay network (containers outside the swarm's services may join it)."""
        await self._facts()
        client = await self.cli.client()
        network = await self.cli.call(
            lambda: client.network.create(name, driver="overlay", attachable=True, labels=dict(labels)),
            action=f"create network {name}",
            subject=name,
        )
        return NetworkInfo(id=str(network.id), name=name, labels=dict(labels))

    # -- services ----------------------------------------------------------------------------

    async def run(self, spec: ContainerSpec) -> str:
        """Create a one-replica service for `spec` and return its id (the task starts on its own)."""
        if spec.options != RunOptions():
            # `docker service create` takes few of them; dropping the rest would change the container.
            raise unsupported(
                "swarm",
                "container.options",
                f"service {spec.name} sets Docker run options (capabilities, sysctls, limits...) a swarm cannot apply",
                "run it on a local engine, or leave out `container.options` (the compose keys behind it)",
            )
        swarm = await self._facts()
        image = await self._push(spec.image, spec.name)
        mocked = any(address == "host-gateway" for _, address in spec.add_hosts)
        if mocked and swarm.gateway is None:
            raise mocks_unreachable(self._where)
        hosts = [(host, swarm.gateway if a == "host-gateway" else a) for host, a in spec.add_hosts]
        # A published port (mode=host) or a mock at the manager's gateway ties the task to the manager.
        local = bool(spec.ports) or mocked
        network = ",".join([f"name={spec.network}", *(f"alias={alias}" for alias in spec.aliases)])
        # The client's command line: `service.create` has no `--publish`, `--container-label`,
        # `--user`, `--workdir` or `--read-only`, and its `--host` loop reads a mapping's keys.
        argv = ["service", "create", "--detach", "--quiet", "--name", spec.name]
        argv += ["--network", network, "--endpoint-mode", "dnsrr", "--restart-condition", "none"]
        argv += [a for port in spec.ports for a in ("--publish", publish_arg(port.container, port.host))]
        argv += [a for volume in spec.volumes for a in ("--mount", mount_arg(volume))]
        argv += [a for host, address in hosts for a in ("--host", f"{host}:{address}")]
        argv += [a for k, v in spec.labels.items() for a in ("--container-label", f"{k}={v}")]
        argv += ["--constraint", f"node.id=={swarm.node_id}"] if local or spec.volumes else []
        argv += [*run_flags(spec), image, *(spec.command or [])]
        out = await self.cli.text(*argv, action=f"create service {spec.name}", subject=spec.name)
        service_id = out.strip().splitlines()[-1]
        await self._until_started(service_id, spec.name)
        return service_id

    async def _until_started(self, service_id: str, name: str) -> None:
        """Wait until the service's task has a container (then its host ports are known), as `docker
        run` returns once it has one; a task not placed or started within `_START_WAIT` fails the call."""
        error: str | None = None
        with anyio.move_on_after(_START_WAIT):
            while True:
                found = await self.inspect([service_id])
                if found and found[0].status == "dead" and found[0].error:
                    # Rejected by the node (a bind source that does not exist, an image it cannot
                    # pull): the swarm's `docker run` failed.
                    raise translate(found[0].error, action=f"start service {name}", subject=name)
                if not found or found[0].status != "created" or found[0].health == "starting":
                    return  # gone (the caller sees it), running, checking its health, or ended
                error = found[0].error
                await anyio.sleep(0.1)
        raise InfrastructureError(
            f"the task of service {name} did not start within {_START_WAIT:.0f}s"
            + (f": {error}" if error else ""),
            code="DOCKER_ERROR",
            hint="`docker service ps --no-trunc <service>` on the manager says why (no node fits, image pull)",
            details={"service": name, "error": error},
        )

    async def _push(self, image: str, service: str) -> str:
        """Tag the local `image` for the registry and push it (once per image id); return that name."""
        ref = f"{self._registry}/{image}"
        local = await self.docker.inspect_image(image)
        if local is None:
            raise translate(f"No such image: {image}", action=f"create service {service}", subject=image)
        if self._pushed.get(ref) == local.id:
            return ref
        client = await self.cli.client()
        await self.cli.call(partial(client.image.tag, image, ref), action=f"tag {ref}", subject=ref)
        try:
            # The client's command line, as a child that cancelling kills (a push may last).
            await self.cli.lasting("image", "push", "--quiet", ref, action=f"push {ref}", subject=ref)
        except InfrastructureError as exc:
            failure = str((exc.details or {}).get("stderr") or exc.message).strip()
            raise InfrastructureError(
                f"cannot push {image} to the registry {self._registry}: {failure.splitlines()[-1]}",
                code="DOCKER_ERROR",
                hint=f"start the registry at {self._registry} (the swarm's nodes pull from it), or fix "
                "`registry:` in e2e.yaml",
                details={"image": image, "registry": self._registry, "stderr": failure[-2000:]},
            ) from exc
        self._pushed[ref] = local.id
        return ref

    async def inspect(self, refs: Sequence[str]) -> list[ContainerInfo]:
        services, tasks = await self._services(refs)
        newest = latest_tasks(tasks)
        return [service_info(s, newest.get(s.id)) for s in services]

    async def _services(self, refs: Sequence[str]) -> tuple[list[ServiceObject], list[TaskObject]]:
        """`docker service inspect` of the known `refs`, and `docker inspect` of their tasks."""
        if not refs:
            return [], []
        # The manager's lane, not python-on-whales' `service.inspect` and `service.ps`: they inspect
        # one object per docker process, and its task model has no `PortStatus` (the host ports).
        lane = self.docker.lane
        await self._facts()  # SWARM_NOT_ACTIVE rather than the daemon's "not a swarm manager"
        services = await lane.inspect(ServiceObject, refs)
        ids = [s.id for s in services]
        listed = await self._text("service", "ps", "--quiet", "--no-trunc", *ids) if ids else ""
        tasks = await lane.inspect(TaskObject, listed.split()) if listed.strip() else []
        return services, tasks

    async def _text(self, *args: str) -> str:
        await self._facts()  # SWARM_NOT_ACTIVE rather than the daemon's "not a swarm manager"
        argv = await self.cli.cmd(*args)
        return await self.cli.call(partial(run_cli_tolerant, argv, ""), action=f"docker {' '.join(args[:2])}")

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        """Return the services carrying all of `labels`, each with its task's state."""
        filters = [a for k, v in labels.items() for a in ("--filter", f"label={k}={v}")]
        listed = await self._text("service", "ls", "--quiet", *filters)
        return await self.inspect(listed.split())

    async def remove_containers(self, refs: Sequence[str], *, force: bool) -> list[RemoveOutcome]:
        """Remove services; return once their task containers on the manager are gone too. A task
        stops with its grace period, holding its ports and network: with `force` its container on this
        node is killed at once, as `docker rm -f` would (other nodes stop theirs on their own)."""
        if not refs:
            return []
        outcomes = await self.cli.remove("service", refs)
        gone = {o.ref for o in outcomes if o.action == "removed"}
        with anyio.move_on_after(_START_WAIT):
            while gone:
                left = await self._task_containers(gone)
                if not left:
                    break
                if force:
                    await self.docker.remove_containers(left, force=True)
                else:
                    await anyio.sleep(0.1)  # the swarm removes a stopped task's container itself
        return outcomes

    async def _task_containers(self, services: set[str]) -> list[str]:
        """The ids of this node's containers of tasks of `services` (ids or names)."""
        listed = await self.docker.list_containers({}, detail=False)
        return [c.id for c in listed if services & {c.labels.get(_SERVICE_ID), c.labels.get(_SERVICE_NAME)}]

    async def remove_networks(self, names: Sequence[str]) -> list[RemoveOutcome]:
        """Remove networks, and wait (briefly) until the manager no longer lists them."""
        outcomes = await self.docker.remove_networks(names)
        removed = [o.ref for o in outcomes if o.action == "removed"]
        # The swarm removes an overlay network at once; the manager's own copy follows within
        # about half a second, and `clean` must not return while `docker network ls` shows it.
        with anyio.move_on_after(5.0):
            while removed:
                if not await self.docker.lane.inspect(NetworkObject, removed):
                    break
                await anyio.sleep(0.1)
        return outcomes

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        return False  # a service's task leaves the overlay network as the service is removed

    async def rename_container(self, ref: str, name: str) -> bool:
        return False  # a service cannot be renamed: it is removed before its successor is made

    async def stop_containers(self, refs: Sequence[str], *, grace: float = 10.0) -> None:
        """Scale the services to zero and wait until their tasks ended (the service's own grace)."""
        if not refs:
            return
        # The command line: `service.scale` prints docker's output to our stdout. Not
        # `--detach=false` either: the CLI then also waits out a 5 s "stable" period.
        await self.cli.text(
            "service", "scale", "--detach", *(f"{ref}=0" for ref in refs), action="stop services"
        )
        with anyio.move_on_after(grace + _POLL * 10):
            while True:
                if not any(info.status in ("running", "created") for info in await self.inspect(refs)):
                    break
                await anyio.sleep(0.1)

    async def remove_images(self, refs: Sequence[str]) -> list[RemoveOutcome]:
        """Remove images, first dropping the registry names they were pushed under."""
        client = await self.cli.client()
        for ref in refs:
            info = await self.docker.inspect_image(ref)
            pushed = [tag for tag in (info.tags if info else []) if tag.startswith(f"{self._registry}/")]
            if pushed:
                await self.cli.call(partial(client.image.remove, pushed), action="untag images")
        return await self.docker.remove_images(refs)

    # -- tasks -------------------------------------------------------------------------------

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        """Run a command in the service's task container, when that runs on this manager."""
        swarm = await self._facts()
        services, tasks = await self._services([ref])
        task = latest_tasks(tasks).get(services[0].id) if services else None
        status = task.status if task else None
        container = status.container_status if status else None
        if task is None or task.node_id != swarm.node_id or container is None or not container.container_id:
            raise unsupported(
                "swarm",
                "exec",
                f"cannot run a command in service {ref}: its task does not run on the manager preflight talks to",
                "run the step from a suite of its own on that node, or publish a port and test through it",
                service=ref,
            )
        return await self.docker.exec(container.container_id, command, timeout=timeout)

    async def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        """Yield each service with `labels` whose task ended (the tasks are looked at every half second)."""
        seen: set[str] = set()
        while True:
            for info in await self.list_containers(labels):
                if info.status in ("exited", "dead") and info.id not in seen:
                    seen.add(info.id)
                    yield info.id
            await anyio.sleep(_POLL)

    async def wait_exit(self, ref: str) -> int:
        while True:
            found = await self.inspect([ref])
            if found and found[0].status in ("exited", "dead", "removing"):  # the task ended
                # No exit code: the task never had a container (it could not start).
                return found[0].exit_code if found[0].exit_code is not None else _CANNOT_START
            await anyio.sleep(_POLL / 2)


def _gateway(client: DockerClient) -> str | None:
    """The manager's docker_gwbridge gateway, when it is an address of this machine (blocking). The
    bridge is made as Docker makes it for a first task (its defaults), so mocks can listen there first.
    """
    from python_on_whales.exceptions import DockerException, NoSuchNetwork

    try:
        config = client.network.inspect(GATEWAY_BRIDGE).ipam.config
    except NoSuchNetwork:
        options = [
            f"com.docker.network.bridge.name={GATEWAY_BRIDGE}",
            "com.docker.network.bridge.enable_icc=false",
            "com.docker.network.bridge.enable_ip_masquerade=true",
        ]
        try:
            client.network.create(GATEWAY_BRIDGE, driver="bridge", options=options)
        except DockerException:
            pass  # created by the first task a moment ago: read it
        config = client.network.inspect(GATEWAY_BRIDGE).ipam.config
    gateway = bridge_gateway(convert(config or [], list[IpamConfig]))
    return gateway if gateway is not None and can_bind(gateway) else None
