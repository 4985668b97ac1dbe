"""Docker behind a small protocol: `DockerEngine` for real work, `FakeEngine` for unit tests.

`DockerEngine` drives the docker CLI through python-on-whales, and on this machine's socket
speaks the Engine API for the calls on setup's and clean's critical path (`api.py`).

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
