"""Which engine, and where it is.

`create_engine` makes the engine object for an `EngineTarget` (which engine: `config.engine_target`).
`endpoint_address` and `on_local_socket` say where an engine is, seen from this machine: an engine
on a unix socket here publishes ports on 127.0.0.1, a remote one (`tcp://H:P`, `ssh://u@H`) on H.
(How containers reach back to the mocks is the lifecycle's choice: `lifecycle/mockhost/address.py`.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from preflight_sdk.config.engine_target import EngineTarget

    from .base import Engine

__all__ = ["LOOPBACK", "create_engine", "endpoint_address", "on_local_socket"]

LOOPBACK = "127.0.0.1"


def create_engine(target: EngineTarget) -> Engine:
    """Return the engine object for `target` (nothing is contacted yet)."""
    if target.kind == "podman":
        from .podman import podman_engine

        return podman_engine()
    if target.swarm:
        from .swarm import SwarmEngine

        # `ProjectContext.engine_target` refuses a swarm without a registry before this.
        return SwarmEngine(registry=target.registry or "", host=target.host, context=target.context)
    from .docker import DockerEngine

    return DockerEngine(host=target.host, context=target.context)


def endpoint_address(endpoint: str | None) -> tuple[str, bool]:
    """Return where the engine's published ports are reached, and whether container IPs are routable.

    `endpoint` is a Docker host URL (`unix:///…`, `tcp://H:P`, `ssh://u@H:22`); None or a unix
    socket is this machine: 127.0.0.1, with container IPs routable (the bridge is local).
    """
    if not endpoint or endpoint.startswith(("unix://", "npipe://", "fd://")):
        return LOOPBACK, True
    host = urlsplit(endpoint if "://" in endpoint else f"tcp://{endpoint}").hostname
    return (host or LOOPBACK), False


def on_local_socket(host: str | None, context: str | None) -> bool:
    """Tell, without asking the daemon, whether the engine is a socket of this machine.

    True when `host` (else DOCKER_HOST) is a unix socket, or when nothing names an engine: no
    host, no context (nor DOCKER_CONTEXT), no current context in the docker config but `default`.
    """
    if not host and context and context != "default":
        return False  # a context named by the caller wins over DOCKER_HOST, as with `docker --context`
    host = host or os.environ.get("DOCKER_HOST", "")
    if host:
        return endpoint_address(host)[1]
    named = context or os.environ.get("DOCKER_CONTEXT")
    if named:
        return named == "default"
    config = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker") / "config.json"
    try:
        current = json.loads(config.read_text()).get("currentContext")
    except (OSError, ValueError, AttributeError):
        return not config.exists()
    return current in (None, "", "default")
