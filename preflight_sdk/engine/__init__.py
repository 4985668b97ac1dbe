"""Docker behind a small protocol: `DockerEngine` for real work, `FakeEngine` for unit tests."""

from __future__ import annotations

from .base import (
    BuildSpec,
    ContainerInfo,
    ContainerSpec,
    Engine,
    EngineInfo,
    ExecResult,
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
    "NetworkInfo",
    "RemoveOutcome",
]
