"""`EngineTarget`: which engine an environment runs on.

One value names an engine everywhere: e2e.yaml's `engine:`, the CLI's `--engine-host` and
`--context`, `Project.open(engine_host=..., context=...)`, and each shard of a sharded run.
Without a host or context the docker command line reads `DOCKER_HOST` / `DOCKER_CONTEXT` itself.
The engine object for it is `engine.target.create_engine`'s.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["EngineTarget"]


class EngineTarget(msgspec.Struct, frozen=True, kw_only=True):
    """An engine to run an environment on.

    Attributes:
        kind: `docker` or `podman`.
        host: the engine's address as DOCKER_HOST spells it (`unix:///…`, `tcp://h:p`, `ssh://u@h`).
        context: a `docker context` name (instead of `host`).
        swarm: deploy the services as swarm services on the engine's swarm.
        mock_host: this machine's address as the engine's containers reach it (for the mocks).
        registry: `host:port` of the registry a swarm pulls built images from.
    """

    kind: Literal["docker", "podman"] = "docker"
    host: str | None = None
    context: str | None = None
    swarm: bool = False
    mock_host: str | None = None
    registry: str | None = None

    @property
    def name(self) -> str:
        """A short name for reports: `docker`, `ssh://ci@builder`, `context:ci`, `swarm:tcp://…`."""
        where = self.host or (f"context:{self.context}" if self.context else self.kind)
        return f"swarm:{where}" if self.swarm else where

    @property
    def is_default(self) -> bool:
        """True for the engine the environment's own command line would pick (no host, context, swarm)."""
        return not (self.host or self.context or self.swarm)
