"""`docs/CURRENT_TASK.md` and its archives `docs/archive/task/<UID>_<slug>.md`.

The layout is the one `preflights` writes: header comments (UID, Created, Related ADR), the title,
then Objective, Context, Allowlist, Forbidden, Technical Constraints and Acceptance Criteria.
Unlike `preflights`, reading a task keeps every section (the allowlist and the criteria too).
Before a new task is written the current one is archived byte for byte under its own UID.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from ..text import slugify
from .markdown import comment, section
from .uid import header_uid

__all__ = ["ARCHIVE_DIR", "CURRENT_TASK", "Task", "archive_name", "parse_task", "render_task"]

CURRENT_TASK = "docs/CURRENT_TASK.md"
ARCHIVE_DIR = "docs/archive/task"


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """The execution brief an agent follows: what to do, where, and how to know it is done."""

    uid: str
    created: str
    title: str
    objective: str
    context: str
    allowlist: tuple[str, ...]
    forbidden: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    acceptance: tuple[str, ...] = ()
    related_adr: str | None = None


def render_task(task: Task) -> str:
    """Return the markdown text of `task`."""
    related = f"\n<!-- Related ADR: {task.related_adr} -->" if task.related_adr else ""
    forbidden = "\n".join(f"- `{p}`" for p in task.forbidden) if task.forbidden else "_None_"
    constraints = "\n".join(f"- {c}" for c in task.constraints) if task.constraints else "_None_"
    return f"""<!-- UID: {task.uid} -->
<!-- Created: {task.created} -->{related}

# {task.title}

## Objective

{task.objective}

## Context

{task.context}

## Allowlist

{chr(10).join(f"- `{p}`" for p in task.allowlist)}

## Forbidden

{forbidden}

## Technical Constraints

{constraints}

## Acceptance Criteria

{chr(10).join(f"- [ ] {c}" for c in task.acceptance)}
"""


def _paths(body: str | None) -> tuple[str, ...]:
    return tuple(re.findall(r"^- `([^`]+)`", body or "", re.MULTILINE))


def parse_task(text: str, path: Path) -> Task:
    """Parse a task file (ours or one `preflights` wrote).

    Raises:
        ConfigError: CONFIG_INVALID when the UID header is missing or malformed.
    """
    uid = header_uid(text, path)
    title = re.search(r"^# (.+)$", text, re.MULTILINE)
    constraints = section(text, "Technical Constraints") or ""
    criteria = section(text, "Acceptance Criteria") or ""
    return Task(
        uid=uid,
        created=comment(text, "Created") or "",
        title=title.group(1).strip() if title else "Untitled",
        objective=section(text, "Objective") or "",
        context=section(text, "Context") or "",
        allowlist=_paths(section(text, "Allowlist")),
        forbidden=_paths(section(text, "Forbidden")),
        constraints=tuple(line[2:].strip() for line in constraints.splitlines() if line.startswith("- ")),
        acceptance=tuple(m.strip() for m in re.findall(r"^- \[[ xX]\] (.+)$", criteria, re.MULTILINE)),
        related_adr=comment(text, "Related ADR"),
    )


def archive_name(task: Task) -> str:
    """`<task uid>_<slug of its title>.md`: where the task goes when a new one replaces it."""
    return f"{task.uid}_{slugify(task.title)}.md"
