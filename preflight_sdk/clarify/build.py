"""Build the ADR and the task from a decision (pure: the caller supplies UIDs and the time)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from .artifacts.adr import Adr
from .artifacts.task import Task
from .artifacts.uid import utc
from .decision import Decision
from .snapshot import Entry, merge
from .text import escape_block, one_line, title_from

__all__ = ["Clarified", "build_adr", "build_task", "iso_millis"]

_SOURCE = {
    "answer": "chosen in the clarification",
    "intent": "stated in the intention",
    "llm": "derived by a language model from the answers",
}


def iso_millis(moment: datetime) -> str:
    """`2026-01-08T14:35:12.237Z`: the task's Created stamp."""
    when = utc(moment)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


class Clarified(msgspec.Struct, frozen=True, kw_only=True):
    """What both records of a completed clarification are built from, the ADR and the task alike.

    Attributes:
        intention: the change as the user stated it.
        context: the user's background text, if any.
        decision: what the answers decided.
        now: when the clarification completed (the ADR's Date, the task's Created).
    """

    intention: str
    context: str | None
    decision: Decision
    now: datetime


def build_adr(
    clarified: Clarified,
    *,
    uid: str,
    reasons: list[str],
    snapshot: Mapping[str, Mapping[str, Entry]],
    previous_uid: str | None,
    previous_file: str | None,
) -> Adr:
    """Return the ADR recording `clarified.decision` on top of `snapshot` (the latest ADR's)."""
    intention, context, decision = clarified.intention, clarified.context, clarified.decision
    recorded = [c for c in decision.changes if c.kind != "unchanged"] or decision.changes
    keys = {(c.category, c.field) for c in recorded}
    items = [i for i in decision.items if (i.category, i.field) in keys]
    first = recorded[0]
    categories = list(dict.fromkeys(i.category for i in items))
    text = (
        f"A decision is needed for {' and '.join(categories)}.\n\nUser intention: {escape_block(intention)}"
    )
    if context and context.strip():
        text += f"\n\nAdditional context: {one_line(context, limit=600)}"
    blocks = []
    for category in categories:
        lines = [f"We have decided on the following for {category}:"]
        lines += [f"- {i.field}: {i.value}" for i in items if i.category == category]
        blocks.append("\n".join(lines))
    why = ["Where each value comes from:"]
    why += [f"- {i.category}.{i.field} = {i.value}: {_SOURCE[i.source]}" for i in items]
    why.append("")
    why.append("ADR needed because: " + "; ".join(reasons) + ".")
    changed = [c for c in recorded if c.kind == "modified"]
    negative = tuple(
        f"Code relying on {c.category}.{c.field} = {c.previous} must move to {c.value}" for c in changed
    )
    fields = ", ".join(f"{i.category}.{i.field}" for i in items)
    return Adr(
        uid=uid,
        title=f"{first.category}: {first.field} = {first.value}",
        category=first.category,
        date=utc(clarified.now).strftime("%Y-%m-%d"),
        snapshot=merge(snapshot, items, uid),
        previous_uid=previous_uid,
        previous_file=previous_file,
        context=text,
        decision="\n\n".join(blocks),
        rationale="\n".join(why),
        alternatives=tuple(decision.alternatives) or ("No alternatives explicitly considered",),
        positive=("Later tasks read this decision from docs/ARCHITECTURE_STATE.md instead of guessing",),
        negative=negative,
        neutral=(f"Changing {fields} later takes a new ADR",),
        changes=tuple(c.line() for c in recorded),
    )


def build_task(clarified: Clarified, *, uid: str, adr_uid: str | None) -> Task:
    """Return the CURRENT_TASK for the intention and its decision."""
    intention, context, decision = clarified.intention, clarified.context, clarified.decision
    objective = escape_block(intention)
    if decision.items:
        groups: dict[str, list[str]] = {}
        for item in decision.items:
            groups.setdefault(item.category, []).append(f"{item.field}={item.value}")
        objective += "\n\nDecision: " + "; ".join(f"{c} - {', '.join(f)}" for c, f in groups.items())
    body = escape_block(intention)
    if context and context.strip():
        body += "\n\n" + escape_block(context)
    if adr_uid:
        body += f"\n\nRelated ADR: {adr_uid}"
    acceptance = decision.acceptance or [
        f"{one_line(intention, limit=120)}: implemented and working end to end",
        "The project's existing tests still pass",
    ]
    return Task(
        uid=uid,
        created=iso_millis(clarified.now),
        title=title_from(intention),
        objective=objective,
        context=body,
        allowlist=tuple(decision.allowlist),
        forbidden=tuple(decision.forbidden),
        constraints=tuple(decision.constraints),
        acceptance=tuple(acceptance),
        related_adr=adr_uid,
    )
