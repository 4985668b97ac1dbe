"""ADR files `docs/adr/<UID>_<slug>.md`: render, parse, find the latest.

The layout is the one `preflights` writes (header comments, `# ADR: <title>`, bold metadata,
Context, Decision, Rationale, Alternatives Considered, Consequences, Changes in This Version,
Architecture Snapshot), with one correction: the Previous link points at the previous ADR's real
file in the same directory (`<uid>_<slug>.md`), not at `../<uid>.md`. ADRs are immutable; the
latest one (highest UID) holds the current snapshot, which is the source of truth.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from ..errors import parse_error
from ..snapshot import Snapshot
from ..text import slugify
from .markdown import comment, parse_snapshot, render_snapshot, section
from .uid import UID_RE, header_uid, is_uid

__all__ = ["ADR_DIR", "Adr", "AdrRef", "find_adrs", "latest_adr", "parse_adr", "read_adr", "render_adr"]

ADR_DIR = "docs/adr"
_FILE = re.compile(r"^(\d{8}T\d{6}\.\d{3}Z(?:-[0-9A-Fa-f]{4})?)(?:_.*)?\.md$")


class AdrRef(msgspec.Struct, frozen=True, kw_only=True):
    """An ADR file found on disk: its UID and its path."""

    uid: str
    path: Path


class Adr(msgspec.Struct, frozen=True, kw_only=True):
    """One architecture decision record, as written to (or read from) its file."""

    uid: str
    title: str
    category: str
    date: str
    snapshot: Snapshot
    previous_uid: str | None = None
    previous_file: str | None = None
    context: str = ""
    decision: str = ""
    rationale: str = ""
    alternatives: tuple[str, ...] = ()
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()
    neutral: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()

    @property
    def file_name(self) -> str:
        """`<uid>_<slug of the title>.md`."""
        return f"{self.uid}_{slugify(self.title)}.md"


def _bullets(items: tuple[str, ...]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else "_None_"


def render_adr(adr: Adr) -> str:
    """Return the markdown text of `adr`."""
    if adr.previous_uid:
        target = adr.previous_file or f"{adr.previous_uid}.md"
        previous = f"[{adr.previous_uid}]({target})"
    else:
        previous = "_None_"
    return f"""<!-- UID: {adr.uid} -->
<!-- Category: {adr.category} -->
<!-- Date: {adr.date} -->
<!-- Previous: {adr.previous_uid or "None"} -->

# ADR: {adr.title}

**Category:** {adr.category}
**Date:** {adr.date}
**Status:** Accepted
**Previous:** {previous}

## Context

{adr.context}

## Decision

{adr.decision}

## Rationale

{adr.rationale}

## Alternatives Considered

{_bullets(adr.alternatives)}

## Consequences

### Positive
{_bullets(adr.positive)}

### Negative
{_bullets(adr.negative)}

### Neutral
{_bullets(adr.neutral)}

## Changes in This Version

{_bullets(adr.changes)}

## Architecture Snapshot

{render_snapshot(adr.snapshot)}
"""


def _items(body: str | None) -> tuple[str, ...]:
    if not body:
        return ()
    return tuple(line[2:].strip() for line in body.splitlines() if line.startswith("- "))


def parse_adr(text: str, path: Path) -> Adr:
    """Parse an ADR's text (ours or one `preflights` wrote).

    Raises:
        ConfigError: CONFIG_INVALID when the UID header is missing or malformed.
    """
    uid = header_uid(text, path)
    title = re.search(r"^# ADR: (.+)$", text, re.MULTILINE)
    previous = comment(text, "Previous")
    consequences = section(text, "Consequences") or ""
    parts = dict(re.findall(r"^### (\w+)\n(.*?)(?=^### |\Z)", consequences, re.MULTILINE | re.DOTALL))
    link = re.search(r"^\*\*Previous:\*\* \[[^\]]*\]\(([^)]+)\)", text, re.MULTILINE)
    return Adr(
        uid=uid,
        title=title.group(1).strip() if title else uid,
        category=comment(text, "Category") or "",
        date=comment(text, "Date") or "",
        snapshot=parse_snapshot(section(text, "Architecture Snapshot") or ""),
        previous_uid=previous if previous and is_uid(previous) else None,
        previous_file=link.group(1) if link else None,
        context=section(text, "Context") or "",
        decision=section(text, "Decision") or "",
        rationale=section(text, "Rationale") or "",
        alternatives=_items(section(text, "Alternatives Considered")),
        positive=_items(parts.get("Positive")),
        negative=_items(parts.get("Negative")),
        neutral=_items(parts.get("Neutral")),
        changes=_items(section(text, "Changes in This Version")),
    )


def find_adrs(repo: Path) -> list[AdrRef]:
    """Return the ADR files of `repo`, oldest first (UID order). Other files are ignored."""
    folder = repo / ADR_DIR
    if not folder.is_dir():
        return []
    found: dict[str, AdrRef] = {}
    for path in folder.iterdir():
        match = _FILE.match(path.name)
        if match and path.is_file() and UID_RE.match(match.group(1)):
            uid = match.group(1).upper()
            # Two files for one UID cannot both be "the" ADR; keep the first by name, stably.
            if uid not in found or path.name < found[uid].path.name:
                found[uid] = AdrRef(uid=uid, path=path)
    return [found[uid] for uid in sorted(found)]


def latest_adr(repo: Path) -> AdrRef | None:
    """Return the ADR with the highest UID, or None when the repository has none."""
    refs = find_adrs(repo)
    return refs[-1] if refs else None


def read_adr(ref: AdrRef) -> Adr:
    """Read and parse an ADR file (blocking; call it from a worker thread)."""
    try:
        text = ref.path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise parse_error(ref.path, f"not UTF-8 text ({exc.reason})") from exc
    return parse_adr(text, ref.path)
