"""Where an engine is, seen from this machine: an engine on a unix socket here publishes ports on
127.0.0.1, a remote one (`tcp://H:P`, `ssh://u@H`) on H. (How containers reach back to the mocks is
the lifecycle's choice: `lifecycle/mockhost/address.py`.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["LOOPBACK", "endpoint_address", "on_local_socket"]

LOOPBACK = "127.0.0.1"


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
