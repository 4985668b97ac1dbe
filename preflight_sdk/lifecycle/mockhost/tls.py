"""How the environment's containers reach mocks at real host names over HTTPS, and trust them.

For every name in a mock's `hosts:`, each container gets an `/etc/hosts` entry pointing at the
mocks (the same address as `--add-host <mock>:host-gateway`), the project's CA bundle mounted
read-only at `/etc/preflight/ca-bundle.pem` (the CA and the usual public roots: see
`mocks/tls.py`), and the variables the usual clients read it from: `SSL_CERT_FILE` (OpenSSL:
Python's `ssl` and `urllib`, `httpx`, Ruby, PHP; Go on Linux), `REQUESTS_CA_BUNDLE` (requests),
`CURL_CA_BUNDLE` (curl) and `NODE_EXTRA_CA_CERTS` (Node). A variable the service sets itself wins.
Nothing changes in the image. The bundle is a file of this machine, so `hosts:` needs an engine
on this machine (Docker's or Podman's): elsewhere the setup is refused, `UNSUPPORTED_ON_ENGINE`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import anyio

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import InfrastructureError

from ..session.state import STATE_DIR

if TYPE_CHECKING:
    from preflight_sdk.mocks import MockHost
    from preflight_sdk.mocks.tls import TlsIdentity

__all__ = [
    "CA_MOUNT",
    "TRUST_VARIABLES",
    "container_trust",
    "ensure_project_ca",
    "hosts_changed",
    "identity",
    "mock_hosts",
    "tls_folder",
]

CA_MOUNT = "/etc/preflight/ca-bundle.pem"
TRUST_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")


def tls_folder(root: str) -> str:
    """`.preflight/tls` of the checkout at `root`: the project's CA (its key never leaves it)."""
    return os.path.join(root, STATE_DIR, "tls")


def mock_hosts(loaded: LoadedConfig) -> dict[str, str]:
    """Each host name a mock stands in for, with the mock's name."""
    return {host.lower(): name for name, mock in loaded.config.mocks.items() for host in mock.hosts}


def container_trust(
    loaded: LoadedConfig, mock_address: str
) -> tuple[list[tuple[str, str]], list[str], dict[str, str]]:
    """The `/etc/hosts` entries, the mount and the variables every container gets (none without `hosts:`).

    Raises:
        InfrastructureError: `UNSUPPORTED_ON_ENGINE` when the engine is not on this machine.
    """
    hosts = mock_hosts(loaded)
    if not hosts:
        return [], [], {}
    if mock_address != "host-gateway":
        raise InfrastructureError(
            "mocks with `hosts:` need an engine on this machine: its containers mount the project's CA "
            "bundle from .preflight/tls",
            code="UNSUPPORTED_ON_ENGINE",
            hint="run on this machine's Docker or Podman, or give the service the mock's URL instead",
            details={"feature": "mocks with hosts", "hosts": sorted(hosts)},
        )
    bundle = os.path.join(tls_folder(loaded.root), "bundle.pem")
    return (
        [(host, mock_address) for host in sorted(hosts)],
        [f"{bundle}:{CA_MOUNT}:ro"],
        dict.fromkeys(TRUST_VARIABLES, CA_MOUNT),
    )


async def ensure_project_ca(loaded: LoadedConfig) -> None:
    """Make the project's CA (and its bundle) before a container mounts it, when a mock has `hosts:`."""
    if not mock_hosts(loaded):
        return
    from preflight_sdk.mocks.tls import project_ca

    await anyio.to_thread.run_sync(project_ca, tls_folder(loaded.root))


async def identity(loaded: LoadedConfig) -> TlsIdentity | None:
    """The mocks' certificate for every name of their `hosts:` (None when no mock has any)."""
    hosts = mock_hosts(loaded)
    if not hosts:
        return None
    from preflight_sdk.mocks.tls import TlsIdentity, project_ca

    folder = tls_folder(loaded.root)
    return await anyio.to_thread.run_sync(lambda: TlsIdentity(project_ca(folder), hosts))


def hosts_changed(host: MockHost, loaded: LoadedConfig) -> bool:
    """Whether `host` serves other host names than the configuration asks for (it then starts again)."""
    served = {h.lower() for config in host.configs.values() for h in config.hosts}
    return served != set(mock_hosts(loaded))
