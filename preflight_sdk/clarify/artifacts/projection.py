"""`docs/ARCHITECTURE_STATE.md`: a projection of the latest ADR's snapshot, never a source of truth.

It is rendered from the latest ADR and rewritten whenever it is missing or differs from that
rendering (stale, edited by hand, or written for an older ADR), so it is always safe to delete.
The text is the one `preflights` writes, so its parser (and its MCP `read_architecture`) reads it.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..errors import parse_error
from ..snapshot import Snapshot
from .markdown import comment, parse_snapshot, render_snapshot, section

__all__ = ["PROJECTION", "Projection", "parse_projection", "render_projection"]

PROJECTION = "docs/ARCHITECTURE_STATE.md"


class Projection(msgspec.Struct, frozen=True, kw_only=True):
    """The projection's content: the ADR it was rendered from and that ADR's snapshot."""

    uid: str | None
    snapshot: Snapshot


def render_projection(uid: str | None, snapshot: Snapshot) -> str:
    """Return the projection text for the ADR `uid` and its snapshot."""
    return f"""<!-- UID: {uid} -->
<!-- Schema: v1 -->

# Architecture State

Current architecture decisions snapshot.

## Categories

{render_snapshot(snapshot)}
"""


def parse_projection(text: str, path: Path) -> Projection:
    """Parse a projection file (used only to report on it; decisions come from ADRs).

    Raises:
        ConfigError: CONFIG_INVALID when the UID header is missing.
    """
    uid = comment(text, "UID")
    if uid is None:
        raise parse_error(path, "missing `<!-- UID: ... -->` header", line=1)
    return Projection(
        uid=None if uid == "None" else uid, snapshot=parse_snapshot(section(text, "Categories") or "")
    )
