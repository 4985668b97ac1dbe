"""The swarm's words: a service and its task read as a `ContainerInfo`, arguments, errors.

A service stands for one container: its task's state is the container's status, the task's
container exit code its exit code, the ports the task published (`mode=host`) its ports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast

from preflight_sdk.core.errors import InfrastructureError
from preflight_sdk.core.results.lifecycle import ContainerStatus, PortMapping

from .base import ContainerInfo
from .errors import unsupported
from .inspect import parse_time
from .lane import (
    ServiceContainerSpec,
    ServiceObject,
    ServiceSpec,
    TaskContainerStatus,
    TaskObject,
    TaskStatus,
)

__all__ = [
    "TERMINAL",
    "latest_tasks",
    "mocks_unreachable",
    "mount_arg",
    "not_a_manager",
    "publish_arg",
    "service_info",
]

# Swarm task states (docker/swarmkit api/types.proto) as the container statuses they amount to.
_STATUS: dict[str, str] = {
    **dict.fromkeys(("new", "pending", "assigned", "accepted", "preparing", "ready", "starting"), "created"),
    "running": "running",
    **dict.fromkeys(("complete", "failed", "shutdown"), "exited"),
    **dict.fromkeys(("rejected", "orphaned"), "dead"),
    "remove": "removing",
}
# States a task never leaves: with restart condition `none` the service stays there.
TERMINAL = frozenset({"complete", "failed", "shutdown", "rejected", "orphaned", "remove"})


def latest_tasks(tasks: Sequence[TaskObject]) -> dict[str, TaskObject]:
    """Return each service's newest task (by creation time), keyed by service id."""
    newest: dict[str, TaskObject] = {}
    for task in tasks:
        current = newest.get(task.service_id)
        if current is None or task.created_at > current.created_at:
            newest[task.service_id] = task
    return newest


def service_info(service: ServiceObject, task: TaskObject | None) -> ContainerInfo:
    """Reduce `docker service inspect` and `docker inspect <task>` objects to a `ContainerInfo`.

    The task's overlay addresses are left out (`networks` names the networks with no address):
    they are reachable only from the swarm's nodes, so probes use the published ports.
    """
    spec = service.spec or ServiceSpec()
    container = (spec.task_template.container_spec if spec.task_template else None) or ServiceContainerSpec()
    status = (task.status if task else None) or TaskStatus()
    state = status.state or ("pending" if task is None else "unknown")
    container_status = status.container_status or TaskContainerStatus()
    moment = parse_time(status.timestamp)
    terminal = state in TERMINAL
    exit_code = container_status.exit_code if terminal and container_status.container_id else None
    attached = [a.network for a in (task.networks_attachments if task else None) or [] if a.network]
    return ContainerInfo(
        id=service.id,
        name=spec.name,
        image=container.image.split("@", 1)[0],
        status=cast(ContainerStatus, _STATUS.get(state, "unknown")),
        running=state == "running",
        exit_code=exit_code,
        health=_health(container, state),
        started_at=moment if state == "running" else None,
        finished_at=moment if terminal else None,
        ports=_ports(status, service),
        labels=dict(spec.labels or {}),
        networks={(network.spec.name if network.spec else ""): "" for network in attached},
        error=status.err or None,
    )


def _health(
    container: ServiceContainerSpec, state: str
) -> Literal["healthy", "unhealthy", "starting", "none"]:
    """A task with a health check reports `running` only once the check passed (swarm waits for it)."""
    test = (container.healthcheck.test if container.healthcheck else None) or []
    if not test or test[0] == "NONE":
        return "none"
    if state == "running":
        return "healthy"
    return "unhealthy" if state in TERMINAL else "starting"


def _ports(status: TaskStatus, service: ServiceObject) -> list[PortMapping]:
    """The task's published ports (a free host port is known only there), else the service's."""
    published = (
        (status.port_status.ports if status.port_status else None)
        or (service.endpoint.ports if service.endpoint else None)
        or []
    )
    found: dict[int, int] = {}
    for port in published:
        host, target = port.published_port, port.target_port
        if port.protocol == "tcp" and host and target:
            found.setdefault(target, host)  # listed once per address family
    return [PortMapping(host=host, container=target) for target, host in sorted(found.items())]


def not_a_manager(state: str, where: str | None) -> InfrastructureError:
    """`SWARM_NOT_ACTIVE`: the engine at `where` is in no swarm (`state`), or only a worker in one."""
    engine = where or "the local Docker engine"
    if state == "active":
        why = "is a worker, not a manager"
        hint = "point `engine.host` at a manager of the swarm (`docker node ls` there)"
    else:
        why = f"is not part of a swarm (swarm state: {state})"
        hint = (
            "start one with `docker swarm init` on that engine (or join it to a swarm), or drop `swarm: true`"
        )
    return InfrastructureError(
        f"engine: {{swarm: true}} needs a swarm manager, and {engine} {why}",
        code="SWARM_NOT_ACTIVE",
        hint=hint,
        details={"engine": engine, "swarmState": state},
    )


def mocks_unreachable(where: str | None) -> InfrastructureError:
    """`UNSUPPORTED_ON_ENGINE`: the manager is not this machine and no `engine.mockHost` says the way back."""
    manager = f"the manager {where}" if where else "the manager"
    return unsupported(
        "swarm",
        "mocks reached from services",
        f"the swarm's services cannot reach the mocks: {manager} is not this machine",
        "set `engine.mockHost` in e2e.yaml to this machine's address as the swarm's nodes reach it",
    )


def publish_arg(container: int, host: int) -> str:
    """`--publish` on the node that runs the task (`mode=host`); no host port: a free one."""
    return f"mode=host,target={container}" + (f",published={host}" if host else "")


def mount_arg(volume: str) -> str:
    """`--volume` syntax (`src:dst[:ro]`, `name:dst`, `dst`) as a `--mount`."""
    parts = volume.split(":")
    if len(parts) == 1:
        return f"type=volume,target={parts[0]}"
    kind = "bind" if parts[0].startswith("/") else "volume"
    mount = f"type={kind},source={parts[0]},target={parts[1]}"
    return mount + (",readonly" if len(parts) > 2 and "ro" in parts[2].split(",") else "")
