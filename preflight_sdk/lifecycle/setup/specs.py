"""From configuration to Docker: names, labels, build specs and container specs.

Names are unique per project and session (`pf-<project>-<session>-<service>`), so two projects or
two checkouts of one run side by side; the configured container name and the service name stay
reachable as network aliases. Every path in e2e.yaml is resolved against the e2e.yaml directory.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.config import LoadedConfig, ServiceConfig, parse_port
from preflight_sdk.config.model import DockerHealthcheckConfig
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import InfrastructureError
from preflight_sdk.core.templates import render
from preflight_sdk.engine.base import BuildSpec, ContainerSpec, HealthSpec
from preflight_sdk.engine.run_options import SHARED_NETWORK

from ..mockhost.tls import container_trust
from .labels import LABEL_MANAGED, LABEL_PROJECT, LABEL_ROOT, LABEL_SESSION, labels_for, slug

__all__ = [
    "build_spec",
    "container_name",
    "container_spec",
    "network_name",
    "project_labels",
    "resolve_dockerfile",
    "session_labels",
]


def container_name(loaded: LoadedConfig, session: str, service: str) -> str:
    """Return the Docker name of `service`'s container in `session`."""
    return f"pf-{slug(loaded.project_name, limit=30)}-{session}-{slug(service, limit=40)}"


def network_name(loaded: LoadedConfig, session: str) -> str:
    """Return the name of the session's private network."""
    base = loaded.config.network.name if loaded.config.network and loaded.config.network.name else None
    return (
        f"{slug(base, limit=40)}-{session}" if base else f"pf-{slug(loaded.project_name, limit=30)}-{session}"
    )


def project_labels(project: str, root: str) -> dict[str, str]:
    """Labels that select every resource of a project checkout, whatever its session."""
    return {LABEL_PROJECT: slug(project), LABEL_ROOT: root}


def session_labels(project: str, root: str, session: str) -> dict[str, str]:
    """Labels that select the resources of one session."""
    return {**project_labels(project, root), LABEL_SESSION: session}


def resolve_dockerfile(loaded: LoadedConfig, service: ServiceConfig) -> tuple[Path, Path]:
    """Return the (dockerfile, context) of `service`, both absolute.

    The Dockerfile is looked for relative to the e2e.yaml directory, then relative to the context
    (as docker compose does).

    Raises:
        InfrastructureError: `DOCKERFILE_NOT_FOUND`, listing the paths tried.
    """
    context = loaded.resolve(service.build.context)
    written = service.build.dockerfile or "Dockerfile"
    candidates = [loaded.resolve(written)]
    if not Path(written).is_absolute():
        candidates.append(context / written)
    for candidate in candidates:
        if candidate.is_file():
            if not context.is_dir():
                break
            return candidate.resolve(), context.resolve()
    if not context.is_dir():
        raise InfrastructureError(
            f"the build context of service `{service.name}` does not exist: {context}",
            code="DOCKERFILE_NOT_FOUND",
            hint="fix `build.context` (it is relative to the e2e.yaml directory)",
            details={"service": service.name, "context": str(context)},
        )
    raise InfrastructureError(
        f"no Dockerfile for service `{service.name}` (tried {', '.join(str(c) for c in dict.fromkeys(candidates))})",
        code="DOCKERFILE_NOT_FOUND",
        hint="fix `build.dockerfile` (relative to the e2e.yaml directory or to `build.context`)",
        details={"service": service.name, "tried": [str(c) for c in dict.fromkeys(candidates)]},
    )


def build_spec(loaded: LoadedConfig, service: ServiceConfig, *, no_cache: bool) -> BuildSpec:
    """Return the build of `service` (its Dockerfile must exist: see `resolve_dockerfile`)."""
    dockerfile, context = resolve_dockerfile(loaded, service)
    return BuildSpec(
        image=service.build.image,
        context=str(context),
        dockerfile=str(dockerfile),
        args={key: _text(value) for key, value in service.build.args.items()},
        no_cache=no_cache,
        target=service.build.target,
        # The checkout's root lets `clean(images=True)` find what this checkout built.
        labels={LABEL_MANAGED: "true", LABEL_PROJECT: slug(loaded.project_name), LABEL_ROOT: loaded.root},
    )


def container_spec(
    loaded: LoadedConfig,
    service: ServiceConfig,
    *,
    session: str,
    network: str,
    mocks: dict[str, int],
    mock_address: str = "host-gateway",
) -> ContainerSpec:
    """Return how to run `service` on `network`, reaching each mock by name at `mock_address`.

    `mocks` maps each mock's name to the port it listens on; `{{mocks.<name>.url|port|host}}` in
    the container's environment and command are filled in from it. `mock_address` is this
    machine as the engine's containers reach it (`mockhost/host.py: mock_route`).
    """
    container = service.container
    scope = {
        "mocks": {
            name: {"url": f"http://{name}:{port}", "port": port, "host": name} for name, port in mocks.items()
        }
    }
    aliases = list(
        dict.fromkeys([service.name, *([container.name] if container.name else []), *container.aliases])
    )
    command: list[str] | None
    if container.command is None:
        command = None
    elif isinstance(container.command, str):
        command = shlex.split(_fill(container.command, scope))
    else:
        command = [_fill(part, scope) for part in container.command]
    entrypoint = container.entrypoint
    if isinstance(entrypoint, list):
        # `--entrypoint` takes one program; the rest of an argv entrypoint goes before the command
        # (Docker clears the image's CMD when the entrypoint is set, as compose does).
        entrypoint, command = (
            (entrypoint[0], [*entrypoint[1:], *(command or [])]) if entrypoint else ("", command)
        )
    options = container.options
    if options.network_of:
        # compose `network_mode: service:NAME`: that service's container's network namespace.
        network = f"{SHARED_NETWORK}{container_name(loaded, session, options.network_of)}"
    if options.volumes_from:
        # compose `volumes_from: [NAME[:ro]]`: the volumes of that service's container.
        options = msgspec.structs.replace(
            options,
            volumes_from=[
                container_name(loaded, session, name) + (f":{mode}" if mode else "")
                for name, _, mode in (entry.partition(":") for entry in options.volumes_from)
            ],
        )
    # Mocks standing in for real host names: the names, the project's CA and where clients find it.
    trusted_hosts, trust_mounts, trust_env = container_trust(loaded, mock_address) if mocks else ([], [], {})
    return ContainerSpec(
        name=container_name(loaded, session, service.name),
        image=service.build.image,
        network=network,
        aliases=aliases,
        env={
            **trust_env,
            **{key: _fill(_text(value), scope) for key, value in container.environment.items()},
        },
        ports=[parse_port(spec) for spec in container.ports],
        volumes=[*(_volume(loaded, v) for v in container.volumes), *trust_mounts],
        labels=labels_for(loaded.project_name, session, loaded.label_root, service.name),
        add_hosts=[*((mock, mock_address) for mock in mocks), *trusted_hosts],
        command=command,
        entrypoint=entrypoint,
        working_dir=container.working_dir,
        user=container.user,
        init=container.init,
        read_only=container.read_only,
        health=_health(container.docker_healthcheck),
        options=options,
    )


def _health(check: DockerHealthcheckConfig | None) -> HealthSpec | None:
    if check is None:
        return None
    # The docker CLI takes only the shell form; an exec-form test is quoted into one.
    command = check.test[1] if check.test[0] == "CMD-SHELL" else shlex.join(check.test[1:])
    return HealthSpec(
        command=command,
        interval=parse_duration(check.interval),
        timeout=parse_duration(check.timeout),
        retries=check.retries,
        start_period=parse_duration(check.start_period),
    )


def _fill(text: str, scope: Mapping[str, Any]) -> str:
    if "{{" not in text:
        return text
    return str(render(text, scope))


def _volume(loaded: LoadedConfig, spec: str) -> str:
    source, sep, rest = spec.partition(":")
    if not sep:
        return spec  # an anonymous volume: just a container path
    if source.startswith((".", "/", "~")) or "/" in source:
        return f"{loaded.resolve(source)}:{rest}"
    return spec  # a named volume


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
