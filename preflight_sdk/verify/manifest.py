"""Read a pai-deps style manifest (`pai-manifest.yaml`): the start command and the declared tools.

Two shapes are accepted, because manifests exist in both:

```yaml
# 1. a top-level start command and `provides.mcp` as a list (what pai-deps implements)
name: my-tool
mcp_start: bun run src/index.ts
provides:
  mcp:
    - tool: search_books
      schema: schemas/search_books.json   # optional: the expected inputSchema
      example_arguments: {query: dune}    # optional: called with these under call_readonly
    - resource: books://all               # resources are not checked

# 2. `provides.mcp` as a block with `start` and `tools` (what its specification describes)
name: my-tool
provides:
  mcp:
    start: bun run src/index.ts
    tools:
      - tool: search_books
        schema: schemas/search_books.json
```

`provides.cli` lists commands the tool provides (`- command: my-tool --version`, with an optional
`output_schema` JSON file): each must exit 0 and, with a schema, print JSON that matches it
(skipped with `mcp_only`).

A tool entry may also be written `name: search_books`, or as a bare string. The start command
(a string split like a shell would, or a list) runs in the manifest's directory, and `schema`
paths are relative to it too. Other manifest keys (`type`, `depends_on`, …) are left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight_sdk.config.validate import Validator, did_you_mean
from preflight_sdk.core.errors import ConfigError, InputError
from preflight_sdk.core.yaml_source import ParsedYaml, PathKey, format_path, parse_yaml

from .spec import CliContract, ExpectedTool, ServerSpec, load_schema_file, resolve_path, split_command

__all__ = ["load_manifest"]

_BLOCK_KEYS = ("start", "tools", "resources")
_TOOL_KEYS = ("tool", "name", "schema", "example_arguments", "description")
_RESOURCE_KEYS = ("resource", "schema", "description")


class _Reader:
    def __init__(self, parsed: ParsedYaml, file: Path) -> None:
        self.parsed = parsed
        # Problems are located in the YAML the way e2e.yaml's are (line, column of the key or value).
        self._located = Validator(parsed, file=str(file))
        self.problems = self._located.problems
        self.problems.extend(parsed.problems)

    def add(self, path: PathKey, message: str, *, suggestion: str | None = None, key: bool = False) -> None:
        self._located.add(path, message, suggestion=suggestion, key=key)

    def unknown_keys(self, data: dict[str, Any], path: PathKey, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                self.add(
                    (*path, key), f"unknown key {key!r}", suggestion=did_you_mean(str(key), allowed), key=True
                )

    def command(self, value: Any, path: PathKey) -> list[str] | None:
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            text: str | list[str] = value
        elif isinstance(value, str):
            text = value
        else:
            self.add(path, "the start command must be a string or a list of strings")
            return None
        try:
            return split_command(text, field=format_path(path))
        except InputError as exc:
            self.add(path, exc.message)
            return None

    def schema(self, ref: Any, path: PathKey, base: Path, wrong_type: str) -> dict[str, Any] | None:
        """The schema `ref` gives inline or as a JSON file relative to `base`; None (noted) if it can't be read."""
        if isinstance(ref, dict):
            return ref
        if isinstance(ref, str):
            try:
                return load_schema_file(
                    resolve_path(base, ref), where=format_path(path), code="MANIFEST_INVALID"
                )
            except ConfigError as exc:
                self.add(path, exc.problems[0].message if exc.problems else exc.message)
        elif ref is not None:
            self.add(path, wrong_type)
        return None


def load_manifest(file: Path) -> ServerSpec:
    """Return the server spec a manifest describes (blocking: reads the manifest and schema files).

    Raises:
        ConfigError: `MANIFEST_INVALID`, with one problem (path, line, column) per mistake.
    """
    try:
        text = file.read_text()
    except OSError as exc:
        raise ConfigError(
            f"manifest {file} cannot be read: {exc.strerror or exc}",
            code="MANIFEST_INVALID",
            hint="pass the path of a pai-manifest.yaml (relative paths are taken from the project root)",
        ) from exc
    reader = _Reader(parse_yaml(text, file=str(file)), file)
    data = reader.parsed.data
    start: list[str] | None = None
    entries: list[tuple[PathKey, Any]] = []
    cli: list[CliContract] = []
    if data is not None and not isinstance(data, dict):
        reader.add((), f"a manifest is a mapping, not {type(data).__name__}")
    elif isinstance(data, dict):
        start, entries = _read_top(reader, data)
        provides = data.get("provides")
        if isinstance(provides, dict) and provides.get("cli") is not None:
            cli = _read_cli(reader, provides["cli"], file.parent)
    declared = _read_tools(reader, entries, file.parent)
    if reader.problems:
        count = len(reader.problems)
        raise ConfigError(
            f"manifest {file} is invalid: {count} problem{'s' if count != 1 else ''}; "
            f"first: {reader.problems[0].render()}",
            code="MANIFEST_INVALID",
            hint="fix every problem in details.problems; see docs/verify.md for both manifest shapes",
            problems=reader.problems,
        )
    return ServerSpec(source="manifest", argv=start, cwd=file.parent, declared=declared, cli=cli)


def _read_top(reader: _Reader, data: dict[str, Any]) -> tuple[list[str] | None, list[tuple[PathKey, Any]]]:
    for key in data:
        # Other keys belong to pai-deps; only near-misses of the two keys read here are mistakes.
        if key not in ("mcp_start", "provides") and did_you_mean(
            str(key), ("mcp_start", "provides"), cutoff=0.8
        ):
            reader.add(
                (key,),
                f"unknown key {key!r}",
                suggestion=did_you_mean(str(key), ("mcp_start", "provides")),
                key=True,
            )
    start = reader.command(data["mcp_start"], ("mcp_start",)) if "mcp_start" in data else None
    provides = data.get("provides")
    if provides is None:
        return start, []
    if not isinstance(provides, dict):
        reader.add(("provides",), "`provides` must be a mapping (cli, mcp, library, database)")
        return start, []
    for key in provides:
        if key not in ("mcp", "cli") and did_you_mean(str(key), ("mcp", "cli"), cutoff=0.8):
            guess = did_you_mean(str(key), ("mcp", "cli"), cutoff=0.8)
            reader.add(("provides", key), f"unknown key {key!r}", suggestion=guess, key=True)
    mcp = provides.get("mcp")
    if mcp is None:
        return start, []
    if isinstance(mcp, list):
        return start, [(("provides", "mcp", i), entry) for i, entry in enumerate(mcp)]
    if not isinstance(mcp, dict):
        reader.add(
            ("provides", "mcp"), "`provides.mcp` must be a list of tools or a block with `start` and `tools`"
        )
        return start, []
    reader.unknown_keys(mcp, ("provides", "mcp"), _BLOCK_KEYS)
    if "start" in mcp:
        block_start = reader.command(mcp["start"], ("provides", "mcp", "start"))
        if start is not None and block_start is not None and block_start != start:
            reader.add(
                ("provides", "mcp", "start"), "`mcp_start` and `provides.mcp.start` disagree; keep one"
            )
        start = start or block_start
    tools = mcp.get("tools", [])
    if not isinstance(tools, list):
        reader.add(("provides", "mcp", "tools"), "`provides.mcp.tools` must be a list")
        tools = []
    resources = mcp.get("resources", [])
    if not isinstance(resources, list):
        reader.add(("provides", "mcp", "resources"), "`provides.mcp.resources` must be a list")
    return start, [(("provides", "mcp", "tools", i), entry) for i, entry in enumerate(tools)]


def _read_tools(reader: _Reader, entries: list[tuple[PathKey, Any]], base: Path) -> list[ExpectedTool]:
    declared: list[ExpectedTool] = []
    seen: set[str] = set()
    for path, entry in entries:
        name: Any
        schema_ref: Any
        examples: dict[str, Any] | None = None
        if isinstance(entry, str):
            name, schema_ref = entry, None
        elif isinstance(entry, dict) and "resource" in entry and "tool" not in entry and "name" not in entry:
            reader.unknown_keys(entry, path, _RESOURCE_KEYS)
            continue  # resources are out of scope
        elif isinstance(entry, dict):
            reader.unknown_keys(entry, path, _TOOL_KEYS)
            if "tool" in entry and "name" in entry:
                reader.add(path, "give the tool name once, as `tool` or as `name`")
            name, schema_ref = entry.get("tool", entry.get("name")), entry.get("schema")
            examples = _read_examples(reader, entry, path)
        else:
            reader.add(path, "a tool entry is a name or a mapping with `tool` (and optionally `schema`)")
            continue
        if not isinstance(name, str) or not name:
            reader.add(path, "the tool entry has no name (`tool: my_tool`)")
            continue
        if name in seen:
            reader.add(path, f"tool {name!r} is declared twice")
            continue
        seen.add(name)
        schema = reader.schema(
            schema_ref,
            (*path, "schema"),
            base,
            "`schema` is a path to a JSON file (relative to the manifest) or an object",
        )
        declared.append(ExpectedTool(name=name, input_schema=schema, example_arguments=examples))
    return declared


def _read_examples(reader: _Reader, entry: dict[str, Any], path: PathKey) -> dict[str, Any] | None:
    """Return the entry's `example_arguments` (a mapping of argument names), or None."""
    value = entry.get("example_arguments")
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        reader.add(
            (*path, "example_arguments"),
            "`example_arguments` is a mapping of argument names to values (`{query: dune}`)",
        )
        return None
    return value


_CLI_KEYS = ("command", "output_schema", "description")


def _read_cli(reader: _Reader, entries: Any, base: Path) -> list[CliContract]:
    if not isinstance(entries, list):
        reader.add(("provides", "cli"), "`provides.cli` must be a list of `{command, output_schema?}`")
        return []
    contracts: list[CliContract] = []
    for index, entry in enumerate(entries):
        path: PathKey = ("provides", "cli", index)
        if isinstance(entry, str):
            entry = {"command": entry}
        if not isinstance(entry, dict) or "command" not in entry:
            reader.add(path, "a cli entry is a command string or a mapping with `command`")
            continue
        reader.unknown_keys(entry, path, _CLI_KEYS)
        argv = reader.command(entry["command"], (*path, "command"))
        schema = reader.schema(
            entry.get("output_schema"),
            (*path, "output_schema"),
            base,
            "`output_schema` is a JSON file path or an object",
        )
        if argv is not None:
            contracts.append(CliContract(command=argv, output_schema=schema))
    return contracts
