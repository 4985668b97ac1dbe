"""Parse the Google-style docstrings of `Project` methods into the parts the faces show.

A docstring is a one-line summary, a body, then sections introduced by a header line at the left
margin (`Args:`, `Returns:`, `Example:`, `Tips:`, `Raises:`). `Args:` (or `Attributes:` in a
Struct's docstring) holds one entry per parameter (`name: text`, or `name (type): text`);
continuation lines are indented deeper than the entry. The MCP face builds a tool description from
the summary, body, example and tips, and the per-parameter text becomes each property's
description; the raw `Args:` block never reaches a tool description.
"""

from __future__ import annotations

import inspect
import re

import msgspec

__all__ = ["Docstring", "parse_docstring"]

_SECTION = re.compile(r"^(?P<name>[A-Z][A-Za-z ]*):\s*$")
_ARG = re.compile(r"^(?P<name>\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")

# Section headers and the field each one fills; any other header stays in the body as written.
_KNOWN = {
    "Args": "args",
    "Arguments": "args",
    "Parameters": "args",
    "Attributes": "args",
    "Returns": "returns",
    "Return": "returns",
    "Example": "example",
    "Examples": "example",
    "Tips": "tips",
    "Tip": "tips",
    "Raises": "raises",
}


class Docstring(msgspec.Struct, frozen=True, kw_only=True):
    """The parts of one docstring.

    Attributes:
        summary: the first paragraph, joined into one line.
        description: the body between the summary and the first known section.
        args: parameter name → its text (continuation lines joined with spaces).
        returns: the `Returns:` text.
        example: the `Example:` text, dedented (code kept as written).
        tips: the `Tips:` text, dedented.
        raises: the `Raises:` text, dedented.
    """

    summary: str = ""
    description: str = ""
    args: dict[str, str] = msgspec.field(default_factory=dict)
    returns: str = ""
    example: str = ""
    tips: str = ""
    raises: str = ""


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google-style docstring into summary, body, arguments and the known sections."""
    if not doc or not doc.strip():
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    summary_lines: list[str] = []
    index = 0
    while index < len(lines) and lines[index].strip():
        if _SECTION.match(lines[index]) and lines[index].split(":")[0] in _KNOWN:
            break
        summary_lines.append(lines[index].strip())
        index += 1

    body: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = body
    for line in lines[index:]:
        match = _SECTION.match(line)
        if match and match["name"] in _KNOWN:
            current = sections.setdefault(_KNOWN[match["name"]], [])
            continue
        current.append(line)

    return Docstring(
        summary=" ".join(summary_lines),
        description="\n".join(body).strip("\n"),
        args=_parse_args(sections.get("args", [])),
        returns=_join(sections.get("returns", [])),
        example=_dedent(sections.get("example", [])),
        tips=_dedent(sections.get("tips", [])),
        raises=_dedent(sections.get("raises", [])),
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _dedent(lines: list[str]) -> str:
    widths = [_indent(line) for line in lines if line.strip()]
    if not widths:
        return ""
    cut = min(widths)
    return "\n".join(line[cut:] for line in lines).strip("\n")


def _join(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _parse_args(lines: list[str]) -> dict[str, str]:
    """Read `name: text` entries; lines indented deeper than the entry continue it."""
    widths = [_indent(line) for line in lines if line.strip()]
    if not widths:
        return {}
    base = min(widths)
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        if not line.strip():
            continue
        match = _ARG.match(line.strip()) if _indent(line) == base else None
        if match:
            current = entries.setdefault(match["name"].lstrip("*"), [])
            if match["text"]:
                current.append(match["text"].strip())
        elif current is not None:
            current.append(line.strip())
    return {name: " ".join(parts) for name, parts in entries.items()}
