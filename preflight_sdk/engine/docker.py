"""`DockerEngine`: the `Engine` protocol on a real Docker daemon.

Short calls whose typed wrappers fit (image existence, stopping containers) go through
python-on-whales in a worker thread. Everything long or streaming (build, pull, logs, exec,
events, wait), everything on setup's critical path (run, network create: python-on-whales would
inspect each object it creates, one more docker process per service) and the bulk reads (inspect,
ps, rm of many containers at once) run the docker CLI as cancellable child processes, so a
cancelled operation never leaves a docker process behind and one call serves many containers.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import anyio

from ..errors import EnvironmentError_
from ..results.lifecycle import LogLine
from .base import (
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
from .errors import daemon_unreachable, translate
from .follow import follow_api, local_socket
from .inspect import container_from_inspect, container_from_ps, docker_time, merge_log_streams, parse_log_line
from .probe import NetworkProber, Prober
from .process import Completed, iter_lines, reap, run_command, stream_command

__all__ = ["DockerEngine"]

T = TypeVar("T")
_BUILD_TAIL = 30
_INFO_CACHE: dict[tuple[str, str, str], EngineInfo] = {}
_UNKNOWN = object()


class DockerEngine:
    """The Engine on the local Docker daemon (`DOCKER_HOST` and contexts are honoured by the CLI)."""

    prober: Prober = NetworkProber()  # stateless: one for every engine

    def __init__(self, docker: str = "docker") -> None:
        self._docker = docker
        self._client: Any = None
        self._limiter = anyio.CapacityLimiter(16)
        self._socket: object = _UNKNOWN  # the daemon's local unix socket, once looked up

    # -- plumbing ----------------------------------------------------------------------------

    def _pow(self) -> Any:
        if self._client is None:
            from python_on_whales import DockerClient

            self._client = DockerClient(client_call=[self._docker])
        return self._client

    async def _in_thread(self, fn: Callable[[], T], *, action: str, subject: str | None = None) -> T:
        from python_on_whales.client_config import ClientNotFoundError
        from python_on_whales.exceptions import DockerException

        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._limiter)
        except ClientNotFoundError as exc:
            raise _no_cli() from exc
        except DockerException as exc:
            raise translate(exc.stderr or str(exc), action=action, subject=subject) from exc

    async def _cli(
        self, *args: str, timeout: float | None = 120, env: Mapping[str, str] | None = None
    ) -> Completed:
        try:
            return await run_command([self._docker, *args], timeout=timeout, env=env)
        except FileNotFoundError as exc:
            raise _no_cli() from exc
        except TimeoutError as exc:
            raise EnvironmentError_(
                f"`docker {args[0]}` did not answer within {timeout:.0f}s",
                code="DOCKER_ERROR",
                hint="the daemon may be overloaded or stuck; check `docker info`",
                retryable=True,
            ) from exc

    async def _checked(
        self, *args: str, action: str, subject: str | None = None, timeout: float | None = 120
    ) -> str:
        done = await self._cli(*args, timeout=timeout)
        if done.returncode != 0:
            raise translate(done.stderr, action=action, subject=subject)
        return done.stdout

    # -- daemon and images -------------------------------------------------------------------

    async def info(self) -> EngineInfo:
        key = (self._docker, os.environ.get("DOCKER_HOST", ""), os.environ.get("DOCKER_CONTEXT", ""))
        cached = _INFO_CACHE.get(key)
        if cached is not None:
            return cached
        results: dict[str, Completed] = {}

        async def ask(name: str, *args: str) -> None:
            results[name] = await self._cli(*args, timeout=20)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "version", "version", "--format", "{{.Server.Version}}")
            tg.start_soon(ask, "buildx", "buildx", "version")
            tg.start_soon(ask, "bridge", "network", "inspect", "bridge", "--format", "{{json .IPAM.Config}}")
        version = results["version"]
        if version.returncode != 0 or not version.stdout.strip():
            raise daemon_unreachable(version.stderr or version.stdout)
        bridge = results["bridge"]
        info = EngineInfo(
            server_version=version.stdout.strip(),
            builder="buildx" if results["buildx"].returncode == 0 else "legacy",
            host_gateway=_bridge_gateway(bridge.stdout) if bridge.returncode == 0 else None,
        )
        # The daemon's facts do not change while it runs: ask once per process.
        _INFO_CACHE[key] = info
        return info

    async def image_exists(self, ref: str) -> bool:
        exists: bool = await self._in_thread(
            partial(self._pow().image.exists, ref), action=f"inspect image {ref}", subject=ref
        )
        return exists

    async def inspect_image(self, ref: str) -> ImageInfo | None:
        done = await self._cli("image", "inspect", "--format", "{{json .Id}} {{json .Config.Labels}}", ref)
        if done.returncode != 0:
            if "no such" in done.stderr.lower():
                return None
            raise translate(done.stderr, action=f"inspect image {ref}", subject=ref)
        image_id, _, labels = done.stdout.strip().partition(" ")
        return ImageInfo(id=json.loads(image_id), labels=json.loads(labels or "null") or {})

    async def pull(self, ref: str, on_line: LineSink) -> None:
        tail: list[str] = []

        def line(_: str, text: str) -> None:
            tail.append(text)
            del tail[:-_BUILD_TAIL]
            on_line(text)

        code = await self._stream(["pull", ref], line)
        if code != 0:
            raise translate("\n".join(tail), action=f"pull {ref}", subject=ref)

    async def build(self, spec: BuildSpec, on_line: LineSink) -> None:
        info = await self.info()
        # The legacy builder keeps the intermediate container of a failed step unless told not to.
        argv = (
            ["buildx", "build", "--load", "--progress=plain"]
            if info.builder == "buildx"
            else ["build", "--force-rm"]
        )
        argv += ["-f", spec.dockerfile, "-t", spec.image]
        if spec.no_cache:
            argv.append("--no-cache")
        if spec.target:
            argv += ["--target", spec.target]
        for key, value in spec.args.items():
            argv += ["--build-arg", f"{key}={value}"]
        for key, value in spec.labels.items():
            argv += ["--label", f"{key}={value}"]
        argv.append(spec.context)
        tail: list[str] = []

        def line(_: str, text: str) -> None:
            tail.append(text)
            del tail[:-_BUILD_TAIL]
            on_line(text)

        env = {"DOCKER_BUILDKIT": "0"} if info.builder == "legacy" else None
        code = await self._stream(argv, line, env=env)
        if code != 0:
            error = translate("\n".join(tail), action=f"build {spec.image}", subject=spec.image)
            # Only an unreachable daemon is retryable: any other docker failure is the build's.
            if error.code == "DOCKER_ERROR" and not error.retryable:
                raise EnvironmentError_(
                    f"docker build of {spec.image} failed (exit {code}): {tail[-1] if tail else 'no output'}",
                    code="BUILD_FAILED",
                    hint="read details.logTail (the last 30 lines of the build); fix the Dockerfile or the context",
                    details={
                        "image": spec.image,
                        "dockerfile": spec.dockerfile,
                        "exitCode": code,
                        "logTail": list(tail),
                    },
                )
            raise error

    async def _stream(
        self, argv: list[str], on_line: Callable[[str, str], None], *, env: Mapping[str, str] | None = None
    ) -> int:
        try:
            return await stream_command([self._docker, *argv], on_line, env=env)
        except FileNotFoundError as exc:
            raise _no_cli() from exc

    # -- networks ----------------------------------------------------------------------------

    async def create_network(self, name: str, labels: Mapping[str, str]) -> NetworkInfo:
        flags = [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]
        out = await self._checked(
            "network", "create", *flags, name, action=f"create network {name}", subject=name
        )
        return NetworkInfo(id=out.strip(), name=name, labels=dict(labels))

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkInfo]:
        filters = [arg for key, value in labels.items() for arg in ("--filter", f"label={key}={value}")]
        out = await self._checked(
            "network", "ls", "--no-trunc", "--format", "{{json .}}", *filters, action="list networks"
        )
        networks = []
        for raw in out.splitlines():
            if raw.strip():
                item = json.loads(raw)
                networks.append(
                    NetworkInfo(
                        id=item.get("ID", ""),
                        name=item.get("Name", ""),
                        labels=_labels(item.get("Labels", "")),
                    )
                )
        return networks

    async def remove_networks(self, names: Sequence[str]) -> list[RemoveOutcome]:
        if not names:
            return []
        done = await self._cli("network", "rm", *names, timeout=60)
        return _removal_outcomes(names, done, missing=("No such network", "not found"))

    # -- containers --------------------------------------------------------------------------

    async def run(self, spec: ContainerSpec) -> str:
        # The docker CLI directly: python-on-whales would inspect every container it starts, one
        # more docker process per service on setup's critical path.
        argv = ["run", "--detach", "--pull", "never", "--name", spec.name, "--network", spec.network]
        for alias in spec.aliases:
            argv += ["--network-alias", alias]
        for key, value in spec.env.items():
            argv += ["--env", f"{key}={value}"]
        for port in spec.ports:
            argv += ["--publish", port.docker_arg()]
        for volume in spec.volumes:
            argv += ["--volume", volume]
        for key, value in spec.labels.items():
            argv += ["--label", f"{key}={value}"]
        for host, address in spec.add_hosts:
            argv += ["--add-host", f"{host}:{address}"]
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
        argv.append(spec.image)
        argv += list(spec.command or [])
        out = await self._checked(*argv, action=f"start container {spec.name}", subject=spec.name)
        return out.strip().splitlines()[-1]

    async def inspect(self, refs: Sequence[str]) -> list[ContainerInfo]:
        if not refs:
            return []
        done = await self._cli("container", "inspect", *refs, timeout=60)
        if done.returncode != 0 and not done.stdout.strip().startswith("["):
            if "No such" in done.stderr or "no such" in done.stderr.lower():
                return []
            raise translate(done.stderr, action="inspect containers")
        try:
            items = json.loads(done.stdout or "[]")
        except json.JSONDecodeError:
            return []
        return [container_from_inspect(item) for item in items]

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        filters = [arg for key, value in labels.items() for arg in ("--filter", f"label={key}={value}")]
        if detail:
            out = await self._checked("ps", "-a", "-q", "--no-trunc", *filters, action="list containers")
            return await self.inspect(out.split())
        out = await self._checked(
            "ps", "-a", "--no-trunc", "--format", "{{json .}}", *filters, action="list containers"
        )
        return [container_from_ps(json.loads(line)) for line in out.splitlines() if line.strip()]

    async def remove_containers(self, refs: Sequence[str], *, force: bool) -> list[RemoveOutcome]:
        if not refs:
            return []
        argv = ["rm", "-v", *(["-f"] if force else []), *refs]
        done = await self._cli(*argv, timeout=120)
        return _removal_outcomes(refs, done, missing=("No such container",))

    async def stop_containers(self, refs: Sequence[str], *, grace: float = 10.0) -> None:
        if refs:
            stop = partial(self._pow().container.stop, list(refs), time=int(grace))
            await self._in_thread(stop, action="stop containers")

    async def logs(
        self,
        ref: str,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[LogLine]:
        argv = ["logs", "--timestamps"]
        if tail is not None:
            argv += ["--tail", str(tail)]
        if since is not None:
            argv += ["--since", docker_time(since)]
        if until is not None:
            argv += ["--until", docker_time(until)]
        done = await self._cli(*argv, ref, timeout=60)
        if done.returncode != 0:
            raise translate(done.stderr, action=f"read the logs of {ref}", subject=ref)
        lines = merge_log_streams(done.stdout, done.stderr)
        return lines[-tail:] if tail is not None and tail >= 0 else lines

    async def follow_logs(self, ref: str, *, since: datetime | None = None) -> AsyncGenerator[LogLine, None]:
        # Consumers close the generator (contextlib.aclosing), which closes the connection or
        # kills the child.
        if self._socket is _UNKNOWN:
            self._socket = await anyio.to_thread.run_sync(local_socket)
        if isinstance(self._socket, str):
            async for entry in follow_api(self._socket, ref, since=since):
                yield entry
            return
        # A remote daemon or another context: the CLI, with one pipe (stderr merged into stdout)
        # so no task is needed inside this generator; each line is then reported as stdout.
        argv = [self._docker, "logs", "--follow", "--timestamps"]
        if since is not None:
            argv += ["--since", docker_time(since)]
        async with await anyio.open_process(
            [*argv, ref], stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        ) as process:
            try:
                assert process.stdout is not None
                async for line in iter_lines(process.stdout):
                    parsed = parse_log_line(line, "stdout")
                    if parsed is not None:
                        yield parsed
            finally:
                await reap(process)

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        started = anyio.current_time()
        try:
            done = await run_command([self._docker, "exec", ref, *command], timeout=timeout)
        except FileNotFoundError as exc:
            raise _no_cli() from exc
        except TimeoutError:
            return ExecResult(
                exit_code=-1,
                stdout="",
                stderr=f"timed out after {timeout:.1f}s",
                duration=timeout,
                timed_out=True,
            )
        elapsed = anyio.current_time() - started
        if done.returncode in (1, 125, 126, 127) and (
            "No such container" in done.stderr or "is not running" in done.stderr
        ):
            raise translate(done.stderr, action=f"exec in {ref}", subject=ref)
        return ExecResult(exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr, duration=elapsed)

    async def watch_exits(
        self, labels: Mapping[str, str], *, since: datetime | None = None
    ) -> AsyncGenerator[str, None]:
        argv = [
            self._docker,
            "events",
            "--filter",
            "type=container",
            "--filter",
            "event=die",
            "--format",
            "{{.Actor.ID}}",
        ]
        for key, value in labels.items():
            argv += ["--filter", f"label={key}={value}"]
        if since is not None:
            argv += ["--since", docker_time(since)]
        async with await anyio.open_process(argv, stdin=subprocess.DEVNULL) as process:
            try:
                assert process.stdout is not None
                async for line in iter_lines(process.stdout):
                    if line.strip():
                        yield line.strip()
            finally:
                await reap(process)

    async def wait_exit(self, ref: str) -> int:
        done = await self._cli("wait", ref, timeout=None)
        if done.returncode != 0:
            raise translate(done.stderr, action=f"wait for {ref}", subject=ref)
        return int(done.stdout.strip() or "0")


def _no_cli() -> EnvironmentError_:
    return EnvironmentError_(
        "the docker command-line client is not installed (or not on PATH)",
        code="DOCKER_ERROR",
        hint="install Docker (`scripts/ensure-docker` on Debian installs docker.io) and make sure `docker` is on PATH",
    )


def _bridge_gateway(ipam_json: str) -> str | None:
    """Return the default bridge's gateway: what `host-gateway` resolves to inside containers."""
    try:
        configs = json.loads(ipam_json or "null") or []
    except json.JSONDecodeError:
        return None
    for config in configs:
        if config.get("Gateway") and ":" not in config["Gateway"]:
            return str(config["Gateway"])
        subnet = str(config.get("Subnet") or "")
        if subnet and ":" not in subnet:
            # Docker gives the bridge the first address of its subnet when no gateway is listed.
            network = ipaddress.ip_network(subnet, strict=False)
            return str(next(network.hosts()))
    return None


def _labels(text: str) -> dict[str, str]:
    labels = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            labels[key.strip()] = value
    return labels


def _removal_outcomes(
    refs: Sequence[str], done: Completed, *, missing: tuple[str, ...]
) -> list[RemoveOutcome]:
    removed = {line.strip() for line in done.stdout.splitlines() if line.strip()}
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    if any(_is_daemon_error(line) for line in errors):
        raise translate(done.stderr, action="remove resources")
    outcomes = []
    for ref in refs:
        if ref in removed:
            outcomes.append(RemoveOutcome(ref=ref, action="removed"))
            continue
        mine = [line for line in errors if ref in line]
        if any(m in line for line in mine for m in missing):
            outcomes.append(RemoveOutcome(ref=ref, action="not_found"))
        elif mine:
            outcomes.append(
                RemoveOutcome(
                    ref=ref, action="failed", error=mine[0].removeprefix("Error response from daemon: ")
                )
            )
        elif done.returncode == 0:
            outcomes.append(RemoveOutcome(ref=ref, action="removed"))
        else:
            outcomes.append(
                RemoveOutcome(ref=ref, action="failed", error=(errors[0] if errors else "docker rm failed"))
            )
    return outcomes


def _is_daemon_error(line: str) -> bool:
    return "Cannot connect to the Docker daemon" in line or "Is the docker daemon running" in line
