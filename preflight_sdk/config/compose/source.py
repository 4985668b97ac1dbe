"""`compose:` in e2e.yaml: put the compose files' services under `services`, before validation.

A service that e2e.yaml also names is the compose service with e2e.yaml's entry laid over it
(mappings merged key by key, anything else replaced): that is where host-side health checks,
`kind: job`, or a locally built image for a registry one are added. Services only in e2e.yaml
are kept after the compose ones. `compose.override` changes or drops the compose keys themselves,
as an override file would, so the file shared with production stays as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.core.errors import ConfigProblem

from . import load_compose

__all__ = ["ComposeApplied", "ComposeSpec", "apply_compose", "compose_files"]


class ComposeSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What `compose:` asks for."""

    files: list[str]
    profiles: list[str] = msgspec.field(default_factory=list)
    keep_host_ports: bool = False
    override: dict[str, Any] | None = None


class ComposeApplied(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of reading the compose files: problems, files read, keys set aside, and the
    services that came from them."""

    problems: list[ConfigProblem] = msgspec.field(default_factory=list)
    sources: list[str] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)
    services: list[str] = msgspec.field(default_factory=list)


def compose_files(spec: Any) -> ComposeSpec | None:
    """Return what a `compose:` value asks for, or None when it is malformed (the validator says how)."""
    if isinstance(spec, str):
        return ComposeSpec(files=[spec])
    if isinstance(spec, list) and spec and all(isinstance(item, str) for item in spec):
        return ComposeSpec(files=list(spec))
    if isinstance(spec, dict) and isinstance(spec.get("files"), list):
        override = spec.get("override")
        return ComposeSpec(
            files=[str(item) for item in spec["files"]],
            profiles=[str(item) for item in spec.get("profiles") or [] if isinstance(item, str)],
            keep_host_ports=spec.get("hostPorts") == "asWritten",
            override=override if isinstance(override, dict) else None,
        )
    return None


def apply_compose(data: dict[str, Any], root: Path, environ: Mapping[str, str], file: str) -> ComposeApplied:
    """Merge the services of `data["compose"]` into `data["services"]` in place.

    Returns the problems found in the compose files, every file read and the keys set aside. A
    malformed `compose:` value is left for the validator to report.
    """
    spec = compose_files(data.get("compose"))
    if spec is None:
        return ComposeApplied()
    paths = [_resolve(root, name) for name in spec.files]
    missing = [
        ConfigProblem(path="$.compose", message=f"compose file {path} does not exist", file=file)
        for path in paths
        if not path.is_file()
    ]
    if missing:
        return ComposeApplied(problems=missing, sources=[str(path) for path in paths])
    info = data.get("project")
    project = str(info.get("name") or "project") if isinstance(info, dict) else "project"
    loaded = load_compose(
        paths,
        environ=environ,
        project=project,
        profiles=spec.profiles,
        keep_host_ports=spec.keep_host_ports,
        override=spec.override,
    )
    own = data.get("services")
    if isinstance(own, list):
        by_name = {entry.get("name"): entry for entry in own if isinstance(entry, dict)}
        merged_list = [
            {"name": name, **_overlay(body, _without_name(by_name.get(name)))}
            for name, body in loaded.services.items()
        ]
        data["services"] = merged_list + [
            e for e in own if not isinstance(e, dict) or e.get("name") not in loaded.services
        ]
    elif own is None or isinstance(own, dict):
        overlays = own or {}
        merged = {name: _overlay(body, overlays.get(name)) for name, body in loaded.services.items()}
        merged.update({name: body for name, body in overlays.items() if name not in merged})
        data["services"] = merged
    return ComposeApplied(
        problems=loaded.problems,
        sources=loaded.sources,
        warnings=loaded.warnings,
        services=list(loaded.services),
    )


def _overlay(base: Any, extra: Any) -> Any:
    if extra is None:
        return base
    if isinstance(base, dict) and isinstance(extra, dict):
        result = dict(base)
        for key, value in extra.items():
            result[key] = _overlay(base[key], value) if key in base else value
        return result
    return extra


def _without_name(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if entry is None else {k: v for k, v in entry.items() if k != "name"}


def _resolve(root: Path, written: str) -> Path:
    candidate = Path(written).expanduser()
    return (candidate if candidate.is_absolute() else root / candidate).resolve()
