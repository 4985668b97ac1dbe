"""What a completion needs to know about the repository's artifacts, read in one go.

The latest ADR (its snapshot is the current architecture), the current task's text (it will be
archived), the projection's text (rewritten only when it differs), and the highest UID in use
(every new UID sorts after it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import msgspec

from preflight_sdk.core.errors import ConfigError

from ..snapshot import Snapshot
from ..text import slugify
from .adr import Adr, AdrRef, latest_adr, read_adr
from .files import read_text
from .projection import PROJECTION
from .task import ARCHIVE_DIR, CURRENT_TASK, archive_name, parse_task
from .uid import max_uid, next_uid

__all__ = ["RepoState", "archive_path", "load_state"]


class RepoState(msgspec.Struct, frozen=True, kw_only=True):
    """The artifacts a completion builds on."""

    latest: AdrRef | None
    adr: Adr | None
    task_text: str | None
    projection_text: str | None
    floor: str | None

    @property
    def snapshot(self) -> Snapshot:
        """The latest ADR's snapshot (empty when there is no ADR)."""
        return self.adr.snapshot if self.adr else {}


def load_state(root: Path) -> RepoState:
    """Read the repository's artifacts (blocking; call it from a worker thread)."""
    latest = latest_adr(root)
    adr = read_adr(latest) if latest else None
    task_text = read_text(root / CURRENT_TASK)
    archived = [p.name.split("_", 1)[0].removesuffix(".md") for p in (root / ARCHIVE_DIR).glob("*.md")]
    task_uid = re.search(r"<!-- UID: (\S+) -->", task_text or "")
    return RepoState(
        latest=latest,
        adr=adr,
        task_text=task_text,
        projection_text=read_text(root / PROJECTION),
        floor=max_uid([latest.uid if latest else None, task_uid.group(1) if task_uid else None, *archived]),
    )


def archive_path(
    root: Path, text: str, now: datetime, floor: str | None, suffix: Callable[[], str]
) -> tuple[str, str | None]:
    """Return where the current task is archived, and the new UID floor.

    A CURRENT_TASK.md without a UID header (written by hand) is archived under a fresh UID
    rather than refused: its content is never lost.
    """
    try:
        return f"{ARCHIVE_DIR}/{archive_name(parse_task(text, root / CURRENT_TASK))}", floor
    except ConfigError:
        uid = next_uid(now, floor, suffix)
        title = re.search(r"^# (.+)$", text, re.MULTILINE)
        return f"{ARCHIVE_DIR}/{uid}_{slugify(title.group(1) if title else '')}.md", uid
