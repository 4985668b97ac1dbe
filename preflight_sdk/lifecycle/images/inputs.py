"""What each service is made from, as hashes: the facts that decide what to rebuild and recreate.

An image's build inputs are the hash of its build context files (as `.dockerignore` lets Docker
see them, with their exec bit), its Dockerfile, build args and target. A container carries
`preflight.inputs`: the hash of its resolved spec (image id, environment, command, entrypoint,
ports, volumes, user, working directory, aliases, hosts), so a rebuilt image (a new id) is a
changed container.

An image is up to date when it carries `preflight.build-inputs` with that hash (BuildKit and
Podman builds, where labels are free), or when `.preflight/inputs.json` says this checkout built
the very image id the tag names from the same hash (Docker's legacy builder, where each label
would be a build step of its own). The record also keeps the parts of each hash, to say *why*
something changed (`app.py changed`, `environment changed`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.engine.base import BuildSpec, ContainerSpec

from ..session.state import STATE_DIR
from .context_noise import changed_names, dockerignore_hint
from .dockerignore import context_files

__all__ = [
    "LABEL_BUILD_INPUTS",
    "LABEL_INPUTS",
    "BuildInputs",
    "InputsRecord",
    "ServiceInputs",
    "build_inputs",
    "build_reasons",
    "file_digest",
    "mock_digest",
    "read_record",
    "service_inputs",
    "spec_reasons",
    "write_record",
]

LABEL_BUILD_INPUTS = "preflight.build-inputs"
LABEL_INPUTS = "preflight.inputs"
_RECORD = "inputs.json"
_NAMED = 3  # changed files named in a reason before "and N more"


class BuildInputs(msgspec.Struct, frozen=True, kw_only=True):
    """An image's build inputs: one digest, and its parts (to explain a change)."""

    digest: str
    files: dict[str, str]
    dockerfile: str
    args: str
    image: str = ""  # the id of the image built from these inputs, once built
    tag: str = ""  # and the name it was built as


class ServiceInputs(msgspec.Struct, frozen=True, kw_only=True):
    """A container's inputs: one digest, and its parts (to explain a change)."""

    digest: str
    parts: dict[str, str]


class InputsRecord(msgspec.Struct, kw_only=True):
    """`.preflight/inputs.json`: the last inputs of each image, container and mock."""

    builds: dict[str, BuildInputs] = msgspec.field(default_factory=dict)
    services: dict[str, ServiceInputs] = msgspec.field(default_factory=dict)
    mocks: dict[str, str] = msgspec.field(default_factory=dict)


# Content hashes by (path, mtime, size, inode): a long-lived process (the MCP server, `watch`)
# reads only the files that changed since the last look.
_FILE_CACHE: dict[tuple[str, int, int, int], str] = {}
_FILE_CACHE_LIMIT = 50_000


def build_inputs(spec: BuildSpec, project_root: str | os.PathLike[str] | None = None) -> BuildInputs:
    """Hash what `docker build` of `spec` reads (blocking: reads the context's files).

    preflight's own folder (`.preflight/` under `project_root`) is left out: it changes on
    every run (its store, lock and records), which must not make every run a rebuild.
    """
    context = Path(spec.context)
    dockerfile = Path(spec.dockerfile)
    files: dict[str, str] = {}
    skip = None
    if project_root is not None:
        state = os.path.relpath(Path(project_root) / STATE_DIR, context).replace(os.sep, "/")
        skip = None if state.startswith("..") else state
    for relative in context_files(context, skip=skip):
        path = context / relative
        if path.resolve() == dockerfile:
            continue  # hashed on its own, so a change of it is named as such
        files[relative] = file_digest(path)
    dockerfile_digest = file_digest(dockerfile)
    args = _digest(msgspec.json.encode({"args": dict(sorted(spec.args.items())), "target": spec.target}))
    whole = _digest(msgspec.json.encode({"files": files, "dockerfile": dockerfile_digest, "args": args}))
    return BuildInputs(digest=whole, files=files, dockerfile=dockerfile_digest, args=args)


def service_inputs(spec: ContainerSpec, image_id: str) -> ServiceInputs:
    """Hash the container `spec` running image `image_id` (names and labels left out)."""
    parts = {
        "image": image_id,
        "environment": _digest(msgspec.json.encode(dict(sorted(spec.env.items())))),
        "command": _digest(msgspec.json.encode([spec.command, spec.entrypoint, spec.working_dir, spec.user])),
        "ports": _digest(msgspec.json.encode(sorted(p.docker_arg() for p in spec.ports))),
        "volumes": _digest(msgspec.json.encode(list(spec.volumes))),
        "network": _digest(msgspec.json.encode([sorted(spec.aliases), sorted(spec.add_hosts)])),
    }
    if spec.init or spec.read_only or spec.health is not None:
        # Only when set, so the containers of projects that never use them keep their digests.
        parts["runtime"] = _digest(msgspec.json.encode([spec.init, spec.read_only, spec.health]))
    return ServiceInputs(digest=_digest(msgspec.json.encode(parts)), parts=parts)


def build_reasons(old: BuildInputs | None, new: BuildInputs) -> list[str]:
    """Say what changed between two builds' inputs (`Dockerfile changed`, `app.py changed`)."""
    if old is None:
        return ["build inputs changed"]
    reasons: list[str] = []
    if old.dockerfile != new.dockerfile:
        reasons.append("Dockerfile changed")
    changed = sorted(
        name for name in old.files.keys() | new.files.keys() if old.files.get(name) != new.files.get(name)
    )
    if changed:
        names = changed_names(changed)
        named = ", ".join(names[:_NAMED])
        more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
        hint = dockerignore_hint(changed)
        reasons.append(f"{named}{more} changed" + (f" ({hint})" if hint else ""))
    if old.args != new.args:
        reasons.append("build args changed")
    return reasons or ["build inputs changed"]


def spec_reasons(old: ServiceInputs | None, new: ServiceInputs) -> list[str]:
    """Say which parts of a container's spec changed (`environment changed`, `image changed`)."""
    if old is None:
        return ["container spec changed"]
    changed = [f"{part} changed" for part, value in new.parts.items() if old.parts.get(part) != value]
    return changed or ["container spec changed"]


def read_record(root: str | os.PathLike[str]) -> InputsRecord:
    """Return the recorded inputs (empty when there are none or the file cannot be read)."""
    try:
        return decoding.decode((Path(root) / STATE_DIR / _RECORD).read_bytes(), InputsRecord)
    except (OSError, msgspec.DecodeError):
        return InputsRecord()


def write_record(root: str | os.PathLike[str], record: InputsRecord) -> None:
    """Write the recorded inputs (atomically: a crash never leaves half a file)."""
    target = Path(root) / STATE_DIR / _RECORD
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{_RECORD}.{os.getpid()}")
    temporary.write_bytes(msgspec.json.encode(record))
    os.replace(temporary, target)


def mock_digest(config: object) -> str:
    """Hash a mock's configuration (its routes, port and journal settings)."""
    return _digest(msgspec.json.encode(config))


def file_digest(path: Path) -> str:
    """The digest of a file's content (and exec bit); `missing`, `link:<target>` or `unreadable` otherwise.

    Cached by (path, mtime, size, inode): only files that changed since the last look are read.
    """
    try:
        stat = path.lstat()
    except OSError:
        return "missing"
    if path.is_symlink():
        return "link:" + os.readlink(path)
    key = (str(path), stat.st_mtime_ns, stat.st_size, stat.st_ino)
    cached = _FILE_CACHE.get(key)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return "unreadable"
    value = ("x" if stat.st_mode & 0o111 else "") + digest.hexdigest()[:32]
    if len(_FILE_CACHE) >= _FILE_CACHE_LIMIT:
        _FILE_CACHE.clear()
    _FILE_CACHE[key] = value
    return value


def _digest(data: bytes | Mapping[str, str]) -> str:
    raw = data if isinstance(data, bytes) else msgspec.json.encode(dict(data))
    return hashlib.sha256(raw).hexdigest()[:32]
