"""The Docker Engine API on this machine's socket, for the calls on setup's, clean's and exec's paths.

Every other Docker call goes through python-on-whales, which runs the docker CLI: one process per
call, measured at 29 ms for `docker ps -q` against 0.4 ms for the same request on the socket
(median of 20, 2 CPUs). Setup waits for two such calls in a row (`network create`, then `run`)
and clean for two more (`rm -f`, `network rm`), so a bare script of those four commands, or
testcontainers (which speaks HTTP to the daemon), beats any wrapper of the CLI. When the engine is
a unix socket of this machine and the client is the stock `docker`, these calls go to the socket
instead: create and start a container, create and remove networks, list, inspect and remove
containers, inspect images, run a command in a container (`exec`: the suites' inner loop), wait
for an exit and watch containers die (the last three without a long-lived docker process). The
daemon answers with the messages the CLI prints ("No such image: …", "port is already
allocated"), so one `translate` turns either into a `PreflightError`. Remote engines (tcp, ssh,
contexts) and Podman keep the CLI for everything.

`PREFLIGHT_DOCKER_API=0` turns this lane off (every call through the CLI).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from ..errors import EnvironmentError_
from . import children
from .base import ContainerSpec, RemoveOutcome
from .endpoint import on_local_socket
from .errors import daemon_unreachable, translate
from .exec_output import STDOUT, BoundedOutput, Frames
from .run_options import apply_options

__all__ = ["EngineAPI", "container_body", "local_socket"]

T = TypeVar("T")
DEFAULT_SOCKET = "/var/run/docker.sock"
# Creating, starting and removing answer in well under a second; removing a container that does
# not stop on SIGKILL, or a daemon under heavy load, can take longer. The CLI waits forever.
_TIMEOUT = 300.0


def local_socket(host: str | None, context: str | None) -> str | None:
    """Return the path of the engine's unix socket when the API lane applies, else None."""
    if os.environ.get("PREFLIGHT_DOCKER_API", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    if not on_local_socket(host, context):
        return None
    where = host or os.environ.get("DOCKER_HOST", "")
    path = where.removeprefix("unix://") if where.startswith("unix://") else DEFAULT_SOCKET
    return path if os.path.exists(path) else None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None = _TIMEOUT) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path
        # Kept past `getresponse`, which drops `sock` when the answer lasts until the daemon hangs up.
        self.opened: socket.socket | None = None

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = self.opened = sock


class _OpenResponse:
    """A response that lasts (events, a wait, an exec), ended the way `children` ends a docker process."""

    def __init__(self) -> None:
        self.connection: _UnixConnection | None = None
        self.killed = False

    def poll(self) -> int | None:
        return 0 if self.killed else None

    def kill(self) -> None:
        self.killed = True
        sock = self.connection.opened if self.connection is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked reading it
            except OSError:
                pass

    def wait(self, timeout: float | None = None) -> int:
        return 0


class EngineAPI:
    """Blocking requests to the Docker Engine API on a unix socket (call them from a worker thread).

    One connection per request: on a local socket connecting costs microseconds, and nothing is
    shared between the threads that call at once.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def request(
        self, method: str, path: str, *, params: Mapping[str, str] | None = None, body: Any = None
    ) -> tuple[int, Any]:
        """Send one request; return `(status, decoded JSON or None)`.

        Raises:
            EnvironmentError_: DOCKER_ERROR (retryable) when the socket does not answer.
        """
        connection = _UnixConnection(self.path)
        try:
            reply = self._send(connection, method, path, params, body)
            raw = self._read(reply.read)
        finally:
            connection.close()
        return reply.status, _decoded(raw)

    def _send(
        self,
        connection: _UnixConnection,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Any = None,
    ) -> http.client.HTTPResponse:
        url = path + ("?" + urlencode(params) if params else "")
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        return self._read(lambda: _exchange(connection, method, url, payload, headers))

    def _read(self, read: Callable[[], T]) -> T:
        """`read()`, with a socket that does not answer as the CLI's words for it."""
        try:
            return read()
        except (OSError, http.client.HTTPException) as exc:
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: Exception) -> EnvironmentError_:
        if isinstance(exc, PermissionError):
            return daemon_unreachable(
                f"Got permission denied while trying to connect to the Docker daemon socket at unix://{self.path}: {exc}"
            )
        return daemon_unreachable(
            f"Cannot connect to the Docker daemon at unix://{self.path}. Is the docker daemon running? ({exc})"
        )

    def _lasting(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        *,
        action: str,
        subject: str | None = None,
        body: Any = None,
        chunks: bool = False,
        handle: _OpenResponse | None = None,
    ) -> Iterator[bytes]:
        """The lines (or, with `chunks`, the bytes as they arrive) of a response that lasts;
        cancelling the call that reads them shuts its socket (`handle.killed` then says so).
        """
        connection = _UnixConnection(self.path, timeout=None)
        if handle is None:
            handle = _OpenResponse()
            children.track(handle)
        handle.connection = connection
        try:
            if handle.killed:
                return
            reply = self._send(connection, method, path, params, body)
            if reply.status >= 400:
                raise _failure(_decoded(self._read(reply.read)), action=action, subject=subject)
            while not handle.killed:
                try:
                    line = reply.read1(65536) if chunks else reply.readline()
                except (OSError, http.client.HTTPException) as exc:
                    if handle.killed:
                        return  # cancelled: the shut socket is how it ends
                    raise self._unreachable(exc) from exc  # the daemon went away mid-stream
                if not line:
                    return
                if chunks or line.strip():
                    yield line
        finally:
            connection.close()
            if connection.opened is not None:
                connection.opened.close()  # the answer's reader holds it past `close` above

    def expect(
        self,
        method: str,
        path: str,
        *,
        action: str,
        subject: str | None = None,
        params: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> Any:
        """Send one request; return its JSON, or raise the `PreflightError` its error message reads as."""
        status, data = self.request(method, path, params=params, body=body)
        if status >= 400:
            raise _failure(data, action=action, subject=subject)
        return data

    # -- the calls -----------------------------------------------------------------------------

    def run(self, spec: ContainerSpec) -> str:
        """Create and start the container `spec` (`docker run --detach --pull never`); return its id."""
        action = f"start container {spec.name}"
        status, created = self.request(
            "POST",
            "/containers/create",
            params={
                "name": spec.name,
                **({"platform": spec.options.platform} if spec.options.platform else {}),
            },
            body=container_body(spec),
        )
        if status >= 400:
            if "no such image" in _message(created).lower():
                # The daemon names the image with its tag filled in; the CLI, and the user, as written.
                created = {"message": f"No such image: {spec.image}"}
            raise _failure(created, action=action, subject=spec.name)
        container_id = str(created["Id"])
        # As with `docker run`, a container that fails to start (a port taken) stays created: the
        # project's clean removes it by label.
        self.expect("POST", f"/containers/{container_id}/start", action=action, subject=spec.name)
        return container_id

    def create_network(self, name: str, labels: Mapping[str, str]) -> str:
        """Create a bridge network (`docker network create`); return its id."""
        created = self.expect(
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

    def remove(self, kind: str, ref: str, *, force: bool = False) -> RemoveOutcome:
        """Remove one container (with its anonymous volumes) or network; say what happened to it."""
        if kind == "container":
            path = f"/containers/{quote(ref, safe='')}"
            params = {"v": "1", "force": "1" if force else "0"}
        else:
            path, params = f"/networks/{quote(ref, safe='')}", {}
        status, data = self.request("DELETE", path, params=params)
        if status < 300:
            return RemoveOutcome(ref=ref, action="removed")
        if status == 404:
            return RemoveOutcome(ref=ref, action="not_found")
        return RemoveOutcome(ref=ref, action="failed", error=_message(data) or f"HTTP {status}")

    def rename(self, ref: str, name: str) -> None:
        """Rename a container (`docker rename`)."""
        self.expect(
            "POST",
            f"/containers/{quote(ref, safe='')}/rename",
            params={"name": name},
            action=f"rename container {ref}",
            subject=ref,
        )

    def drop_untagged(self, image_id: str) -> None:
        """Remove image `image_id` (and its untagged parents) when no tag names it any more.

        One a container still uses, or one already gone, stays as it is: nothing to tidy.
        """
        found = self.inspect("image", image_id)
        if found is not None and not found.get("RepoTags"):
            self.request("DELETE", f"/images/{quote(image_id, safe='')}")

    def list_containers(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """Every container (running or not) carrying all `labels`, as `GET /containers/json` lists them."""
        filters = {"label": [f"{k}={v}" for k, v in labels.items()]}
        found = self.expect(
            "GET",
            "/containers/json",
            params={"all": "1", "filters": json.dumps(filters)},
            action="list containers",
        )
        return list(found or [])

    def list_networks(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """Every network carrying all `labels`."""
        filters = {"label": [f"{k}={v}" for k, v in labels.items()]}
        found = self.expect(
            "GET", "/networks", params={"filters": json.dumps(filters)}, action="list networks"
        )
        return list(found or [])

    def events(self, filters: Mapping[str, list[str]], since: datetime | None) -> Iterator[dict[str, Any]]:
        """The daemon's events matching `filters` (every value of a key must match), from `since` on."""
        params = {"filters": json.dumps(dict(filters))}
        if since is not None:
            params["since"] = f"{since.timestamp():.9f}"
        for line in self._lasting("GET", "/events", params, action="watch container exits"):
            yield dict(json.loads(line))

    def wait(self, ref: str) -> int:
        """Block until container `ref` exits (`docker wait`); return its exit code."""
        path = f"/containers/{quote(ref, safe='')}/wait"
        for line in self._lasting("POST", path, None, action=f"wait for {ref}"):
            return int(json.loads(line).get("StatusCode", -1))
        raise daemon_unreachable(
            f"Cannot connect to the Docker daemon at unix://{self.path}: the wait for {ref} ended unanswered"
        )

    def exec(self, ref: str, command: Sequence[str], out: BoundedOutput, err: BoundedOutput) -> int:
        """Run `command` in container `ref` (`docker exec`), its output into `out` and `err`;
        return its exit code (-1 when the call was cancelled: its socket is shut, nothing waits).
        """
        action = f"exec in {ref}"
        handle = _OpenResponse()
        children.track(handle)
        created = self.expect(
            "POST",
            f"/containers/{quote(ref, safe='')}/exec",
            body={
                "AttachStdin": False,
                "AttachStdout": True,
                "AttachStderr": True,
                "Tty": False,
                "Cmd": list(command),
            },
            action=action,
            subject=ref,
        )
        path = f"/exec/{quote(str(created['Id']), safe='')}"
        frames = Frames()
        # The daemon answers 200 and sends the raw stream until the command ends, then hangs up:
        # no `Upgrade: tcp` hijack is needed when nothing is written to the command's stdin.
        start = {"Detach": False, "Tty": False}
        for chunk in self._lasting(
            "POST", f"{path}/start", None, action=action, subject=ref, body=start, chunks=True, handle=handle
        ):
            for stream, piece in frames.feed(chunk):
                (out if stream == STDOUT else err).add(piece)
        if handle.killed:
            return -1
        if frames.cut:
            raise daemon_unreachable(
                f"Cannot connect to the Docker daemon at unix://{self.path}: the output of {action} ended mid-frame"
            )
        # The daemon ends the stream when the command exits; its exit code may lag a moment behind.
        for _ in range(100):
            state = self.expect("GET", f"{path}/json", action=action, subject=ref) or {}
            if not state.get("Running") or handle.killed:
                break
            time.sleep(0.01)
        return int(state.get("ExitCode") or 0)

    def inspect(self, kind: str, ref: str) -> dict[str, Any] | None:
        """`docker inspect` of one container or image (the same JSON), or None when there is none."""
        path = f"/{kind}s/{quote(ref, safe='')}/json"
        status, data = self.request("GET", path)
        if status == 404:
            return None
        if status >= 400:
            raise _failure(data, action=f"inspect {kind} {ref}", subject=ref)
        return dict(data or {})


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


def _exchange(
    connection: _UnixConnection, method: str, url: str, payload: bytes | None, headers: dict[str, str]
) -> http.client.HTTPResponse:
    connection.request(method, url, body=payload, headers=headers)
    return connection.getresponse()


def _decoded(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw.strip() else None
    except ValueError:
        return {"message": raw.decode("utf-8", "replace")}


def _message(data: Any) -> str:
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def _failure(data: Any, *, action: str, subject: str | None) -> EnvironmentError_:
    # The CLI prints the daemon's message after this prefix; `translate` reads either.
    return translate(f"Error response from daemon: {_message(data)}", action=action, subject=subject)
