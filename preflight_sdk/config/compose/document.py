"""Reading compose files: positions, problems and warnings by file, `extends` resolved, files merged.

A problem names the file and line of the key or value at fault (the last file that wrote it); a
warning about a key set aside is said once per key and file, with its first line and how many
places set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight_sdk.core.errors import ConfigProblem
from preflight_sdk.core.yaml_source import ParsedYaml, PathKey, format_path, parse_yaml

from .interpolate import interpolate_value
from .schema import schema_problems

__all__ = ["Files", "merge", "overridden", "read_file", "resolve_extends", "untagged"]

# Sequences that a later file replaces rather than extends (everything else is merged).
_REPLACED = frozenset({"command", "entrypoint", "test", "profiles"})


class Files:
    """The files read so far, to locate a JSON path, and what was found wrong or set aside in them."""

    def __init__(self) -> None:
        self.parsed: list[tuple[str, ParsedYaml]] = []
        self.problems: list[ConfigProblem] = []
        self.schema_paths: set[PathKey] = set()
        self.sources: list[str] = []  # files read besides the compose files named (extended ones)
        self._warned: dict[tuple[str, str], list[Any]] = {}

    def report(
        self,
        path: PathKey,
        message: str,
        *,
        key: bool = False,
        hint: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        if any(path[: len(known)] == known for known in self.schema_paths):
            return  # the schema already said what is wrong here
        file, line, column = self._locate(path, key)
        self.problems.append(
            ConfigProblem(
                path=format_path(path),
                message=f"{message} ({hint})" if hint else message,
                file=file or None,
                line=line,
                column=column,
                suggestion=suggestion,
            )
        )

    def warn(self, path: PathKey, key: str, reason: str) -> None:
        file, line, _ = self._locate(path, True)
        seen = self._warned.get((file, key))
        if seen is None:
            self._warned[(file, key)] = [line, reason, 1]
        else:
            seen[2] += 1

    def warnings(self) -> list[str]:
        """One line per key and file: `file:line: `key` set aside: reason`."""
        lines = []
        for (file, key), (line, reason, count) in self._warned.items():
            where = f"{file}:{line}" if line else file
            more = (
                f" (and {count - 1} more place{'s' if count > 2 else ''} in this file)" if count > 1 else ""
            )
            lines.append(f"{where}: `{key}` set aside: {reason}{more}")
        return lines

    def _locate(self, path: PathKey, key: bool) -> tuple[str, int | None, int | None]:
        file, source = next(
            ((f, p) for f, p in reversed(self.parsed) if path in p.values or path in p.keys),
            self.parsed[-1] if self.parsed else ("", None),
        )
        where = source.locate(path, key=key) if source is not None else None
        return file, (where.line if where else None), (where.column if where else None)


def read_file(path: Path, env: Mapping[str, str], files: Files) -> dict[str, Any] | None:
    """Parse, interpolate and schema-check one file; None when it has no usable mapping."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        files.problems.append(
            ConfigProblem(path="$", message=f"cannot read the compose file: {exc}", file=name)
        )
        return None
    source = parse_yaml(text, file=name, local_tags=True)
    files.parsed.append((name, source))
    files.problems.extend(source.problems)
    if source.data is None and source.problems:
        return None
    if not isinstance(source.data, dict):
        what = "empty" if source.data is None else "not a mapping"
        files.problems.append(
            ConfigProblem(
                path="$",
                message=f"the compose file is {what}; expected a mapping with `services:`",
                file=name,
                line=source.values[()].line if () in source.values else 1,
                column=1,
            )
        )
        return None
    for where in sorted(source.number_keys, key=str):
        if not any(str(part).startswith("x-") for part in where):
            files.report(
                where,
                f"`{where[-1]}` is written as a number; compose keys are text",
                key=True,
                hint=f"quote it: '{where[-1]}'",
            )
    data = interpolate_value(source.data, env, (), lambda where, message: files.report(where, message))
    for where, tag in source.tags.items():
        if tag not in ("!reset", "!override"):
            files.report(where, f"unknown tag `{tag}`", hint="compose knows `!reset` and `!override`")
    data = _tagged(data, source.tags, ())
    found = list(schema_problems(untagged(data)))
    for where, message, is_key, suggestion in found:
        files.report(where, message, key=is_key, suggestion=suggestion)
    files.schema_paths.update(where for where, *_ in found)
    return data if isinstance(data, dict) else None


class Reset:
    """A value tagged `!reset`: merging it removes the key from what came before."""


class Override:
    """A value tagged `!override`: merging it replaces what came before instead of merging."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _tagged(value: Any, tags: Mapping[PathKey, str], path: PathKey) -> Any:
    tag = tags.get(path)
    if tag == "!reset":
        return Reset()
    if isinstance(value, dict):
        value = {k: _tagged(v, tags, (*path, k)) for k, v in value.items()}
    elif isinstance(value, list):
        value = [_tagged(v, tags, (*path, i)) for i, v in enumerate(value)]
    return Override(value) if tag == "!override" else value


def untagged(value: Any) -> Any:
    """`value` without `!reset` keys and `!override` wrappers (once every file is merged)."""
    if isinstance(value, Override):
        return untagged(value.value)
    if isinstance(value, dict):
        return {k: untagged(v) for k, v in value.items() if not isinstance(v, Reset)}
    if isinstance(value, list):
        return [untagged(v) for v in value if not isinstance(v, Reset)]
    return value


def merge(base: Any, override: Any, key: str | None = None) -> Any:
    """Lay `override` over `base` as `docker compose -f base -f override` does (`!reset`, `!override` too)."""
    if isinstance(override, Override):
        return override.value
    if isinstance(base, dict) and isinstance(override, dict):
        result = dict(base)
        for name, value in override.items():
            if isinstance(value, Reset):
                result.pop(name, None)
            else:
                result[name] = merge(base[name], value, name) if name in base else value
        return result
    if isinstance(base, list) and isinstance(override, list) and key not in _REPLACED:
        return base + [item for item in override if item not in base]
    return override


def overridden(base: Any, override: Any) -> Any:
    """`base` with `override` laid over it: mappings merge, `None` drops the key, anything else replaces."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return override
    result = dict(base)
    for name, value in override.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = overridden(base[name], value) if name in base else value
    return result


def resolve_extends(services: dict[str, Any], directory: Path, env: Mapping[str, str], files: Files) -> None:
    """Replace each service that `extends` another by the other with it laid over (in place)."""
    for name in list(services):
        if isinstance(services[name], dict) and "extends" in services[name]:
            services[name] = _extended(name, services, directory, env, files, ())


def _extended(
    name: str,
    services: Mapping[str, Any],
    directory: Path,
    env: Mapping[str, str],
    files: Files,
    chain: tuple[tuple[str, str], ...],
) -> dict[str, Any]:
    service = services[name]
    spec = service.get("extends")
    if spec is None:
        return dict(service)
    spec = {"service": spec} if isinstance(spec, str) else spec
    where = ("services", name, "extends")
    base_name = str(spec.get("service"))
    base_services, base_dir = services, directory
    if spec.get("file"):
        path = (directory / str(spec["file"])).resolve()
        files.sources.append(str(path))
        data = untagged(read_file(path, env, files)) if path.is_file() else None
        if data is None:
            if not path.is_file():
                files.report(where, f"extends: file {path} does not exist")
            return {k: v for k, v in service.items() if k != "extends"}
        base_services, base_dir = data.get("services") or {}, path.parent
    link = (str(base_dir), base_name)
    if link in chain or (not spec.get("file") and base_name == name):
        files.report(where, f"extends: `{base_name}` extends itself (through {len(chain)} others)")
        return {k: v for k, v in service.items() if k != "extends"}
    if not isinstance(base_services.get(base_name), dict):
        files.report(where, f"extends: there is no service `{base_name}` to extend")
        return {k: v for k, v in service.items() if k != "extends"}
    base = _extended(base_name, base_services, base_dir, env, files, (*chain, link))
    if base_dir != directory:
        base = _rebased(base, base_dir)
    result: dict[str, Any] = merge(base, {k: v for k, v in service.items() if k != "extends"})
    return result


def _rebased(service: dict[str, Any], directory: Path) -> dict[str, Any]:
    """`service` with its relative paths made absolute against `directory` (the file it came from)."""

    def absolute(text: str) -> str:
        return text if text.startswith(("/", "~")) or "://" in text else str((directory / text).resolve())

    result = dict(service)
    build = result.get("build")
    if isinstance(build, str):
        result["build"] = absolute(build)
    elif isinstance(build, dict):
        result["build"] = {**build, "context": absolute(str(build.get("context") or "."))}
    env_file = result.get("env_file")
    if isinstance(env_file, str):
        result["env_file"] = absolute(env_file)
    elif isinstance(env_file, list):
        result["env_file"] = [
            absolute(e) if isinstance(e, str) else {**e, "path": absolute(str(e.get("path", "")))}
            for e in env_file
        ]
    volumes = []
    for volume in result.get("volumes") or []:
        if isinstance(volume, str) and volume.startswith("."):
            source, _, rest = volume.partition(":")
            volume = f"{absolute(source)}:{rest}"
        elif (
            isinstance(volume, dict)
            and volume.get("type") == "bind"
            and str(volume.get("source", "")).startswith(".")
        ):
            volume = {**volume, "source": absolute(str(volume["source"]))}
        volumes.append(volume)
    if volumes:
        result["volumes"] = volumes
    return result
