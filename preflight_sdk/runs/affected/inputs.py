"""What a run ran on, as digests: the inputs an edit changes, kept with every run.

- `config`: e2e.yaml as loaded (its services, suites, reset rules), canonical JSON;
- `engine`: the engine's kind and address;
- `services`: each service's (and job's) container inputs as setup stamped them (its image id,
  environment, command, ports, volumes: see `lifecycle.images.inputs`), so a rebuilt image is a change,
  and the content of the host files and folders it mounts (an edit there changes its behaviour
  without a rebuild) and of its OpenAPI contract (`contract:`, which checks its answers);
- `mocks`: each mock's routes and settings, its recorded routes, body files and contract included;
- `suites`: each suite's own files (a YAML suite's file; a pytest suite's test files, the Python
  files beside them, their `conftest.py` files and the project's pytest settings; a shell
  suite's script) and the values of the `{{env.X}}` names its YAML file uses.

Two runs on the same inputs differ only where something outside them changed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core import decoding
from preflight_sdk.lifecycle.images.inputs import file_digest, mock_digest, read_record

__all__ = ["RunInputs", "current_inputs", "decode_inputs", "encode_inputs"]

_canonical = msgspec.json.Encoder(order="sorted")
_ENV_NAME = re.compile(rb"env\.([A-Za-z_][A-Za-z0-9_]*)")
_PYTEST_SETTINGS = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py")
_SKIPPED_DIRS = {"__pycache__", ".pytest_cache", ".git", ".preflight", "node_modules", ".venv"}


class RunInputs(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The digests a run ran on (see the module docstring)."""

    config: str
    engine: str
    services: dict[str, str] = msgspec.field(default_factory=dict)
    mocks: dict[str, str] = msgspec.field(default_factory=dict)
    suites: dict[str, str] = msgspec.field(default_factory=dict)


def current_inputs(loaded: LoadedConfig, engine: str, *, running: bool) -> RunInputs:
    """The inputs of a run starting now (blocking: hashes the suites' files).

    `running`: the environment is up (its containers' inputs are those setup recorded); without
    it no service is known, and every case that touches one counts as touching the unknown.
    """
    record = read_record(loaded.state_root) if running else None
    services = {}
    if record is not None:
        services = {
            s.name: _with_files(
                record.services[s.name].digest,
                [*_mounted(loaded, s.container.volumes), *_contract(loaded, s.name)],
            )
            for s in loaded.services
            if s.name in record.services
        }
    return RunInputs(
        config=hashlib.sha256(_canonical.encode([_without_mocks(loaded), loaded.services])).hexdigest()[:32],
        engine=engine,
        services=services,
        mocks={
            name: _with_files(mock_digest(mock), _contract(loaded, name, mock=True))
            for name, mock in loaded.config.mocks.items()
        },
        suites={suite.id: suite_digest(loaded, suite) for suite in loaded.suites},
    )


def _without_mocks(loaded: LoadedConfig) -> object:
    """e2e.yaml as loaded, its mocks left to `mocks` (a change of a mock's routes, hand-written or
    recorded, affects the cases that reached it, not every case)."""
    return msgspec.structs.replace(loaded.config, mocks={})


def _mounted(loaded: LoadedConfig, volumes: list[str]) -> list[Path]:
    """The host files a container mounts (every file of a mounted folder)."""
    files: list[Path] = []
    for source, sep, _ in (v.partition(":") for v in volumes):
        if sep and _host_path(source):
            target = Path(loaded.resolve(source)).expanduser()
            files += list(_tree(target)) if target.is_dir() else [target]
    return files


def _contract(loaded: LoadedConfig, name: str, *, mock: bool = False) -> list[Path]:
    """The files of the OpenAPI contract a service or mock names (its answers are checked by it)."""
    contracts = loaded.contracts.mocks if mock else loaded.contracts.services
    contract = contracts.get(name)
    return [Path(f) for f in contract.files] if contract is not None else []


def _with_files(digest: str, files: list[Path]) -> str:
    """`digest` with the content of `files` (unchanged when there are none)."""
    if not files:
        return digest
    hashed = hashlib.sha256(digest.encode())
    for path in files:
        hashed.update(f"{path}\0{file_digest(path)}\0".encode())
    return hashed.hexdigest()[:32]


def _host_path(source: str) -> bool:
    """Whether a volume's source is a host path (else a named volume: state, which resets govern)."""
    return source.startswith((".", "/", "~")) or "/" in source


def suite_digest(loaded: LoadedConfig, suite: SuiteConfig) -> str:
    """The digest of a suite's own files (and the environment values its YAML file names)."""
    digest = hashlib.sha256()
    for path in _suite_files(loaded, suite):
        digest.update(f"{path}\0{file_digest(path)}\0".encode())
    if suite.runner == "yaml" and suite.file:
        try:
            text = Path(loaded.resolve(suite.file)).read_bytes()
        except OSError:
            text = b""
        for name in sorted(set(_ENV_NAME.findall(text))):
            value = loaded.environ.get(name.decode())
            digest.update(b"env:" + name + b"=" + (value or "\0unset").encode() + b"\0")
    return digest.hexdigest()[:32]


def _suite_files(loaded: LoadedConfig, suite: SuiteConfig) -> list[Path]:
    named = [Path(loaded.resolve(name)) for name in (suite.file, suite.config) if name]
    if suite.runner != "pytest":
        return named
    files: list[Path] = []
    root = Path(loaded.root).resolve()
    for target in named:
        if target.is_dir():
            files += list(_tree(target))
            continue
        files.append(target)
        folder = target.parent
        files += sorted(p for p in folder.glob("*.py") if p != target)
        for parent in (folder, *folder.parents):
            if parent != folder:
                files.append(parent / "conftest.py")
            if parent == root or root not in parent.parents:
                break
    files += [root / name for name in _PYTEST_SETTINGS]
    return list(dict.fromkeys(files))


def _tree(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not any(part in _SKIPPED_DIRS for part in path.relative_to(folder).parts):
            yield path


def encode_inputs(inputs: RunInputs) -> str:
    """The inputs as the store keeps them (JSON)."""
    return msgspec.json.encode(inputs).decode()


def decode_inputs(text: str | None) -> RunInputs | None:
    """The inputs a run recorded, or None (a run from before they were recorded, or unreadable)."""
    if not text:
        return None
    try:
        return decoding.decode(text.encode(), RunInputs)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
