"""Which engine an environment runs on: the caller's, e2e.yaml's, or the one it was set up on."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import msgspec

from preflight_sdk.core.errors import ConfigError

if TYPE_CHECKING:
    from preflight_sdk.config import LoadedConfig
    from preflight_sdk.config.engine_target import EngineTarget

    from .state import SessionState

__all__ = ["choose_engine", "engine_record"]


def choose_engine(
    loaded: LoadedConfig | None, override: EngineTarget | None, session: SessionState | None
) -> EngineTarget:
    """The engine to use: `override` (the caller's host/context), else e2e.yaml's `engine:`;
    `PREFLIGHT_ENGINE` sets the kind. A running environment's recorded engine wins over e2e.yaml."""
    from preflight_sdk.config.engine_target import EngineTarget  # lazy: keeps `import preflight_sdk` light
    from preflight_sdk.config.model import EngineSettings

    config = loaded.config if loaded is not None else None
    settings = config.engine if config is not None else "docker"
    if isinstance(settings, str):
        settings = EngineSettings(kind=settings)
    chosen = os.environ.get("PREFLIGHT_ENGINE", "").strip().lower()
    if chosen and chosen not in ("docker", "podman"):
        raise ConfigError(
            f"PREFLIGHT_ENGINE={chosen!r} names no engine preflight knows",
            code="CONFIG_INVALID",
            hint="set PREFLIGHT_ENGINE to `docker` or `podman` (or unset it)",
        )
    target = EngineTarget(
        kind="podman" if chosen == "podman" else "docker" if chosen else settings.kind,
        host=settings.host,
        context=settings.context,
        swarm=settings.swarm,
        mock_host=settings.mock_host,
        registry=config.registry if config is not None else None,
    )
    recorded = session
    if override is not None and not override.is_default:
        # The caller names where; e2e.yaml still says how (a swarm) and with what.
        target = msgspec.structs.replace(
            override,
            swarm=override.swarm or target.swarm,
            mock_host=override.mock_host or target.mock_host,
            registry=override.registry or target.registry,
        )
    elif (
        recorded is not None
        and (recorded.engine_host or recorded.engine_context)
        and _has_environment(recorded)
        and (recorded.engine_host, recorded.engine_context) != _effective(target)
    ):
        # The environment runs where it was set up (`--engine-host`, DOCKER_HOST…): status,
        # logs and clean of a later process without those go there too.
        target = msgspec.structs.replace(target, host=recorded.engine_host, context=recorded.engine_context)
    if target.kind == "podman" and not target.is_default:
        raise ConfigError(
            "a host, context or swarm is for Docker engines; Podman runs on this machine here",
            code="CONFIG_INVALID",
            hint="use `engine: {host: ...}` with Docker, or drop host/context/swarm for Podman",
        )
    if target.swarm and not target.registry:
        raise ConfigError(
            "engine: {swarm: true} needs a registry the swarm pulls the built images from",
            code="CONFIG_INVALID",
            hint="add `registry: host:port` to e2e.yaml (e.g. `registry: 127.0.0.1:5000` for a "
            "registry on a single-node swarm's manager)",
            details={"field": "registry"},
        )
    if target.host and target.context:
        raise ConfigError(
            "the engine has both a host and a context",
            code="CONFIG_INVALID",
            hint="give one of `host` and `context` (a context already names a host)",
        )
    return target


def engine_record(target: EngineTarget) -> dict[str, str | None]:
    """The session fields naming `target` (`engine_host`, `engine_context`), DOCKER_HOST and
    DOCKER_CONTEXT included; both None for this machine's default engine."""
    host, context = _effective(target)
    return {"engine_host": host, "engine_context": context}


def _effective(target: EngineTarget) -> tuple[str | None, str | None]:
    """The (host, context) the docker command line uses for `target`, DOCKER_HOST/DOCKER_CONTEXT included."""
    if target.kind != "docker":
        return None, None
    host = target.host or (None if target.context else os.environ.get("DOCKER_HOST") or None)
    return host, target.context or (None if host else os.environ.get("DOCKER_CONTEXT") or None)


def _has_environment(session: SessionState) -> bool:
    """Whether the session has something on its engine (running, or containers not yet cleaned)."""
    return session.state == "running" or bool(session.containers) or session.network is not None
