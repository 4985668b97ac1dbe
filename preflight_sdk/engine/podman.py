"""Podman: the `Engine` on the podman command line, as a `DockerEngine` façade over `PodmanLane`.

Podman speaks the docker command line closely enough for most calls, so the lane hands them to a
`CliLane` on `podman`; each place where Podman differs says how next to its code (builds use
`podman build`, free host ports, `host-gateway`, JSON listings and events, `rm --ignore`, log
timestamps and tails, health checks without systemd).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence

import anyio
import msgspec

from preflight_sdk.core.errors import InfrastructureError

from ..config.port_specs import PortSpec
from ..core.addresses import is_loopback, route_address
from .base import ContainerSpec, EngineInfo, RemoveOutcome
from .docker import DockerEngine
from .errors import unsupported
from .lane import ContainerObject, Inspected, ListedContainer, ListedNetwork, read
from .whales import CliLane, Listing

__all__ = ["PODMAN_LISTING", "PodmanLane", "podman_engine", "unsupported"]

# The timestamp `podman logs --timestamps` puts before each record (RFC 3339, nanoseconds, UTC).
_RECORD_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ")
_CHECK_FLOOR = 0.25  # seconds: a health check runs at most this often, whatever its interval


class _PodmanNetwork(msgspec.Struct, frozen=True):
    """A network of `podman network ls --format json` (its keys in lowercase)."""

    id: str = ""
    name: str = ""
    labels: dict[str, str] | None = None


def _podman_containers(out: str) -> list[ListedContainer]:
    # `podman ps --format json` spells its containers as the Engine API does.
    return read(out, list[ListedContainer], action="list containers") if out.strip() else []


def _podman_networks(out: str) -> list[ListedNetwork]:
    found = read(out, list[_PodmanNetwork], action="list networks") if out.strip() else []
    return [ListedNetwork(id=net.id, name=net.name, labels=net.labels) for net in found]


PODMAN_LISTING = Listing(format="json", containers=_podman_containers, networks=_podman_networks)


def podman_engine(podman: str = "podman") -> DockerEngine:
    """The Engine on the local Podman (rootful or rootless), through the `podman` command line."""
    lane = PodmanLane(podman)
    return DockerEngine(cli=lane.cli, lane=lane)


class PodmanLane:
    """The `Lane` on the podman command line: `cli` for the calls Podman answers as Docker does."""

    def __init__(self, podman: str = "podman") -> None:
        self.cli = CliLane(
            podman,
            publish=publish_arg,
            log_line=mend_log_line,
            trusts_tail=False,
            listing=PODMAN_LISTING,
            died="died",
        )
        # Health checks this lane runs itself: container id -> (interval, when last run).
        self._checks: dict[str, tuple[float, float]] = {}
        # What Podman answers as Docker does.
        cli = self.cli
        self.listed_containers, self.listed_networks = cli.listed_containers, cli.listed_networks
        self.create_network, self.rename = cli.create_network, cli.rename
        self.exec, self.wait, self.deaths, self.detach = cli.exec, cli.wait, cli.deaths, cli.detach

    async def facts(self) -> EngineInfo:
        # `podman version` has no `Server` part on a local Podman: its client is the engine.
        out = await self.cli.text("version", "--format", "json", action="ask podman its version")
        version = str(json.loads(out or "{}").get("Client", {}).get("Version", "unknown"))
        # No buildx: images build with `podman build`, read as the legacy builder's output.
        return EngineInfo(
            server_version=version, builder="legacy", host_gateway=host_address(), name="podman"
        )

    async def run(self, spec: ContainerSpec) -> str:
        add_hosts = list(spec.add_hosts)
        if any(target == "host-gateway" for _, target in add_hosts):
            # Podman knows no `host-gateway`: mocks are reached at the host's own address (they
            # listen there too), and so is `host.containers.internal`, as newer Podman does
            # (Podman 4.x points it at the network's gateway, where the mocks do not listen).
            address = host_address()
            if address is None:
                raise unsupported(
                    "podman",
                    "mocks reached from containers",
                    "mocks reached from containers is not supported on Podman: this host has no address "
                    "outside loopback for containers to reach",
                    "give the host a network interface with an IPv4 address, or run the mocks as services",
                )
            add_hosts = [
                (host, address if target == "host-gateway" else target) for host, target in add_hosts
            ]
            add_hosts.append(("host.containers.internal", address))
        container_id = await self.cli.run(msgspec.structs.replace(spec, add_hosts=add_hosts))
        if spec.health is not None:
            self._checks[container_id] = (max(spec.health.interval, _CHECK_FLOOR), 0.0)
        return container_id

    async def inspect(self, into: type[Inspected], refs: Sequence[str]) -> list[Inspected]:
        """Inspect, first running the health checks of the containers that are due (see `_run_due_checks`)."""
        found = await self.cli.inspect(into, refs)
        if into is ContainerObject and self._checks and await self._run_due_checks(found):
            found = await self.cli.inspect(into, refs)
        return found

    async def _run_due_checks(self, found: Sequence[object]) -> bool:
        """Run `podman healthcheck run` for containers this lane started whose check is due.

        Podman runs checks from systemd timers, which most CI containers lack (the health stays
        `starting`): they run when asked for, at most once per interval; Podman keeps the rest.
        """
        now = anyio.current_time()
        running = [c.id for c in found if isinstance(c, ContainerObject) and c.state and c.state.running]
        due = [
            ref
            for ref in running
            if ref in self._checks and now - self._checks[ref][1] >= self._checks[ref][0]
        ]
        for ref in due:
            self._checks[ref] = (self._checks[ref][0], now)
            # Exit 1 is unhealthy, which Podman records: the verdict is read by inspect.
            with contextlib.suppress(InfrastructureError):
                await self.cli.text("healthcheck", "run", ref, action=f"run the health check of {ref}")
        return bool(due)

    async def remove(self, kind: str, refs: Sequence[str], *, force: bool = False) -> list[RemoveOutcome]:
        if kind != "container":
            return await self.cli.remove(kind, refs, force=force)
        # `--time 0`: `rm --force` otherwise waits 10 s for SIGTERM, where `docker rm -f` kills.
        # `--ignore`: a missing ref is skipped in silence (not printed) rather than failing the rest.
        flags = ["--force", "--time", "0"] if force else []
        return await self.cli.removed(
            ["container", "rm", "--volumes", "--ignore", *flags], refs, unnamed_missing=True
        )


def host_address() -> str | None:
    """Return the host's own IPv4 address on its default route: containers reach it through their gateway.

    No packet is sent: connecting a UDP socket only asks the kernel which source address it would use.
    """
    address = route_address("203.0.113.1")  # TEST-NET-3: any routed address does
    return None if address is None or is_loopback(address) or address == "0.0.0.0" else address


def publish_arg(spec: PortSpec) -> str:
    """The `--publish` argument, with a free host port asked for as Podman wants it (no `0`)."""
    target = f"{spec.container}/{spec.protocol}"
    if spec.host_ip:
        return f"{spec.host_ip}:{spec.host or ''}:{target}"
    return f"{spec.host}:{target}" if spec.host else target


def mend_log_line(raw: bytes) -> bytes:
    """A line the program wrote in pieces is one partial record each, and `podman logs
    --timestamps` prints every record's timestamp: keep the first, drop the others."""
    head, sep, rest = raw.partition(b" ")
    return head + sep + _RECORD_STAMP.sub(b"", rest) if sep else raw
