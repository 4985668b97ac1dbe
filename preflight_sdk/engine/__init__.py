"""Docker behind a small protocol: `DockerEngine` for real work, `FakeEngine` for unit tests.

`DockerEngine` is one façade whose operations are written once against a lane chosen when it is
made: the Engine API on this machine's socket (`api.py`), python-on-whales and the docker CLI
(`whales.py`), or Podman's (`podman.py`); a swarm (`swarm.py`) owns its manager's engine.

Layer: below the areas. Owns every Docker call and the single readiness probes (`Prober`, part
of the `Engine` protocol). May import config and the core; never an area or a face.
"""

from __future__ import annotations

from .base import (
    BuildSpec,
    ContainerInfo,
    ContainerSpec,
    Engine,
    EngineInfo,
    ExecResult,
    ImageInfo,
    NetworkInfo,
    RemoveOutcome,
)

__all__ = [
    "BuildSpec",
    "ContainerInfo",
    "ContainerSpec",
    "Engine",
    "EngineInfo",
    "ExecResult",
    "ImageInfo",
    "NetworkInfo",
    "RemoveOutcome",
]
