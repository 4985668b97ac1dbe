"""`SocketLane`: the engine's lane on this machine's socket, each operation one request (or two)
through `EngineAPI` (`api.py`). The bodies are what the docker CLI sends for the same commands, so a
container made here is the one `docker run` makes (`tests/integration/test_engine_api.py` compares).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import anyio
from anyio.lowlevel import RunVar

from .api import EngineAPI, decoded, failure, message, quoted
from .base import ContainerSpec, EngineInfo, RemoveOutcome
from .errors import daemon_unreachable
from .inspect import bridge_gateway
from .lane import Inspected, ListedContainer, ListedNetwork, NetworkObject
from .output import STDOUT, BoundedOutput, Frames
from .run_options import apply_options
from .target import endpoint_address

__all__ = ["SocketLane", "container_body"]

T = TypeVar("T")

# A lock per socket for its container creations (`SocketLane.run`), per event loop: a lock
# belongs to the loop it was made in.
_CREATING: RunVar[dict[str, anyio.Lock]] = RunVar("preflight_docker_creating")


class SocketLane:
    """The engine's lane on this machine's socket: each operation as one request (or two)."""

    def __init__(self, path: str, *, host: str | None = None) -> None:
        self.api = EngineAPI(path)
        self.host = host

    async def facts(self) -> EngineInfo:
        """Two requests instead of python-on-whales' import (0.36 s) and three docker processes;
        the builder is asked by the first build."""
        version = await self.api.expect("GET", "/version", action="ask the daemon")
        if not (version or {}).get("Version"):
            raise daemon_unreachable("the daemon did not say its version")
        bridge = await self.api.inspect(NetworkObject, "bridge")
        ipam = bridge.ipam if bridge else None
        address, routable = endpoint_address(self.host)
        return EngineInfo(
            server_version=str(version["Version"]),
            host_gateway=bridge_gateway((ipam.config if ipam else None) or []),
            endpoint=self.host,
            address=address,
            routable=routable,
        )

    async def rename(self, ref: str, name: str) -> None:
        await self.api.expect(
            "POST",
            f"/containers/{quoted(ref)}/rename",
            params={"name": name},
            action=f"rename container {ref}",
            subject=ref,
            missing=("container", ref),
        )

    async def inspect(self, into: type[Inspected], refs: Sequence[str]) -> list[Inspected]:
        found = await _each(partial(self.api.inspect, into), refs)
        return [item for item in found if item is not None]

    async def detach(self, network: str, refs: Sequence[str]) -> bool:
        path = f"/networks/{quoted(network)}/disconnect"
        await _each(lambda ref: self.api.send("POST", path, body={"Container": ref, "Force": True}), refs)
        return True

    async def remove(self, kind: str, refs: Sequence[str], *, force: bool = False) -> list[RemoveOutcome]:
        """Remove each of `refs` at once, as `docker rm` and `docker network rm` do."""
        return await _each(partial(self._remove, kind, force=force), refs)

    async def run(self, spec: ContainerSpec) -> str:
        """Create and start the container `spec` (`docker run --detach --pull never`); return its id."""
        action = f"start container {spec.name}"
        params = {"name": spec.name, **({"platform": spec.options.platform} if spec.options.platform else {})}
        # One create at a time, each container started when its own create answers: the starts
        # (hundreds of ms of the daemon's work each) come a create apart, not all at once, and
        # five services are ready 10-14% sooner (docs/performance-history.md, "Starts a create apart").
        async with self._creating():
            status, created = await self.api.send(
                "POST", "/containers/create", params=params, body=container_body(spec)
            )
        if status >= 400:
            # A create answers 404 both for a missing image and for a missing network ("network x
            # not found"): only its words tell the network apart. The image is named as the user
            # wrote it, not as the daemon does, with its tag filled in.
            gone = "network" if message(created).lower().startswith("network ") else "image"
            missing = (gone, spec.network if gone == "network" else spec.image)
            raise failure(status, created, action=action, subject=spec.name, missing=missing)
        container_id = str(created["Id"])
        # As with `docker run`, a container that fails to start (a port taken) stays created: the
        # project's clean removes it by label.
        await self.api.expect(
            "POST",
            f"/containers/{container_id}/start",
            action=action,
            subject=spec.name,
            missing=("container", spec.name),
        )
        return container_id

    def _creating(self) -> anyio.Lock:
        """The lock that keeps this socket's container creations one at a time."""
        _CREATING.set(locks := _CREATING.get({}))
        return locks.setdefault(self.api.path, anyio.Lock())

    async def create_network(self, name: str, labels: Mapping[str, str]) -> str:
        """Create a bridge network (`docker network create`); return its id."""
        created = await self.api.expect(
            "POST",
            "/networks/create",
            # What `docker network create` sends, defaults included.
            body={
                "Name": name,
                "CheckDuplicate": True,
                "Driver": "bridge",
                "IPAM": {"Driver": "default", "Config": [], "Options": {}},
                "Labels": dict(labels),
            },
            action=f"create network {name}",
            subject=name,
        )
        return str(created["Id"])

    async def _remove(self, kind: str, ref: str, *, force: bool = False) -> RemoveOutcome:
        """Remove one container (with its anonymous volumes), image or network; say what happened to it."""
        params = {"v": "1", "force": "1" if force else "0"} if kind == "container" else {}
        status, data = await self.api.send("DELETE", f"/{kind}s/{quoted(ref)}", params=params)
        if status < 300:
            return RemoveOutcome(ref=ref, action="removed")
        if status == 404:
            return RemoveOutcome(ref=ref, action="not_found")
        return RemoveOutcome(ref=ref, action="failed", error=message(data) or f"HTTP {status}")

    async def listed_containers(self, labels: Mapping[str, str]) -> list[ListedContainer]:
        params = {"all": "1", "filters": _label_filter(labels)}
        return await self.api.get(
            "/containers/json", list[ListedContainer], params=params, action="list containers"
        )

    async def listed_networks(self, labels: Mapping[str, str]) -> list[ListedNetwork]:
        params = {"filters": _label_filter(labels)}
        return await self.api.get("/networks", list[ListedNetwork], params=params, action="list networks")

    async def exec(self, ref: str, command: Sequence[str], out: BoundedOutput, err: BoundedOutput) -> int:
        """Run `command` in container `ref` (`docker exec`), its output into `out` and `err`;
        return its exit code. Cancelling closes the connection; the command runs on.
        """
        action = f"exec in {ref}"
        created = await self.api.expect(
            "POST",
            f"/containers/{quoted(ref)}/exec",
            body={"AttachStdout": True, "AttachStderr": True, "Tty": False, "Cmd": list(command)},
            action=action,
            subject=ref,
            missing=("container", ref),
        )
        path = f"/exec/{quoted(str(created['Id']))}"
        frames = Frames()
        # The daemon answers 200 and sends the raw stream until the command ends, then hangs up:
        # no `Upgrade: tcp` hijack is needed when nothing is written to the command's stdin.
        start = {"Detach": False, "Tty": False}
        async with self.api.stream("POST", f"{path}/start", action=action, subject=ref, body=start) as reply:
            async for chunk in reply.aiter_raw():
                for stream, piece in frames.feed(chunk):
                    (out if stream == STDOUT else err).add(piece)
        if frames.cut:
            raise self.api.unreachable(f"the output of {action} ended mid-frame")
        # The daemon ends the stream when the command exits; its exit code may lag a moment behind.
        for _ in range(100):
            state = await self.api.expect("GET", f"{path}/json", action=action, subject=ref) or {}
            if not state.get("Running"):
                break
            await anyio.sleep(0.01)
        return int(state.get("ExitCode") or 0)

    async def wait(self, ref: str) -> int:
        """Wait until container `ref` exits (`docker wait`); return its exit code."""
        action = f"wait for {ref}"
        path = f"/containers/{quoted(ref)}/wait"
        missing = ("container", ref)
        async with self.api.stream("POST", path, action=action, subject=ref, missing=missing) as reply:
            with self.api.reached():
                answer = decoded(await reply.aread())
        if not isinstance(answer, dict):
            raise self.api.unreachable(f"the wait for {ref} ended unanswered")
        return int(answer.get("StatusCode", -1))

    async def deaths(self, labels: Mapping[str, str], since: datetime | None) -> AsyncGenerator[str, None]:
        """The id of each container with all `labels` that dies, from `since` on (`GET /events`)."""
        wanted = {"type": ["container"], "event": ["die"], "label": [f"{k}={v}" for k, v in labels.items()]}
        params = {"filters": json.dumps(wanted)}
        if since is not None:
            params["since"] = f"{since.timestamp():.9f}"
        async for died in self.api.lines("GET", "/events", action="watch container exits", params=params):
            yield str(died.get("id") or (died.get("Actor") or {}).get("ID", ""))


def _label_filter(labels: Mapping[str, str]) -> str:
    """The `filters` parameter that keeps what carries all of `labels`."""
    return json.dumps({"label": [f"{k}={v}" for k, v in labels.items()]})


async def _each(fn: Callable[[str], Awaitable[T]], refs: Sequence[str]) -> list[T]:
    """`fn(ref)` for every ref, all at once; the answers in `refs`' order."""
    answers: dict[int, T] = {}

    async def one(index: int, ref: str) -> None:
        answers[index] = await fn(ref)

    async with anyio.create_task_group() as tg:
        for index, ref in enumerate(refs):
            tg.start_soon(one, index, ref)
    return [answers[index] for index in range(len(refs))]


def container_body(spec: ContainerSpec) -> dict[str, Any]:
    """The `POST /containers/create` body that `docker run` sends for `spec` (see `run_flags`)."""
    ports: dict[str, dict[str, str]] = {f"{p.container}/{p.protocol}": {} for p in spec.ports}
    bindings: dict[str, list[dict[str, str]]] = {}
    for port in spec.ports:
        bindings.setdefault(f"{port.container}/{port.protocol}", []).append(
            {"HostIp": port.host_ip or "", "HostPort": str(port.host) if port.host else ""}
        )
    # `--volume SRC:DST[:MODE]` is a bind (or a named volume); a lone `--volume DST` is anonymous.
    binds = [v for v in spec.volumes if ":" in v]
    anonymous: dict[str, dict[str, str]] = {v: {} for v in spec.volumes if ":" not in v}
    host: dict[str, Any] = {
        "NetworkMode": spec.network,
        "PortBindings": bindings,
        "Binds": binds or None,
        "ExtraHosts": [f"{name}:{address}" for name, address in spec.add_hosts] or None,
        "ReadonlyRootfs": spec.read_only,
        "RestartPolicy": {"Name": "no"},
    }
    if spec.init:
        host["Init"] = True
    body: dict[str, Any] = {
        "Image": spec.image,
        "Env": [f"{k}={v}" for k, v in spec.env.items()],
        "Labels": dict(spec.labels),
        "ExposedPorts": ports,
        "Volumes": anonymous or None,
        "HostConfig": host,
        "NetworkingConfig": {"EndpointsConfig": {spec.network: {"Aliases": list(spec.aliases)}}},
    }
    if spec.command:
        body["Cmd"] = list(spec.command)
    if spec.entrypoint is not None:
        # `--entrypoint ''` resets the image's entrypoint, as the CLI does.
        body["Entrypoint"] = [spec.entrypoint]
    if spec.working_dir is not None:
        body["WorkingDir"] = spec.working_dir
    if spec.user is not None:
        body["User"] = spec.user
    if spec.health is not None:
        health = spec.health

        def nanos(seconds: float, floor: float = 0.001) -> int:
            return int(max(seconds, floor) * 1_000_000_000)

        body["Healthcheck"] = {
            "Test": ["CMD-SHELL", health.command],
            "Interval": nanos(health.interval),
            "Timeout": nanos(health.timeout),
            "StartPeriod": nanos(health.start_period, 0),
            "Retries": health.retries,
        }
    apply_options(body, spec.options)
    return body
