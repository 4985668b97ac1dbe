"""Reference docs generated from the registry: the MCP tools (docs/mcp.md) and the CLI (docs/cli.md).

Each file keeps its hand-written text; only the part between the markers
`<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->` is rewritten, by
`scripts/gen-mcp-docs`. A unit test fails when a committed file differs from what the generator
writes, so the reference cannot drift from the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from .cli.app import build_cli
from .mcp.schemas import ToolSpec, build_tools
from .mcp.server import OPT_IN_GROUPS
from .reflection.registry import Registry, reflect

__all__ = [
    "GENERATED",
    "annotations_reference",
    "cli_reference",
    "groups_reference",
    "mcp_reference",
    "render",
    "splice",
]

WIDTH = 100
GENERATED = {"docs/mcp.md": ("groups", "annotations", "tools"), "docs/cli.md": ("commands",)}
"""The generated blocks of each file, by the name of their markers."""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _hints(spec: ToolSpec) -> str:
    """The hints the tool is served with (a read-only tool is served without the idempotent and
    destructive hints, which the spec calls meaningless there)."""
    flags = [
        "read-only" if spec.read_only else None,
        "destructive" if spec.destructive and not spec.read_only else None,
        "idempotent" if spec.idempotent and not spec.read_only else None,
        "open-world" if spec.open_world else None,
    ]
    return ", ".join(flag for flag in flags if flag) or "–"


def mcp_reference(registry: Registry | None = None) -> str:
    """Return the generated tool reference (Markdown): a summary table, then one section per tool."""
    specs = build_tools(registry if registry is not None else reflect(), project_required=False)
    lines = ["| tool | group | title | hints |", "|---|---|---|---|"]
    lines += [f"| [`{s.name}`](#{s.name}) | {s.group} | {_cell(s.title)} | {_hints(s)} |" for s in specs]
    for spec in specs:
        head = f"**{spec.title}** (group `{spec.group}`; {_hints(spec)})"
        lines += ["", f"### {spec.name}", "", head, "", spec.description, ""]
        required = set(spec.input_schema.get("required", []))
        properties = spec.input_schema.get("properties", {})
        if not properties:
            lines.append("No arguments.")
            continue
        lines += ["| argument | type | required | description |", "|---|---|---|---|"]
        labels = {p.wire_name: p.label for p in spec.parameters}
        for name, prop in properties.items():
            default = (
                f" Default: `{prop['default']}`." if prop.get("default") not in (None, False, "") else ""
            )
            need = "yes" if name in required else "no"
            text = _cell(prop.get("description", "")) + default
            lines.append(f"| `{name}` | {_cell(labels.get(name, ''))} | {need} | {text} |")
    return "\n".join(lines)


def _names(specs: list[ToolSpec]) -> str:
    return ", ".join(f"`{s.name}`" for s in specs) or "none"


def groups_reference(registry: Registry | None = None) -> str:
    """Return the table of tool groups (Markdown): each group, whether it is served by default, its tools."""
    specs = build_tools(registry if registry is not None else reflect(), project_required=False)
    groups = list(dict.fromkeys(s.group for s in specs))
    lines = ["| group | served | tools |", "|---|---|---|"]
    for group in groups:
        served = f"only when named: `--tools …,{group}`" if group in OPT_IN_GROUPS else "by default"
        lines.append(f"| `{group}` | {served} | {_names([s for s in specs if s.group == group])} |")
    return "\n".join(lines)


def annotations_reference(registry: Registry | None = None) -> str:
    """Return which tools carry which annotation hints, and which replies are not the envelope."""
    specs = build_tools(registry if registry is not None else reflect(), project_required=False)
    writing = [s for s in specs if not s.read_only]
    lines = [
        f"- **Read-only** (`readOnlyHint: true`; `destructiveHint` and `idempotentHint` are left out, "
        f"the spec calls them meaningless there): {_names([s for s in specs if s.read_only])}.",
        f"- **Destructive** (`destructiveHint: true`): {_names([s for s in writing if s.destructive])}.",
        "- **Not read-only, not destructive, idempotent** (`idempotentHint: true`): "
        f"{_names([s for s in writing if not s.destructive and s.idempotent])}.",
        "- **Not read-only, not destructive, not idempotent**: "
        f"{_names([s for s in writing if not s.destructive and not s.idempotent])}.",
        f"- **Open-world** (`openWorldHint: true`): {_names([s for s in specs if s.open_world])}; "
        "every other tool says `openWorldHint: false`.",
    ]
    aliases = [s for s in specs if s.alias is not None]
    if aliases:
        lines.append(
            f"- **Replies in their own shape, not the envelope**: {_names(aliases)} (group "
            '`preflights`) answer as the Preflights server does, `{"status": …}` with no '
            '`success`; an error is `{"status": "error", "error": {code, message, details, '
            "recovery_hint}}` with `isError: true`. Every other tool replies with the envelope."
        )
    return "\n".join(lines)


def cli_reference(registry: Registry | None = None) -> str:
    """Return the generated command reference (Markdown): each command's `--help`."""
    group = build_cli(registry)
    root = click.Context(group, info_name="preflight", terminal_width=WIDTH, max_content_width=WIDTH)
    lines = ["```", group.get_help(root), "```"]
    for name in sorted(group.commands):
        command = group.commands[name]
        ctx = click.Context(
            command, info_name=name, parent=root, terminal_width=WIDTH, max_content_width=WIDTH
        )
        lines += ["", f"### preflight {name}", "", "```", command.get_help(ctx), "```"]
    return "\n".join(lines)


def splice(text: str, name: str, content: str) -> str:
    """Replace the generated block `name` in `text` (markers kept)."""
    begin, end = f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"no `{begin}` … `{end}` block")
    return pattern.sub(lambda _: f"{begin}\n{content}\n{end}", text)


def render(repo: Path, registry: Registry | None = None) -> dict[Path, str]:
    """Return the up-to-date text of every generated doc under `repo`."""
    makers = {
        "groups": groups_reference,
        "annotations": annotations_reference,
        "tools": mcp_reference,
        "commands": cli_reference,
    }
    out = {}
    for relative, names in GENERATED.items():
        text = (repo / relative).read_text(encoding="utf-8")
        for name in names:
            text = splice(text, name, makers[name](registry))
        out[repo / relative] = text
    return out
