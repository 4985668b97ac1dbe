"""HTTPS for mocks that stand in for real host names (`hosts: [api.stripe.com]`): a CA made per project.

The CA is made once per checkout with `trustme` (a library made for test CAs, rather than X.509
written by hand) and kept in `.preflight/tls/`: `ca.pem` (the certificate), `ca-key.pem` (its
key, readable by this user alone; it never leaves that folder and no result names it), and
`bundle.pem`, the CA followed by the usual public roots (certifi's), which every container of the
environment gets mounted read-only, so its clients trust the mocks without losing the real sites.

The mocks' certificate (`TlsIdentity`) is issued from that CA for every host name the mocks stand
in for, when the mocks start, and again when a reload adds a name: one certificate covers them
all, so one listener on port 443 serves every mock, each request going to the mock whose `hosts`
name its `Host` header (see `HostDispatch`).
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from preflight_sdk.core.errors import InfrastructureError

from .listeners import bind_all
from .responses import json_response

if TYPE_CHECKING:
    import socket

    from preflight_sdk.config.model import MockConfig

    from .app import MockApp, Receive, Scope, Send

__all__ = [
    "BUNDLE_FILE",
    "CA_FILE",
    "HostDispatch",
    "ProjectCa",
    "TlsIdentity",
    "bind_tls",
    "hosts_of",
    "project_ca",
]

CA_FILE = "ca.pem"
BUNDLE_FILE = "bundle.pem"
_KEY_FILE = "ca-key.pem"
_LEAF_FILE = "mocks.pem"
_lock = threading.Lock()


class ProjectCa(msgspec.Struct, frozen=True, kw_only=True):
    """Where a project's CA lives: its certificate, its key (private), and the bundle containers get."""

    cert: str
    key: str
    bundle: str


def _trustme() -> Any:
    try:
        import trustme
    except ImportError as exc:
        raise InfrastructureError(
            "mocks with `hosts:` need a CA of their own, made with the `trustme` package, which is not installed",
            hint="pip install 'preflight-sdk[tls]'",
            details={"missing": "trustme"},
        ) from exc
    return trustme


def _write_private(path: Path, data: bytes) -> None:
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "wb") as out:
        out.write(data)


def _roots() -> bytes:
    try:
        import certifi
    except ImportError:  # certifi comes with httpx; without it the bundle holds the CA alone
        return b""
    return Path(certifi.where()).read_bytes()


def project_ca(folder: str | os.PathLike[str]) -> ProjectCa:
    """The project's CA in `folder` (`.preflight/tls`), made on first use. Blocking.

    Raises:
        InfrastructureError: `trustme` is not installed (the `tls` extra).
    """
    path = Path(folder)
    ca = ProjectCa(cert=str(path / CA_FILE), key=str(path / _KEY_FILE), bundle=str(path / BUNDLE_FILE))
    with _lock:
        if not (Path(ca.cert).is_file() and Path(ca.key).is_file()):
            made = _trustme().CA(
                organization_name="preflight", organization_unit_name=f"mocks of {path.parent.parent.name}"
            )
            path.mkdir(parents=True, exist_ok=True)
            _write_private(Path(ca.key), made.private_key_pem.bytes())
            Path(ca.cert).write_bytes(made.cert_pem.bytes())
        cert = Path(ca.cert).read_bytes()
        bundle = cert + b"\n" + _roots()
        if not Path(ca.bundle).is_file() or Path(ca.bundle).read_bytes() != bundle:
            Path(ca.bundle).write_bytes(bundle)
    return ca


class TlsIdentity:
    """The mocks' certificate (for every host name they stand in for) and the TLS context that serves it."""

    def __init__(self, ca: ProjectCa, hosts: Iterable[str]) -> None:
        """Issue a certificate for `hosts` from `ca`. Blocking."""
        self.ca = ca
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.hosts: tuple[str, ...] = ()
        self.cover(hosts)

    def cover(self, hosts: Iterable[str]) -> None:
        """Serve a certificate naming `hosts` from now on (new connections; a no-op when it already does)."""
        wanted = tuple(sorted(set(hosts)))
        if wanted == self.hosts or not wanted:
            return
        trustme = _trustme()
        authority = trustme.CA.from_pem(Path(self.ca.cert).read_bytes(), Path(self.ca.key).read_bytes())
        leaf = authority.issue_cert(*wanted)
        # The leaf's key sits beside the CA's, readable by this user alone, never in /tmp.
        path = Path(self.ca.key).parent / _LEAF_FILE
        _write_private(path, leaf.private_key_and_cert_chain_pem.bytes())
        self.context.load_cert_chain(str(path))
        self.hosts = wanted


class HostDispatch:
    """The ASGI application of the HTTPS listener: each request goes to the mock its `Host` names."""

    def __init__(self, apps: Mapping[str, MockApp], hosts: Callable[[], Mapping[str, str]]) -> None:
        """`apps` by mock name; `hosts()` maps each host name to its mock's name now (reloads included)."""
        self.apps = apps
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        name = ""
        for key, value in scope["headers"]:
            if key == b"host":
                name = value.decode("latin-1").rsplit(":", 1)[0] if not value.startswith(b"[") else ""
                break
        mapping = self.hosts()
        app = self.apps.get(mapping.get(name.lower(), ""))
        if app is not None:
            await app(scope, receive, send)
            return
        while (await receive()).get("more_body", False):
            pass
        head, payload = json_response(
            {"error": "no mock stands in for this host", "host": name, "hosts": sorted(mapping)}
        )
        await send({"type": "http.response.start", "status": 421, "headers": head})
        await send({"type": "http.response.body", "body": payload})


def hosts_of(mocks: Mapping[str, MockConfig]) -> dict[str, str]:
    """Each host name the mocks stand in for (lower case), with its mock's name."""
    return {host.lower().rstrip("."): name for name, mock in mocks.items() for host in mock.hosts}


def bind_tls(binds: Iterable[str], port: int) -> list[socket.socket]:
    """Listen for HTTPS on `port` of every address of `binds` (port 0 picks one, the same on each).

    Raises:
        InfrastructureError: `PORT_CONFLICT` when the port is taken (by another environment whose
            mocks stand in for host names, or a web server) or may not be used.
    """
    try:
        return bind_all({"https": port}, list(binds))["https"]
    except InfrastructureError as exc:
        if exc.code != "PORT_CONFLICT":
            raise
        holder = (exc.details or {}).get("pid")
        raise InfrastructureError(
            f"the mocks' `hosts:` cannot be served on port {port}: {exc.message.split(': ', 1)[-1]}",
            code="PORT_CONFLICT",
            hint=(f"stop pid {holder} (" if holder else "stop what listens there (")
            + "another environment whose mocks stand in for host names, or a web server); ports below "
            "1024 also need privileges (root, or `sysctl net.ipv4.ip_unprivileged_port_start=443`)",
            details={**(exc.details or {}), "feature": "mocks with hosts"},
        ) from exc
