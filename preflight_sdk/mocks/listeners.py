"""Listening sockets for the mocks: one port per mock, the same on every bind address.

The sockets are bound here, before any server starts, so a port conflict is found for every mock
before anything runs, and nothing is left listening when one of them fails. When a port is taken,
the holder is looked up in `/proc/net/tcp{,6}` (the LISTEN socket's inode) and `/proc/*/fd`, so the
error can name the process to stop.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from preflight_sdk.core.errors import InfrastructureError, InputError

__all__ = ["PortHolder", "bind_all", "check_bind_hosts", "close_all", "find_port_holder", "port_holder"]

_WILDCARDS = frozenset({"0.0.0.0", "::", "", "*"})
_FREE_PORT_ATTEMPTS = 50
_TCP_LISTEN = "0A"
_TCP_CLOSE = "07"  # bound but not listening


class PortHolder(msgspec.Struct, frozen=True, kw_only=True):
    """The process that holds a port: its pid and command line."""

    pid: int
    command: str


def check_bind_hosts(hosts: Sequence[str]) -> list[str]:
    """Return the addresses to listen on: 127.0.0.1 first, then the others, without duplicates.

    Raises:
        InputError: an address listens on every interface (`0.0.0.0`, `::`): mocks never do.
    """
    result = ["127.0.0.1"]
    for host in hosts:
        text = host.strip().strip("[]")
        if text in _WILDCARDS:
            raise InputError(
                f"mocks never listen on all interfaces (`{host}`)",
                hint="pass 127.0.0.1 and the Docker bridge gateway address (`docker network inspect bridge`)",
                details={"bindHost": host},
            )
        if text not in result:
            result.append(text)
    return result


def bind_all(ports: Mapping[str, int], hosts: Sequence[str]) -> dict[str, list[socket.socket]]:
    """Bind and listen for every mock: `{name: [one socket per host]}`, all on the same port.

    Raises:
        InfrastructureError: `PORT_CONFLICT` naming the mock, port and (when found) the holder;
            no socket is left open.
    """
    bound: dict[str, list[socket.socket]] = {}
    try:
        for name, port in ports.items():
            bound[name] = _bind_same_port(name, port, hosts)
    except BaseException:
        close_all(bound)
        raise
    return bound


def close_all(bound: Mapping[str, Sequence[socket.socket]]) -> None:
    """Close every socket of `bound` (listeners bound for a start that does not go on)."""
    for sockets in bound.values():
        for sock in sockets:
            sock.close()


def _bind_same_port(name: str, port: int, hosts: Sequence[str]) -> list[socket.socket]:
    attempts = _FREE_PORT_ATTEMPTS if port == 0 else 1
    last: OSError | None = None
    for _ in range(attempts):
        sockets: list[socket.socket] = []
        chosen = port
        host = hosts[0]
        try:
            for host in hosts:
                sock = _listen(host, chosen)
                sockets.append(sock)
                chosen = sock.getsockname()[1]
            return sockets
        except OSError as exc:
            for sock in sockets:
                sock.close()
            last = exc
            if port == 0 and exc.errno == errno.EADDRINUSE:
                continue  # the free port of the first address is taken on another one: pick again
            raise _bind_error(name, host, chosen, exc) from exc
    assert last is not None
    raise _bind_error(name, hosts[-1], 0, last) from last


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # SO_REUSEADDR only skips TIME_WAIT leftovers of a previous run; an active listener
        # still makes bind fail on Linux, which is the conflict we want to see.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _bind_error(name: str, host: str, port: int, exc: OSError) -> InfrastructureError:
    details: dict[str, object] = {"mock": name, "host": host, "port": port, "errno": exc.errno}
    if exc.errno == errno.EADDRINUSE:
        holder = find_port_holder(port)
        by = ""
        if holder is not None:
            details.update(pid=holder.pid, command=holder.command)
            by = f" by pid {holder.pid} ({holder.command})"
        return InfrastructureError(
            f"mock `{name}` cannot listen on {host}:{port}: the port is already in use{by}",
            code="PORT_CONFLICT",
            hint=(f"stop pid {holder.pid}, or " if holder else "stop the process that holds it, or ")
            + f"set `mocks.{name}.port` to another port (0 picks a free one)",
            details=details,
        )
    if exc.errno == errno.EACCES:
        return InfrastructureError(
            f"mock `{name}` may not listen on {host}:{port}: permission denied",
            code="PORT_CONFLICT",
            hint=f"ports below 1024 need privileges; set `mocks.{name}.port` to 1024 or above (0 picks one)",
            details=details,
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return InfrastructureError(
            f"mock `{name}` cannot listen on {host}: the address does not belong to this machine",
            hint="an extra bind address should be the Docker bridge gateway (docker network inspect bridge)",
            details=details,
        )
    reason = exc.strerror or str(exc)
    return InfrastructureError(f"mock `{name}` cannot listen on {host}:{port}: {reason}", details=details)


def find_port_holder(port: int, proc: str | os.PathLike[str] = "/proc") -> PortHolder | None:
    """Return the process that listens on TCP `port` (this network namespace), when it can be found.

    Args:
        port: the TCP port.
        proc: the procfs mount (a parameter for tests).
    """
    root = Path(proc)
    inodes = _socket_inodes(root, port)
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    try:
        pids = [entry for entry in os.listdir(root) if entry.isdigit()]
    except OSError:
        return None
    for pid in sorted(pids, key=int):
        fd_dir = root / pid / "fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(fd_dir / fd)
            except OSError:
                continue
            if link in targets:
                return PortHolder(pid=int(pid), command=_command_line(root / pid))
    return None


def _socket_inodes(root: Path, port: int) -> list[str]:
    listening: list[str] = []
    bound: list[str] = []
    for table in ("tcp", "tcp6"):
        try:
            lines = (root / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            local, state, inode = fields[1], fields[3], fields[9]
            try:
                local_port = int(local.rsplit(":", 1)[1], 16)
            except (IndexError, ValueError):
                continue
            if local_port != port or inode == "0":
                continue
            if state == _TCP_LISTEN:
                listening.append(inode)
            elif state == _TCP_CLOSE:
                bound.append(inode)
    return listening or bound


def _command_line(pid_dir: Path) -> str:
    try:
        raw = (pid_dir / "cmdline").read_bytes()
    except OSError:
        return "?"
    text = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    if text:
        return text if len(text) <= 200 else text[:197] + "..."
    try:
        return f"[{(pid_dir / 'comm').read_text().strip()}]"
    except OSError:
        return "?"


port_holder = find_port_holder
"""Alias of `find_port_holder` (for the service port checks of setup)."""
