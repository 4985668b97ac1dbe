"""`DockerEngine`: the `Engine` protocol on a real Docker daemon, through python-on-whales.

This module holds the daemon's facts, networks, containers, logs, exec and events; images and
builds are in `docker_images.py`, the plumbing every call goes through in `docker_calls.py`.

Every call goes through one `python_on_whales.DockerClient` built from the project's host and
context, and runs off the event loop: short calls in worker threads, calls that may last
(build, pull, logs --follow, events, wait, exec) as children that cancelling kills (`cli.py`).
A handful of calls use the client's command line (`client_config.docker_cmd`) with
python-on-whales' own runner and typed errors instead of a typed wrapper; each says why.
On this machine's socket the calls on setup's and clean's critical path, and exec, go to the
Engine API instead (`api.py` says why and which).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from ..config.ports import PortSpec
from ..errors import EnvironmentError_
from ..results.lifecycle import LogLine
from . import cli
from .api import quoted
from .base import (
    ContainerInfo,
    ContainerSpec,
    EngineInfo,
    ExecResult,
    NetworkInfo,
    RemoveOutcome,
)
from .docker_calls import labels_of, run_cli, translated
from .docker_images import DockerImages
from .endpoint import LOOPBACK, endpoint_address, on_local_socket
from .errors import daemon_unreachable, is_daemon_down
from .exec_output import BoundedOutput
from .inspect import (
    container_from_api_list,
    container_from_inspect,
    container_from_ps,
    docker_time,
    merge_log_streams,
    parse_log_bytes,
)
from .outcomes import removal_outcomes
from .probe import NetworkProber, Prober

if TYPE_CHECKING:
    from python_on_whales import DockerClient

__all__ = ["DockerEngine", "run_cli"]

_INFO_CACHE: dict[tuple[str, ...], EngineInfo] = {}
# How many raw log bytes one `logs` call may read while looking for N whole lines.
_LOGS_READ_LIMIT = 8 * 1024 * 1024


class DockerEngine(DockerImages):
    """The Engine on a Docker daemon: the local one, or `host`/`context` (else `DOCKER_HOST`/`DOCKER_CONTEXT`)."""

    prober: Prober = NetworkProber()  # stateless: one for every engine

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
            version = await api.api.expect("GET", "/version", action="ask the daemon")
            if not (version or {}).get("Version"):
                raise daemon_unreachable("the daemon did not say its version")
            bridge = await api.api.inspect("network", "bridge")
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

    async def reach(self) -> tuple[str, bool]:
        if self._local_default():
            return LOOPBACK, True  # no daemon call: status and setup ask this often
        info = await self.info()
        return info.address, info.routable

    def _local_default(self) -> bool:
        return on_local_socket(self._host, self._context)

    # -- networks ----------------------------------------------------------------------------

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        if (api := self._api()) is not None:
            network_id = await api.create_network(name, labels)
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
            found = await api.listed("network", labels)
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
        out = await self._call(partial(run_cli, argv), action="list networks")
        networks = []
        for raw in out.splitlines():
            if raw.strip():
                item = json.loads(raw)
                networks.append(
                    NetworkInfo(
                        id=item.get("ID", ""),
                        name=item.get("Name", ""),
                        labels=labels_of(item.get("Labels", "")),
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
            return await api.run(spec)
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
            partial(run_cli, argv), action=f"start container {spec.name}", subject=spec.name
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
    ) -> Iterable[tuple[str, bytes]]:
        """`(stream, line)` pairs of `logs --timestamps` (blocking; a swarm reads a service's)."""
        return client.container.logs(  # type: ignore[return-value]
            ref, tail=tail, since=since, until=until, timestamps=True, stream=True
        )

    def _follow_args(self, ref: str) -> list[str]:
        """The command that follows a container's logs (a swarm follows its service's)."""
        return ["container", "logs", ref]

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
            found = await self._each_on_socket(partial(api.api.inspect, "container"), refs)
            return [container_from_inspect(item) for item in found if item is not None]
        # The client's command line: `container.inspect([...])` runs one `docker inspect` per
        # container and parses each into pydantic models; status and clean inspect every
        # container of a project at once, in one process.
        argv = await self._cmd("container", "inspect", *refs)

        def ask() -> str:
            try:
                return run_cli(argv)
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
            listed = await api.listed("container", labels)
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
        out = await self._call(partial(run_cli, argv), action="list containers")
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
                return run_cli(argv), "", 0
            except DockerException as exc:
                return exc.stdout or "", exc.stderr or "", exc.return_code

        stdout, stderr, code = await self._call(remove, action="remove containers")
        return removal_outcomes(refs, stdout, stderr, code, action="remove containers")

    async def rename_container(self, ref: str, name: str) -> bool:
        if (api := self._api()) is not None:
            await api.api.expect(
                "POST",
                f"/containers/{quoted(ref)}/rename",
                params={"name": name},
                action=f"rename container {ref}",
                subject=ref,
            )
            return True
        client = await self._whales()
        await self._call(
            lambda: client.container.rename(ref, name), action=f"rename container {ref}", subject=ref
        )
        return True

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
        # The client's command line, as a child that closing the stream kills: python-on-whales'
        # `logs(follow=True, stream=True)` leaves its docker process running when closed.
        argv = await self._cmd(*self._follow_args(ref), "--timestamps", "--follow")
        argv += ["--since", docker_time(since)] if since is not None else []
        async for source, raw in self._stream(argv, action=f"follow the logs of {ref}", subject=ref):
            parsed = parse_log_bytes(self._log_line(raw), "stderr" if source == "stderr" else "stdout")
            if parsed is not None:
                yield parsed

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        out, err = BoundedOutput(), BoundedOutput()
        started = anyio.current_time()
        code: int | None = None
        with anyio.move_on_after(timeout):
            # Cancelling closes the connection, or kills the docker process; the command runs on.
            if (api := self._api()) is not None:
                code = await api.exec(ref, list(command), out, err)
            else:
                code = await self._exec_on_cli(ref, list(command), out, err)
        elapsed = anyio.current_time() - started
        if code is None:
            return ExecResult(
                exit_code=-1,
                stdout="",
                stderr=f"timed out after {timeout:.1f}s",
                duration=timeout,
                timed_out=True,
            )
        return ExecResult(exit_code=code, stdout=out.text(), stderr=err.text(), duration=elapsed)

    async def _exec_on_cli(self, ref: str, command: list[str], out: BoundedOutput, err: BoundedOutput) -> int:
        """`docker exec`: its output into `out` and `err`; return its exit code."""
        from python_on_whales.exceptions import DockerException

        argv = await self._cmd("exec", ref, *command)
        try:
            with translated(f"exec in {ref}", ref, keep=DockerException):
                async with aclosing(cli.lines([str(a) for a in argv], chunks=True)) as pieces:
                    async for source, chunk in pieces:
                        (err if source == "stderr" else out).add(chunk)
        except DockerException as exc:
            stderr = exc.stderr or ""
            # docker's own failures, before the command ran: "No such container: x" (typed
            # NoSuchContainer), "Container x is not running" (not typed), exit 1 or 125-127.
            if exc.return_code in (1, 125, 126, 127) and (
                "No such container" in stderr or "is not running" in stderr
            ):
                with self._named_engine(), translated(f"exec in {ref}", ref):
                    raise
            return exc.return_code
        return 0

    async def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        if (api := self._api()) is not None:
            async with aclosing(api.deaths(labels, since)) as dying:
                async for died in dying:
                    yield died
            return
        # The client's command line, as a child that closing the stream kills: python-on-whales'
        # `system.events` leaves its docker process running when closed.
        argv = await self._cmd(
            "events", "--format", "{{.ID}}", "--filter", "type=container", "--filter", "event=die"
        )
        argv += [a for k, v in labels.items() for a in ("--filter", f"label={k}={v}")]
        argv += ["--since", docker_time(since)] if since is not None else []
        async for source, raw in self._stream(argv, action="watch container exits"):
            if source == "stdout" and raw.strip():
                yield raw.decode().strip()

    async def wait_exit(self, ref: str) -> int:
        if (api := self._api()) is not None:
            return await api.wait(ref)
        argv = await self._cmd("container", "wait", ref)
        out = await self._lasting(argv, action=f"wait for {ref}", subject=ref)
        return int(out.strip().splitlines()[-1])


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
