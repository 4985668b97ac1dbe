"""Snapshot sections in markdown: `### Category` headings followed by `- **Field**: value` lines.

ADRs (under "## Architecture Snapshot") and the ARCHITECTURE_STATE projection (under
"## Categories") write the snapshot the same way. Values carry ` (ADR <uid>)` when an ADR set
them. Categories and fields are sorted, each category ends with a blank line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..snapshot import Entry, Snapshot

__all__ = ["comment", "parse_snapshot", "render_snapshot", "section"]

_CATEGORY = re.compile(r"^### (\w+)\s*$")
_FIELD = re.compile(r"^- \*\*(\w+)\*\*: (.+?)\s*$")
_REF = re.compile(r"^(.*?)\s*\(ADR ([^()\s]+)\)$")


def render_snapshot(snapshot: Mapping[str, Mapping[str, Entry]]) -> str:
    """Return the snapshot lines; every category is followed by an empty line."""
    lines: list[str] = []
    for category in sorted(snapshot):
        fields = snapshot[category]
        if not fields:
            continue
        lines.append(f"### {category}")
        for name in sorted(fields):
            entry = fields[name]
            ref = f" (ADR {entry.adr})" if entry.adr else ""
            lines.append(f"- **{name}**: {entry.value}{ref}")
        lines.append("")
    return "\n".join(lines)


def parse_snapshot(text: str) -> Snapshot:
    """Parse `### Category` / `- **Field**: value` lines (other lines are ignored)."""
    snapshot: Snapshot = {}
    current: dict[str, Entry] | None = None
    for line in text.splitlines():
        cat = _CATEGORY.match(line)
        if cat:
            current = snapshot.setdefault(cat.group(1), {})
            continue
        field = _FIELD.match(line)
        if field and current is not None:
            raw = field.group(2)
            ref = _REF.match(raw)
            value, adr = (ref.group(1), ref.group(2)) if ref else (raw, None)
            current[field.group(1)] = Entry(value=value, adr=adr)
        elif line.startswith("## "):
            current = None
    return {cat: fields for cat, fields in snapshot.items() if fields}


def comment(text: str, key: str) -> str | None:
    """Return the value of the `<!-- Key: value -->` header comment, or None."""
    match = re.search(rf"^<!-- {re.escape(key)}: (.*?) -->\s*$", text, re.MULTILINE)
    return match.group(1).strip() if match else None


def section(text: str, heading: str) -> str | None:
    """Return the body of `## heading` up to the next `## ` heading (stripped), or None."""
    match = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1).strip() if match else None
