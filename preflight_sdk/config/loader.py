"""Find, read, interpolate and validate `e2e.yaml`, and the YAML test files its suites name.

Order of work, so that every problem is reported at once with its line:

1. locate the file (`e2e.yaml`, then `e2e.yml`, or the explicit `config_file`); without one, a
   compose file alone stands for the project (`compose/project.py`);
2. read `.env` beside it (it never overrides the real environment);
3. parse YAML keeping positions (`core/yaml_source`);
4. substitute `{{env.X}}`, `{{config.X}}`, `{{uuid}}`, `{{timestamp}}`, `{{date}}` (`interpolate`);
   mock responses keep every other template for the mock server, which renders them per request;
5. check types and keys (`validate`), then cross-field rules (`rules`), then the suites' test files;
6. only then convert to Structs and normalise (`services` list/map/single → one list).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.decoding import gc_paused
from preflight_sdk.core.errors import ConfigError, ConfigProblem
from preflight_sdk.core.hints import RETRY
from preflight_sdk.core.redaction import Redactor, redactor_for, secret_values
from preflight_sdk.core.yaml_source import parse_yaml

from . import parsed_cache
from .compose.project import COMPOSE_NAMES, compose_project_text, is_compose_file
from .compose.source import apply_compose
from .contract_files import Contracts, load_contracts
from .dotenv import read_dotenv
from .host_access import host_access_warnings
from .interpolate import interpolate
from .mocks.recorded import attach_recorded
from .model import ProjectConfig, ServiceConfig, SuiteConfig
from .rules import check_rules
from .steps import check_steps
from .testfile import TestFile, sent_variables
from .validate import Validator, describe_type

__all__ = [
    "CONFIG_NAMES",
    "LoadedConfig",
    "find_config",
    "load_config",
    "load_test_file",
    "prepare",
    "read_dotenv",
]

CONFIG_NAMES = ("e2e.yaml", "e2e.yml")
MAX_CONFIG_BYTES = 2_000_000


class LoadedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A validated e2e.yaml with everything derived from it.

    Attributes:
        config: the file as Structs.
        path: absolute path of the file.
        root: its directory; every relative path in the file is relative to it.
        environ: the environment the project sees (process environment over `.env`).
        digest: sha256 of the file and `.env`, to tell whether a re-init must reload.
        services: every service in one list (single, list and map forms normalised), in file order.
        test_files: the parsed test file of each `yaml` suite, by suite id.
        sources: the other files the configuration was read from (compose files, their `.env`
            and env files), whose edits call for a reload like an edit of e2e.yaml.
        shard: the name of the shard this copy of the environment serves (see `sharded`), or
            None for the project's own environment.
        warnings: what was read but set aside (compose keys that cannot change what a test
            sees), once per key and file, each setting that hands a container the host
            (`privileged`, the engine's socket, ...: `host_access`), and the mock routes a
            contract forbids under `tests.contract: warn`; every face shows them.
        sent_secrets: the values YAML suites send under secret names (see `sent_secrets`),
            found once at load: part of the redaction policy.
        contracts: the OpenAPI documents the services and mocks name (`contract:`), loaded.
    """

    config: ProjectConfig
    path: str
    environ: dict[str, str]
    digest: str
    services: list[ServiceConfig]
    test_files: dict[str, TestFile]
    sources: list[str] = msgspec.field(default_factory=list)
    shard: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)
    sent_secrets: tuple[str, ...] = ()
    contracts: Contracts = msgspec.field(default_factory=Contracts)

    @property
    def root(self) -> str:
        """The file's directory; every relative path in the file is relative to it."""
        return os.path.dirname(self.path)

    @property
    def label_root(self) -> str:
        """The `preflight.root` label of this environment's resources: a shard's own, never the project's."""
        return f"{self.root}#shard:{self.shard}" if self.shard else self.root

    @property
    def state_root(self) -> str:
        """Where this environment's `.preflight/state.json` lives: a shard has a folder of its own."""
        return os.path.join(self.root, ".preflight", "shards", self.shard) if self.shard else self.root

    @property
    def project_name(self) -> str:
        """The project's name."""
        return self.config.project.name

    @property
    def suites(self) -> list[SuiteConfig]:
        """The configured suites, in file order."""
        return list(self.config.tests.suites) if self.config.tests else []

    @property
    def redactor(self) -> Redactor:
        """The redaction policy of this project: the built-in names plus its `redact:` list, and the
        values of its secret-named variables (services' `environment:` and build `args:`, suites'
        and the MCP server's `env:`, `name=value` pairs in suites' commands, what YAML suites send
        under secret names), masked wherever they appear."""
        names = redactor_for(tuple(self.config.redact))
        variables: list[Mapping[str, Any]] = [s.container.environment for s in self.services]
        variables += [s.build.args for s in self.services]
        variables += [s.env for s in self.suites]
        if self.config.mcp is not None:
            variables.append(self.config.mcp.env)
        commands = [
            s.command if isinstance(s.command, str) else " ".join(s.command or ()) for s in self.suites
        ]
        found = secret_values(names, variables, commands)
        return redactor_for(tuple(self.config.redact), (*found, *self.sent_secrets))

    def resolve(self, relative: str) -> Path:
        """Return `relative` as an absolute path against the e2e.yaml directory."""
        candidate = Path(os.path.expandvars(os.path.expanduser(relative)))
        return candidate if candidate.is_absolute() else Path(self.root) / candidate

    def service(self, name: str) -> ServiceConfig | None:
        """Return the service called `name` (or whose container is called `name`)."""
        for service in self.services:
            if service.name == name or service.container.name == name:
                return service
        return None


def config_candidates(path: str | os.PathLike[str], config_file: str | None = None) -> list[Path]:
    """The files that may be the configuration, in the order `find_config` tries them."""
    base = Path(path).expanduser()
    if config_file:
        explicit = Path(config_file).expanduser()
        folder = base.parent if base.is_file() else base
        return [explicit if explicit.is_absolute() else folder / explicit]
    if base.is_file():
        return [base]
    # Without an e2e.yaml, a compose file alone is the project (`compose/project.py`).
    return [base / name for name in (*CONFIG_NAMES, *COMPOSE_NAMES)]


def find_config(path: str | os.PathLike[str], config_file: str | None = None) -> Path:
    """Return the e2e.yaml that `path` (a project directory or a file) and `config_file` name.

    Raises:
        ConfigError: `CONFIG_NOT_FOUND`, listing every path tried.
    """
    base = Path(path).expanduser()
    tried = config_candidates(path, config_file)
    for candidate in tried:
        if candidate.is_file():
            return candidate.resolve()
    if not base.exists():
        hint = f"the project path {str(base)!r} does not exist; pass the directory that holds e2e.yaml"
    else:
        hint = (
            "create one with `preflight init` (or add a compose.yaml), or pass `config_file` / "
            "`--config` to name another file"
        )
    raise ConfigError(
        f"no configuration file found (tried {', '.join(str(p) for p in tried)})",
        code="CONFIG_NOT_FOUND",
        hint=hint,
        details={"tried": [str(p) for p in tried]},
    )


def prepare() -> None:
    """Pay now what the first load of a process pays: describing the config's types for validation
    (tens of milliseconds). A server does it while its client connects, before the first call."""
    for typ in (ProjectConfig, TestFile):
        describe_type(typ)


def load_config(
    path: str | os.PathLike[str],
    config_file: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Load and validate a project's e2e.yaml, and the test file of each of its yaml suites.

    Every relative path in the file is relative to the file's directory, never the cwd. Problems
    are collected, not raised one by one: a `CONFIG_INVALID` error lists all of them (in
    `problems` and `details.problems`), each with its JSON path, line, column and a did-you-mean
    where one fits; problems of a suite's test file carry that file's path and lines.

    Args:
        path: the project directory (or the config file itself).
        config_file: another file name or path, relative to `path` (or to its directory when
            `path` is a file).
        environ: the environment for `{{env.X}}` (default: `os.environ`); `.env` beside the file
            fills what it lacks and never overrides it.

    Raises:
        ConfigError: `CONFIG_NOT_FOUND`, or `CONFIG_INVALID` with every problem found.
    """
    config_path = find_config(path, config_file)
    if is_compose_file(config_path):
        raw_bytes = compose_project_text(config_path).encode("utf-8")
    else:
        raw_bytes = _read_bytes(config_path, kind="configuration")
    dotenv_path = config_path.parent / ".env"
    dotenv = read_dotenv(dotenv_path)
    merged_env = {**dotenv, **(os.environ if environ is None else environ)}
    file = str(config_path)

    source = parse_yaml(_utf8_text(raw_bytes, file), file=file)
    if source.problems and source.data is None:
        raise _invalid(file, source.problems)
    problems = list(source.problems)
    if not isinstance(source.data, dict):
        kind = "empty" if source.data is None else _SHAPES.get(type(source.data), "a single value")
        problems.append(
            ConfigProblem(
                path="$", message=f"the file is {kind}; expected a mapping with `project:`", file=file, line=1
            )
        )
        raise _invalid(file, problems)

    data, template_problems, templated = interpolate(source, merged_env, file)
    problems.extend(template_problems)
    composed = apply_compose(data, config_path.parent, merged_env, file)
    problems.extend(composed.problems)
    validator = Validator(source, file=file, templated=frozenset(templated), extension_keys=True)
    validator.check(data, ProjectConfig)
    check_rules(data, validator, root=config_path.parent)
    contracts = load_contracts(data, config_path.parent, validator)
    # An edit of a contract file calls for a reload like an edit of e2e.yaml.
    sources = [*composed.sources, *contracts.files]
    parsed: list[tuple[Path, bytes, TestFile]] = []
    test_files = _load_test_files(data, config_path.parent, validator, parsed)
    problems.extend(validator.problems)
    if problems:
        raise _invalid(file, problems)
    config = _convert(data, file)
    # The mocks' recorded routes (after the hand-written ones) and body files: sources too.
    config, recorded = attach_recorded(config, config_path, validator)
    if validator.problems:
        raise _invalid(file, validator.problems)
    sources = [*sources, *recorded]
    digest = _digest([raw_bytes, _maybe_bytes(dotenv_path), *(_maybe_bytes(Path(s)) for s in sources)])
    services = normalise_services(config)
    root = str(config_path.parent)
    loaded = LoadedConfig(
        config=config,
        path=file,
        environ=dict(merged_env),
        digest=digest,
        services=services,
        test_files=test_files,
        sources=sources,
        warnings=[
            *composed.warnings,
            *host_access_warnings(services, root, composed.services, composed.sources),
            *contracts.warnings,
        ],
        sent_secrets=tuple(
            secret_values(redactor_for(tuple(config.redact)), sent_variables(test_files.values()))
        ),
        contracts=contracts,
    )
    folder = parsed_cache.cache_folder(config_path.parent)
    for target, file_digest, test in parsed:  # a file holding a secret of the project is never kept
        parsed_cache.keep(folder, target, file_digest, test, loaded.redactor)
    return loaded


_PARSED: dict[str, tuple[bytes, TestFile]] = {}
_PARSED_LIMIT = 64
_PARSED_LOCK = threading.Lock()  # parallel suites load their files in worker threads


def load_test_file(
    path: str | os.PathLike[str],
    *,
    cache: Path | None = None,
    fresh: list[tuple[Path, bytes, TestFile]] | None = None,
) -> TestFile:
    """Load and validate one YAML test file; the same content is parsed once per process.

    Read every time (an edit made after `init` is seen): the last parse of a path is reused while
    the file's bytes are the same (a blake2b digest of them is compared), so loading the project
    and running its suites, or two runs in one process, read a large file once. With `cache` (a
    folder, `parsed_cache.cache_folder`), a fresh process reads back a file kept there instead of
    parsing it while the bytes are the same; a file parsed here is added to `fresh` (path, digest,
    file) for the caller to keep once it knows the project's redaction policy.

    Raises:
        ConfigError: `CONFIG_NOT_FOUND` or `CONFIG_INVALID` (every problem, with lines).
    """
    target = Path(path)
    try:
        raw = target.read_bytes() if target.is_file() else None
    except OSError:
        raw = None  # said below, with the reason
    if raw is None:
        return _load_test_file(target)
    digest = hashlib.blake2b(raw, digest_size=16).digest()
    with _PARSED_LOCK:
        cached = _PARSED.get(str(target))
    if cached is not None and cached[0] == digest:
        return cached[1]
    test = None if cache is None else parsed_cache.kept(cache, target, digest)
    if test is None:
        with gc_paused():
            test = _load_test_file(target)
        if fresh is not None:
            fresh.append((target, digest, test))
    with _PARSED_LOCK:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[str(target)] = (digest, test)
    return test


def _load_test_file(target: Path) -> TestFile:
    file = str(target)
    if not target.is_file():
        raise ConfigError(
            f"test file {file} does not exist" + (" (it is a directory)" if target.is_dir() else ""),
            code="CONFIG_NOT_FOUND",
            hint="check the suite's `file` (relative to e2e.yaml)",
            details={"tried": [file]},
        )
    source = parse_yaml(_utf8_text(_read_bytes(target, kind="test file"), file), file=file)
    problems = list(source.problems)
    if source.data is not None and not isinstance(source.data, dict):
        problems.append(
            ConfigProblem(
                path="$", message="a test file must be a mapping with `name` and `cases`", file=file, line=1
            )
        )
    if source.data is None and not problems:
        problems.append(ConfigProblem(path="$", message="the test file is empty", file=file, line=1))
    if problems:
        raise _invalid(file, problems, kind="test file")
    validator = Validator(source, file=file)
    validator.check(source.data, TestFile)
    check_steps(source.data, validator)
    if validator.problems:
        raise _invalid(file, validator.problems, kind="test file")
    try:
        return decoding.convert(source.data, TestFile)
    except msgspec.ValidationError as exc:
        raise _invalid(
            file, [ConfigProblem(path="$", message=str(exc), file=file)], kind="test file"
        ) from None


def normalise_services(config: ProjectConfig) -> list[ServiceConfig]:
    """Return every service as a `ServiceConfig` with its name, in file order."""
    if config.service is not None:
        single = config.service
        name = single.name or single.container.name or "app"
        return [_named(single, name)]
    if config.services is None:
        return []
    if isinstance(config.services, dict):
        return [_named(body, name) for name, body in config.services.items()]
    return list(config.services)


def _named(body: msgspec.Struct, name: str) -> ServiceConfig:
    # Every field the body has, copied by name: a key added to the service model (as `reset:` was)
    # reaches the services of every form without a second list of fields to keep in step.
    return ServiceConfig(**{**msgspec.structs.asdict(body), "name": name})


# -- helpers ----------------------------------------------------------------------------------


def _read_bytes(path: Path, *, kind: str) -> bytes:
    file = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            message = f"file is {size} bytes; the limit is {MAX_CONFIG_BYTES}"
            raise _invalid(file, [ConfigProblem(path="$", message=message, file=file)], kind=kind)
        return path.read_bytes()
    except OSError as exc:
        # Unreadable (permissions, a vanished file): a problem of the file, never a traceback.
        message = f"cannot read the file: {exc.strerror or exc}"
        raise _invalid(file, [ConfigProblem(path="$", message=message, file=file)], kind=kind) from None


def _utf8_text(raw: bytes, file: str) -> str:
    """The text of a YAML file's bytes; bytes that are not UTF-8 are a problem of the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(
            file, [ConfigProblem(path="$", message=f"not UTF-8 text ({exc.reason})", file=file)]
        ) from None


def _digest(parts: list[bytes]) -> str:
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def _maybe_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _resolve(root: Path, relative: str) -> Path:
    candidate = Path(relative).expanduser()
    return candidate if candidate.is_absolute() else root / candidate


_SHAPES = {list: "a list", str: "a single string", int: "a number", float: "a number", bool: "a boolean"}


def _invalid(file: str, problems: list[ConfigProblem], *, kind: str = "configuration") -> ConfigError:
    # In reading order: this file first, top to bottom, then the test files it names.
    problems = sorted(
        problems, key=lambda p: (p.file not in (None, file), p.file or "", p.line or 0, p.column or 0)
    )
    count = len(problems)
    first = problems[0].render() if problems else ""
    return ConfigError(
        f"{kind} {file} is invalid: {count} problem{'s' if count != 1 else ''}"
        + (f"; first: {first}" if first else ""),
        code="CONFIG_INVALID",
        hint=f"fix every problem listed in details.problems, each with its line, {RETRY}",
        problems=problems,
    )


def _convert(data: dict[str, Any], file: str) -> ProjectConfig:
    # Top-level `x-` keys only hold YAML anchors. strict=False lets templated text become the
    # number the field wants (`port: "{{env.PORT}}"`); the validator has already vetted each value.
    plain = {key: value for key, value in data.items() if not key.startswith("x-")}
    try:
        return decoding.convert(plain, ProjectConfig, strict=False)
    except msgspec.ValidationError as exc:
        # The walker should have caught it; keep the message rather than a traceback.
        raise _invalid(file, [ConfigProblem(path="$", message=str(exc), file=file)]) from None


def _load_test_files(
    data: dict[str, Any], root: Path, out: Validator, parsed: list[tuple[Path, bytes, TestFile]]
) -> dict[str, TestFile]:
    """Load the test file of every yaml suite whose entry is well-typed; problems go to `out`."""
    tests = data.get("tests")
    suites = tests.get("suites") if isinstance(tests, dict) else None
    loaded: dict[str, TestFile] = {}
    if not isinstance(suites, list):
        return loaded
    for index, entry in enumerate(suites):
        try:
            suite = decoding.convert(entry, SuiteConfig, strict=False)
        except msgspec.ValidationError:
            continue
        if suite.runner != "yaml" or not suite.file:
            continue
        target = _resolve(root, suite.file)
        if target.is_dir():
            out.add(
                ("tests", "suites", index, "file"),
                f"`{suite.file}` is a directory; a yaml suite needs a file",
            )
        elif target.is_file():
            try:
                loaded[suite.id] = load_test_file(target, cache=parsed_cache.cache_folder(root), fresh=parsed)
            except ConfigError as exc:
                if exc.problems:
                    out.problems.extend(exc.problems)
                else:
                    out.add(("tests", "suites", index, "file"), exc.message)
    return loaded
