"""Compose files as a source of services: `compose: docker-compose.yml` in e2e.yaml.

Each file is parsed with positions, interpolated (`${VAR}` from the environment and the `.env`
beside the first file), checked against the compose specification's JSON Schema (vendored here
with its licence), merged in order like `docker compose -f a -f b`, filtered by profile, and each
service translated into an e2e.yaml service body. Every problem carries its file and line; keys
preflight cannot honour are problems too, never dropped in silence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ...errors import ConfigProblem
from ..dotenv import read_dotenv
from ..yaml_source import ParsedYaml, PathKey, format_path, parse_yaml
from .interpolate import interpolate_value
from .schema import schema_problems
from .service import Context, check_depends_on, depends_on, translate_service

__all__ = ["ComposeServices", "load_compose"]

_TOP_LEVEL = frozenset({"version", "name", "services", "volumes", "networks"})
_NETWORK_KEYS = frozenset({"driver", "name"})
# Sequences that a later file replaces rather than extends (everything else is merged).
_REPLACED = frozenset({"command", "entrypoint", "test", "profiles"})


class ComposeServices(msgspec.Struct, frozen=True, kw_only=True):
    """The services the compose files define, as e2e.yaml service bodies in file order.

    Attributes:
        services: body by service name (`build`, `container`, `dependsOn`, `kind`).
        problems: everything wrong or unsupported, each with its file and line.
        sources: every file read (compose files, their `.env`, env files), to notice edits.
    """

    services: dict[str, dict[str, Any]]
    problems: list[ConfigProblem]
    sources: list[str]


class _Files:
    """The parsed files, to locate a JSON path in the last file that wrote it."""

    def __init__(self) -> None:
        self.parsed: list[tuple[str, ParsedYaml]] = []
        self.problems: list[ConfigProblem] = []
        self.schema_paths: set[PathKey] = set()

    def report(self, path: PathKey, message: str, *, key: bool = False, hint: str | None = None) -> None:
        if any(path[: len(known)] == known for known in self.schema_paths):
            return  # the schema already said what is wrong here
        file, source = next(
            ((f, p) for f, p in reversed(self.parsed) if path in p.values or path in p.keys),
            self.parsed[-1] if self.parsed else ("", None),
        )
        where = source.locate(path, key=key) if source is not None else None
        self.problems.append(
            ConfigProblem(
                path=format_path(path),
                message=f"{message} ({hint})" if hint else message,
                file=file or None,
                line=where.line if where else None,
                column=where.column if where else None,
            )
        )


def load_compose(
    files: Sequence[Path],
    *,
    environ: Mapping[str, str],
    project: str,
    profiles: Sequence[str] = (),
    keep_host_ports: bool = False,
) -> ComposeServices:
    """Read `files` (absolute paths, in order) and translate their services.

    Args:
        files: the compose files; relative paths inside them are relative to the first one's directory.
        environ: the environment for `${VAR}`; the `.env` beside the first file fills what it lacks.
        project: the preflight project name, used to name built images and named volumes.
        profiles: active profiles (with `COMPOSE_PROFILES` from `environ`); services in no active
            profile are left out, as with docker compose.
        keep_host_ports: publish on the host ports the files name instead of free ones.
    """
    directory = files[0].parent if files else Path.cwd()
    dotenv_path = directory / ".env"
    env = {**read_dotenv(dotenv_path), **environ}
    state = _Files()
    sources = [str(dotenv_path)]
    merged: dict[str, Any] = {}
    for path in files:
        sources.append(str(path))
        data = _read(path, env, state)
        if data is not None:
            merged = _merge(merged, data)
    active = set(profiles) | {p.strip() for p in env.get("COMPOSE_PROFILES", "").split(",") if p.strip()}
    services = _translate(merged, env, project, active, directory, keep_host_ports, state, sources)
    return ComposeServices(services=services, problems=state.problems, sources=sources)


def _read(path: Path, env: Mapping[str, str], state: _Files) -> dict[str, Any] | None:
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        state.problems.append(
            ConfigProblem(path="$", message=f"cannot read the compose file: {exc}", file=file)
        )
        return None
    source = parse_yaml(text, file=file)
    state.parsed.append((file, source))
    state.problems.extend(source.problems)
    if source.data is None and source.problems:
        return None
    if not isinstance(source.data, dict):
        state.report((), "a compose file must be a mapping with `services:`")
        return None
    data = interpolate_value(source.data, env, (), lambda where, message: state.report(where, message))
    found = list(schema_problems(data))
    for where, message, is_key in found:
        state.report(where, message, key=is_key)
    state.schema_paths.update(where for where, _, _ in found)
    for key in data:
        if key not in _TOP_LEVEL and not key.startswith("x-"):
            state.report((key,), f"top-level `{key}` is not supported by preflight", key=True)
    return data if isinstance(data, dict) else None


def _merge(base: Any, override: Any, key: str | None = None) -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        result = dict(base)
        for name, value in override.items():
            result[name] = _merge(base[name], value, name) if name in base else value
        return result
    if isinstance(base, list) and isinstance(override, list) and key not in _REPLACED:
        return base + [item for item in override if item not in base]
    return override


def _translate(
    data: Mapping[str, Any],
    env: Mapping[str, str],
    project: str,
    active: set[str],
    directory: Path,
    keep_host_ports: bool,
    state: _Files,
    sources: list[str],
) -> dict[str, dict[str, Any]]:
    networks = data.get("networks") or {}
    for name, network in networks.items():
        for key in network or {}:
            if key not in _NETWORK_KEYS and not str(key).startswith("x-"):
                hint = "every service joins one private network per session"
                state.report(
                    ("networks", name, key), f"network `{key}` is not supported", key=True, hint=hint
                )
        if (network or {}).get("driver") not in (None, "bridge"):
            state.report(("networks", name, "driver"), "only the `bridge` network driver is supported")
    ctx = Context(
        directory=directory,
        environ=env,
        project=project,
        volumes=data.get("volumes") or {},
        networks=networks,
        keep_host_ports=keep_host_ports,
    )
    declared: dict[str, Any] = data.get("services") or {}
    enabled = {
        name: service
        for name, service in declared.items()
        if isinstance(service, dict) and (not service.get("profiles") or active & set(service["profiles"]))
    }
    result: dict[str, dict[str, Any]] = {}
    jobs: set[str] = set()
    for name, service in enabled.items():
        body = translate_service(name, service, ctx, state.report)
        check_depends_on(service, ("services", name, "depends_on"), state.report)
        needs = depends_on(service)
        for dependency, condition in needs.items():
            if dependency not in enabled:
                why = (
                    "is only in profiles that are not active"
                    if dependency in declared
                    else "is not a service"
                )
                state.report(("services", name, "depends_on", dependency), f"`{dependency}` {why}")
            if condition == "service_completed_successfully":
                jobs.add(dependency)
        if needs:
            body["dependsOn"] = [d for d in needs if d in enabled]
        result[name] = body
    for name in jobs & result.keys():
        result[name]["kind"] = "job"
    sources.extend(ctx.env_files)
    return result
