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

from .cli import build_cli
from .registry import Registry, reflect
from .schemas import ToolSpec, build_tools

__all__ = ["GENERATED", "cli_reference", "mcp_reference", "render", "splice"]

WIDTH = 100
GENERATED = {"docs/mcp.md": "tools", "docs/cli.md": "commands"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _hints(spec: ToolSpec) -> str:
    flags = [
        "read-only" if spec.read_only else None,
        "destructive" if spec.destructive else None,
        "idempotent" if spec.idempotent else None,
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
    makers = {"tools": mcp_reference, "commands": cli_reference}
    return {
        repo / relative: splice((repo / relative).read_text(encoding="utf-8"), name, makers[name](registry))
        for relative, name in GENERATED.items()
    }
