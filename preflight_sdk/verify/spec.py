"""Where the server under test comes from, and what it is expected to serve.

Three sources: an explicit `command`, a pai-deps style manifest, or the `mcp:` block of e2e.yaml.
`command` and `manifest` exclude each other; either one replaces the `mcp:` block. A command is
an argv list or a string split with `shlex` (never given to a shell, so `;`, `|` and `$VAR` are
plain characters). Declarations come from the caller's `expected_tools` when given, otherwise
from the source that supplied the server.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml

from preflight_sdk.config.model import McpConfig
from preflight_sdk.core.errors import ConfigError, ConfigProblem, InputError

__all__ = [
    "ExpectedTool",
    "ServerSpec",
    "check_sources",
    "load_schema_file",
    "resolve_path",
    "resolve_spec",
    "split_command",
]

SpecSource = Literal["command", "manifest", "mcp", "none"]


class ExpectedTool(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A tool the server must serve, with what is known of its definition.

    Attributes:
        name: the tool name, exactly as served.
        input_schema: the expected `inputSchema`; when given, any difference is `SCHEMA_MISMATCH`.
        output_schema: the expected `outputSchema`; any difference is `OUTPUT_SCHEMA_MISMATCH`.
        annotations: expected annotation values in wire form (`{"readOnlyHint": true}`); each
            given key must match (`ANNOTATIONS_MISMATCH`), others are not compared.
        example_arguments: arguments known to work. With `call_readonly` the tool is called
            with exactly these, even when it is not annotated read-only (declaring them is the
            opt-in), and its result is checked like a read-only tool's.
    """

    name: str
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    example_arguments: dict[str, Any] | None = None


class CliContract(msgspec.Struct, frozen=True, kw_only=True):
    """A command a manifest says the tool provides (`provides.cli`): it must exit 0, and print
    JSON matching `output_schema` when one is declared."""

    command: list[str]
    output_schema: dict[str, Any] | None = None


class ServerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How to start the server under test and what it should serve.

    Attributes:
        source: which argument supplied the server (`none` when nothing gave a start command).
        argv: the command, already split; None when there is none (the result is `skipped`).
        cwd: working directory (None: the current one).
        env: variables added to the inherited environment.
        declared: the declared tools; empty when nothing was declared (nothing is compared).
        cli: the command-line contracts a manifest declares (`provides.cli`).
    """

    source: SpecSource
    argv: list[str] | None
    cwd: Path | None = None
    env: dict[str, str] = msgspec.field(default_factory=dict)
    declared: list[ExpectedTool] = msgspec.field(default_factory=list)
    cli: list[CliContract] = msgspec.field(default_factory=list)


def split_command(command: str | Sequence[str], *, field: str = "command") -> list[str]:
    """Return `command` as argv: a list as is, a string split as a POSIX shell would (no shell runs).

    Raises:
        InputError: `INVALID_INPUT` for an empty command or unbalanced quotes.
    """
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise InputError(
                f"{field} {command!r} cannot be split into arguments: {exc}",
                hint="balance the quotes, or pass the command as a list of arguments",
            ) from exc
    else:
        argv = [str(part) for part in command]
    if not argv or not argv[0]:
        raise InputError(f"{field} is empty", hint="give the command that starts the MCP server on stdio")
    return argv


def resolve_spec(
    *,
    root: Path | None,
    mcp: McpConfig | None,
    command: str | Sequence[str] | None,
    manifest: str | os.PathLike[str] | None,
    expected_tools: Sequence[ExpectedTool] | None,
    env: Mapping[str, str] | None,
) -> ServerSpec:
    """Pick the server source (command or manifest, else the `mcp:` block) and its declarations.

    Raises:
        InputError: `INVALID_INPUT` for both `command` and `manifest`, or a bad command string.
        ConfigError: `MANIFEST_INVALID` for a bad manifest, `CONFIG_INVALID` for a bad schema file
            named in the `mcp:` block.
    """
    check_sources(command=command, manifest=manifest)
    base = root if root is not None else Path.cwd()
    extra = dict(env or {})
    spec: ServerSpec
    if command is not None:
        spec = ServerSpec(source="command", argv=split_command(command), cwd=root)
    elif manifest is not None:
        from .manifest import load_manifest  # manifests are rare: parse them only when asked

        spec = load_manifest(resolve_path(base, os.fspath(manifest)))
    elif mcp is not None:
        spec = _from_mcp_block(mcp, base)
    else:
        spec = ServerSpec(source="none", argv=None, cwd=root)
    declared = list(expected_tools) if expected_tools is not None else spec.declared
    return msgspec.structs.replace(spec, env={**spec.env, **extra}, declared=declared)


def check_sources(*, command: object | None, manifest: object | None, self_check: bool = False) -> None:
    """Refuse more than one of `command`, `manifest` and `self_check`: each names a server.

    Picking one silently would verify a server the caller did not ask about. The `mcp:` block is
    not part of this: it is the default that any of them replaces.

    Raises:
        InputError: `INVALID_INPUT`, naming the options given.
    """
    given = [name for name, value in (("command", command), ("manifest", manifest)) if value is not None]
    if self_check:
        given.insert(0, "self_check")
    if len(given) > 1:
        raise InputError(
            f"{' and '.join(given)} each name the server to verify; give only one of them",
            hint="--self checks preflight-mcp, --command starts any server, --manifest reads a "
            "pai-deps manifest; with none of them the mcp: block of e2e.yaml is used",
        )


def _from_mcp_block(block: McpConfig, base: Path) -> ServerSpec:
    argv = split_command(block.start, field="mcp.start")
    cwd = resolve_path(base, block.cwd) if block.cwd else base
    declared: list[ExpectedTool] = []
    for index, tool in enumerate(block.tools):
        schema: dict[str, Any] | None
        if isinstance(tool.schema, str):
            schema = load_schema_file(
                resolve_path(base, tool.schema), where=f"$.mcp.tools[{index}].schema", code="CONFIG_INVALID"
            )
        else:
            schema = tool.schema
        declared.append(
            ExpectedTool(name=tool.name, input_schema=schema, example_arguments=tool.example_arguments)
        )
    return ServerSpec(source="mcp", argv=argv, cwd=cwd, env=dict(block.env), declared=declared)


def resolve_path(base: Path, relative: str) -> Path:
    """Return `relative` (with `~` expanded) against `base`, unless it is absolute."""
    candidate = Path(relative).expanduser()
    return candidate if candidate.is_absolute() else base / candidate


def load_schema_file(
    file: Path, *, where: str, code: Literal["CONFIG_INVALID", "MANIFEST_INVALID"]
) -> dict[str, Any]:
    """Read a JSON (or YAML) schema file that must hold an object."""
    try:
        text = file.read_text()
    except OSError as exc:
        raise _schema_error(file, where, f"cannot read the schema file: {exc.strerror or exc}", code) from exc
    try:
        data = yaml.safe_load(text) if file.suffix in {".yaml", ".yml"} else msgspec.json.decode(text)
    except (msgspec.DecodeError, yaml.YAMLError) as exc:
        raise _schema_error(file, where, f"the schema file is not valid JSON/YAML: {exc}", code) from exc
    if not isinstance(data, dict):
        raise _schema_error(file, where, f"the schema file holds {type(data).__name__}, not an object", code)
    return data


def _schema_error(
    file: Path, where: str, message: str, code: Literal["CONFIG_INVALID", "MANIFEST_INVALID"]
) -> ConfigError:
    return ConfigError(
        f"schema {file}: {message}",
        code=code,
        hint="point `schema` at a JSON file holding the tool's expected inputSchema (an object)",
        problems=[ConfigProblem(path=where, message=message, file=str(file))],
    )
