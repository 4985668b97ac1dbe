"""Compose files as a source of services: `compose: docker-compose.yml` in e2e.yaml, or a compose file alone.

Each file is parsed with positions, interpolated (`${VAR}` from the environment and the `.env`
beside the first file), checked against the compose specification's JSON Schema (vendored here
with its licence) and the checks `docker compose config` makes after interpolation, merged in order
like `docker compose -f a -f b`, `include`s and `extends` resolved, filtered by profile, and each
service translated into an e2e.yaml service body. Every key has a decision (`decisions.py`):
honoured, set aside with a warning, or refused as a problem with its file, line and a hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.config.dotenv import read_dotenv
from preflight_sdk.core.errors import ConfigProblem
from preflight_sdk.core.yaml_source import PathKey, format_path

from .context import Context
from .decisions import DECISIONS
from .document import Files, merge, overridden, read_file, resolve_extends, untagged
from .schema import schema_problems
from .service import check_depends_on, decide_keys, depends_on, translate_service

__all__ = ["COMPOSE_NAMES", "ComposeServices", "load_compose"]

COMPOSE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
"""The file names `docker compose` looks for in a directory, in its order."""

_MAX_INCLUDE_DEPTH = 8


class ComposeServices(msgspec.Struct, frozen=True, kw_only=True):
    """The services the compose files define, as e2e.yaml service bodies in file order.

    Attributes:
        services: body by service name (`build`, `container`, `dependsOn`, `kind`).
        problems: everything wrong or refused, each with its file and line.
        warnings: the keys set aside, once per key and file (`file:line: `key` set aside: why`).
        sources: every file read (compose files, their `.env`, env files, secrets), to notice edits.
        name: the top-level `name:` of the first file, if any.
    """

    services: dict[str, dict[str, Any]]
    problems: list[ConfigProblem]
    sources: list[str]
    warnings: list[str] = msgspec.field(default_factory=list)
    name: str | None = None


def load_compose(
    files: Sequence[Path],
    *,
    environ: Mapping[str, str],
    project: str,
    profiles: Sequence[str] = (),
    keep_host_ports: bool = False,
    override: Mapping[str, Any] | None = None,
    _seen: frozenset[Path] = frozenset(),
) -> ComposeServices:
    """Read `files` (absolute paths, in order) and translate their services.

    Args:
        files: the compose files; relative paths inside them are relative to the first one's directory.
        environ: the environment for `${VAR}`; the `.env` beside the first file fills what it lacks.
        project: the preflight project name, used to name built images and named volumes.
        profiles: active profiles (with `COMPOSE_PROFILES` from `environ`); services in no active
            profile are left out, as with docker compose.
        keep_host_ports: publish on the host ports the files name instead of free ones.
        override: compose keys laid over the merged files (`null` drops a key), checked again
            against the schema.
    """
    directory = files[0].parent if files else Path.cwd()
    dotenv_path = directory / ".env"
    env = {**read_dotenv(dotenv_path), **environ}
    state = Files()
    sources = [str(dotenv_path)]
    merged: dict[str, Any] = {}
    for path in files:
        sources.append(str(path))
        data = read_file(path, env, state)
        if data is not None:
            merged = merge(merged, data)
    merged = untagged(merged)
    if override:
        merged = overridden(merged, override)
        for where, message, _, suggestion in schema_problems(merged):
            state.problems.append(
                ConfigProblem(
                    path=format_path(where),
                    message=f"after `compose.override`: {message}",
                    suggestion=suggestion,
                )
            )
            state.schema_paths.add(where)
    services = merged.get("services")
    if isinstance(services, dict):
        resolve_extends(services, directory, env, state)
    active = set(profiles) | {p.strip() for p in env.get("COMPOSE_PROFILES", "").split(",") if p.strip()}
    included = _include(
        merged.get("include"), directory, env, project, profiles, keep_host_ports, state, _seen | set(files)
    )
    ctx = Context(
        directory=directory,
        environ=env,
        project=project,
        data=merged,
        keep_host_ports=keep_host_ports,
        report=state.report,
        warn=state.warn,
    )
    _top_level(merged, ctx)
    translated = _translate(merged, active, ctx, set(included.services), state.schema_paths)
    for name, body in included.services.items():
        if name in translated:
            state.report(("services", name), f"service `{name}` is also defined by an included file")
        else:
            translated[name] = body
    top_name = merged.get("name")
    return ComposeServices(
        services=translated,
        problems=[*included.problems, *state.problems],
        sources=[*sources, *state.sources, *ctx.sources, *included.sources],
        warnings=[*included.warnings, *state.warnings()],
        name=top_name if isinstance(top_name, str) and top_name else None,
    )


def _include(
    value: Any,
    directory: Path,
    env: Mapping[str, str],
    project: str,
    profiles: Sequence[str],
    keep_host_ports: bool,
    state: Files,
    seen: frozenset[Path],
) -> ComposeServices:
    """Load each `include` entry as a project of its own (paths relative to its file) and join them."""
    joined = ComposeServices(services={}, problems=[], sources=[])
    for index, entry in enumerate(value if isinstance(value, list) else []):
        spec = {"path": entry} if isinstance(entry, str) else dict(entry)
        where = ("include", index)
        if "project_directory" in spec:
            state.warn(
                (*where, "project_directory"),
                "include.project_directory",
                "paths in an included file are relative to that file",
            )
        written = spec.get("path")
        paths = [
            (directory / str(p)).resolve() for p in (written if isinstance(written, list) else [written])
        ]
        missing = [p for p in paths if not p.is_file()]
        if missing:
            state.report(where, f"included file {missing[0]} does not exist")
            continue
        if set(paths) & seen or len(seen) > _MAX_INCLUDE_DEPTH:
            state.report(where, f"{paths[0]} is already being included (an include cycle)")
            continue
        extra: dict[str, str] = {}
        for env_file in (
            [spec["env_file"]] if isinstance(spec.get("env_file"), str) else spec.get("env_file") or []
        ):
            extra.update(read_dotenv(directory / str(env_file)))
        loaded = load_compose(
            paths,
            environ={**extra, **env},
            project=project,
            profiles=profiles,
            keep_host_ports=keep_host_ports,
            _seen=seen,
        )
        for name in loaded.services.keys() & joined.services.keys():
            state.report(where, f"service `{name}` is defined by two included files")
        joined = ComposeServices(
            services={**joined.services, **loaded.services},
            problems=[*joined.problems, *loaded.problems],
            sources=[*joined.sources, *loaded.sources],
            warnings=[*joined.warnings, *loaded.warnings],
        )
    return joined


def _top_level(data: Mapping[str, Any], ctx: Context) -> None:
    """Apply the decisions on top-level keys and on network, volume, secret and config definitions."""
    for key in data:
        if DECISIONS["top-level"].get(str(key), ("honoured", ""))[0] == "refused":
            ctx.report(
                (key,),
                f"top-level `{key}` is not supported by preflight",
                key=True,
                hint=DECISIONS["top-level"][key][1],
            )
    sections = (("networks", "network"), ("volumes", "volume"), ("secrets", "secret"), ("configs", "config"))
    for section, kind in sections:
        declared = data.get(section)
        for name, definition in declared.items() if isinstance(declared, dict) else []:
            for key, value in definition.items() if isinstance(definition, dict) else []:
                _definition_key(kind, (section, name, key), str(key), value, ctx)


def _definition_key(kind: str, path: tuple[str, str, str], key: str, value: Any, ctx: Context) -> None:
    verdict, note = DECISIONS[kind].get(key, ("honoured", ""))
    if kind == "network" and key == "driver" and value in ("bridge", None):
        return
    if kind == "volume" and key == "driver":
        if value not in ("local", None):
            ctx.report(
                path,
                f"volume driver `{value}` is not supported",
                hint="use the `local` driver, or drop `driver` in an override",
            )
        return
    if kind == "network" and key == "external" and not ctx.read.boolean(value, path):
        return
    if verdict == "refused" and (key != "external" or ctx.read.boolean(value, path)):
        ctx.report(path, f"{kind} `{key}` is not supported", key=True, hint=note)
    elif verdict == "aside":
        ctx.warn(path, f"{kind}s.*.{key}", note)


def _translate(
    data: Mapping[str, Any], active: set[str], ctx: Context, elsewhere: set[str], broken: set[PathKey]
) -> dict[str, dict[str, Any]]:
    declared = data.get("services")
    if not isinstance(declared, dict) or any(len(p) < 2 and p[:1] in ((), ("services",)) for p in broken):
        return {}
    enabled = {
        name: service
        for name, service in declared.items()
        if isinstance(service, dict)
        and (not service.get("profiles") or active & set(map(str, service["profiles"])))
    }
    known = set(enabled) | elsewhere
    result: dict[str, dict[str, Any]] = {}
    jobs: set[str] = set()
    for name, service in enabled.items():
        if any(p[:2] == ("services", name) for p in broken):
            # The schema said what is wrong with it, and its parts may not have their shapes: only
            # its keys are judged.
            decide_keys(service, ("services", name), ctx)
            continue
        body = translate_service(name, service, ctx)
        check_depends_on(service, ("services", name, "depends_on"), ctx)
        needs: list[str] = []
        for dependency, (condition, required) in depends_on(service).items():
            if dependency not in known:
                if not required:
                    continue  # an optional dependency that is not there: compose starts without it
                why = (
                    "is only in profiles that are not active"
                    if dependency in declared
                    else "is not a service"
                )
                ctx.report(("services", name, "depends_on", dependency), f"`{dependency}` {why}")
                continue
            needs.append(dependency)
            if condition == "service_completed_successfully":
                jobs.add(dependency)
        options = body["container"].get("options", {})
        shared = [("network_mode", options.get("networkOf"))]
        shared += [("volumes_from", entry.partition(":")[0]) for entry in options.get("volumesFrom", [])]
        for key, other in shared:
            if other is None:
                continue
            if other not in known:
                ctx.report(("services", name, key), f"`{other}` is not a service")
            needs.append(other)  # its container must exist first
        if needs:
            body["dependsOn"] = list(dict.fromkeys(needs))
        result[name] = body
    _links(enabled, result, ctx)
    for name in jobs & result.keys():
        result[name]["kind"] = "job"
    return result


def _links(enabled: Mapping[str, Any], result: dict[str, dict[str, Any]], ctx: Context) -> None:
    """`links: [db:database]`: `database` becomes a network alias of `db`."""
    for name, service in enabled.items():
        for index, link in enumerate(service.get("links") or []):
            target, _, alias = str(link).partition(":")
            if target not in result:
                ctx.report(("services", name, "links", index), f"`{target}` is not a service")
            elif alias:
                container = result[target]["container"]
                container["aliases"] = list(dict.fromkeys([*container.get("aliases", []), alias]))
