"""A compose service's `volumes`, `tmpfs` mounts, `secrets` and `configs` → e2e.yaml mounts.

Bind mounts are relative to the compose file; named volumes are called `<project>_<name>` (or
their `name:`, or as written when `external`), as docker compose names them. A secret or config is
a file bind-mounted read-only where compose mounts it (`/run/secrets/<name>`, `/<name>`); one from
`environment` or `content` is first written under `.preflight/compose/` beside the compose file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .context import Context

__all__ = ["file_mounts", "translate_volume"]

_VOLUME_KEYS = frozenset({"type", "source", "target", "read_only", "consistency", "bind", "volume", "tmpfs"})
_ASIDE_SUBKEYS = {
    "bind": frozenset({"propagation", "create_host_path", "selinux", "recursive"}),
    "volume": frozenset({"nocopy", "subpath", "labels"}),
}


def translate_volume(value: Any, ctx: Context, path: tuple[str | int, ...]) -> str | None:
    """Return the `src:dst[:mode]` of one `volumes` entry (a tmpfs goes to the run options)."""
    if isinstance(value, str):
        source, sep, rest = value.partition(":")
        if not sep:
            return value  # an anonymous volume: only a container path
        target, _, mode = rest.partition(":")
        if not source:
            ctx.report(path, f"`{value}` has an empty source", hint="is a variable in it unset?")
            return None
        modes = [m for m in mode.split(",") if m in ("ro", "rw", "z", "Z")]
        for other in sorted({m for m in mode.split(",") if m} - set(modes)):
            ctx.warn(path, f"volumes: :{other}", "a mount option Docker's defaults stand in for")
        kind = "bind" if source.startswith((".", "/", "~")) else "volume"
        return _mount(kind, source, target, modes, ctx, path)
    spec = dict(value)
    kind = str(spec.get("type"))
    target = str(spec.get("target", ""))
    for key in spec:
        if key not in _VOLUME_KEYS and not str(key).startswith("x-"):
            ctx.warn((*path, key), f"volumes.{key}", "a mount option Docker's defaults stand in for")
    if kind == "tmpfs":
        size = (spec.get("tmpfs") or {}).get("size")
        read = ctx.read.size(size, (*path, "tmpfs", "size")) if size is not None else None
        ctx.tmpfs.append(f"{target}:size={read}" if read else target)
        return None
    if kind not in ("bind", "volume"):
        ctx.report(
            (*path, "type"),
            f"`{kind}` mounts are not supported (only `bind`, `volume` and `tmpfs`)",
            hint="mount a bind or a named volume instead",
        )
        return None
    for section, allowed in _ASIDE_SUBKEYS.items():
        for key in spec.get(section) or {}:
            if key in allowed and key != "create_host_path":
                ctx.warn((*path, section, key), f"volumes.{section}.{key}", "Docker's default is used")
    read_only = ctx.read.boolean(spec.get("read_only", False), (*path, "read_only"))
    modes = ["ro"] if read_only else []
    if not spec.get("source"):
        if kind == "bind":
            ctx.report(path, "a `bind` mount needs a `source`", hint="name the host path to mount")
            return None
        return target
    return _mount(kind, str(spec["source"]), target, modes, ctx, path)


def _mount(
    kind: str, source: str, target: str, modes: list[str], ctx: Context, path: tuple[str | int, ...]
) -> str | None:
    suffix = f":{','.join(modes)}" if modes else ""
    if kind == "bind":
        return f"{ctx.path(source)}:{target}{suffix}"
    if source not in ctx.volumes:
        ctx.report(path, f"volume `{source}` is not declared under the top-level `volumes`")
        return None
    declared = ctx.volumes[source] or {}
    if declared.get("name"):
        real = str(declared["name"])
    elif ctx.read.boolean(declared.get("external", False), ("volumes", source, "external")):
        real = source
    else:
        # As docker compose names them: one volume per project, kept across sessions.
        real = f"{ctx.slug(ctx.project)}_{source}"
    return f"{real}:{target}{suffix}"


def file_mounts(kind: str, value: Any, ctx: Context, path: tuple[str | int, ...]) -> list[str]:
    """The read-only bind mounts of a service's `secrets` or `configs` (`kind`)."""
    declared: Mapping[str, Any] = ctx.secrets if kind == "secrets" else ctx.configs
    mounts: list[str] = []
    for index, entry in enumerate(value or []):
        where = (*path, index)
        spec = {"source": entry} if isinstance(entry, str) else dict(entry)
        source = str(spec.get("source", ""))
        for key in ("uid", "gid", "mode"):
            if key in spec:
                ctx.warn((*where, key), f"{kind}.{key}", "a bind-mounted file keeps its owner and mode")
        if source not in declared:
            ctx.report(where, f"`{source}` is not declared under the top-level `{kind}`")
            continue
        file = _source_file(kind, source, declared[source] or {}, ctx)
        if file is None:
            continue
        target = str(spec.get("target") or source)
        if not target.startswith("/"):
            target = f"/run/secrets/{target}" if kind == "secrets" else f"/{target}"
        mounts.append(f"{file}:{target}:ro")
    return mounts


def _source_file(kind: str, name: str, definition: Mapping[str, Any], ctx: Context) -> str | None:
    where = (kind, name)
    if definition.get("file") is not None:
        file = ctx.path(str(definition["file"]))
        if not Path(file).is_file():
            ctx.report(
                (*where, "file"),
                f"{kind[:-1]} file {file} does not exist",
                hint="create it (compose fails on a missing one too)",
            )
            return None
        ctx.sources.append(file)
        return file
    if definition.get("environment") is not None:
        variable = str(definition["environment"])
        if variable not in ctx.environ:
            ctx.report(
                (*where, "environment"), f"variable `{variable}` is not set", hint="set it, or use `file`"
            )
            return None
        return _written(kind, name, ctx.environ[variable], ctx)
    if definition.get("content") is not None:
        return _written(kind, name, str(definition["content"]), ctx)
    if not definition.get("external"):
        ctx.report(where, f"the {kind[:-1]} has no `file`, `environment` or `content`")
    return None  # `external` is reported with the other refused keys


def _written(kind: str, name: str, text: str, ctx: Context) -> str:
    """Write `text` to the file mounted for this secret or config (only when it changed)."""
    folder = ctx.directory / ".preflight" / "compose" / kind
    file = folder / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    data = text.encode("utf-8")
    if not file.is_file() or file.read_bytes() != data:
        folder.mkdir(parents=True, exist_ok=True)
        # Written anew (never edited in place): a running container keeps the file it mounted.
        temporary = folder / f".{file.name}.tmp"
        temporary.write_bytes(data)
        os.chmod(temporary, 0o644)
        temporary.replace(file)
    return str(file)
