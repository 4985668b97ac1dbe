"""`create_engine`: the engine object for an `EngineTarget` (which engine: `config.engine_target`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from preflight_sdk.config.engine_target import EngineTarget

    from .base import Engine

__all__ = ["create_engine"]


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
