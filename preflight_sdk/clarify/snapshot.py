"""The architecture snapshot: schema v1 categories and fields, plus the `Other` wildcard.

A snapshot maps category → field → `Entry` (value and the UID of the ADR that set it). Merging a
decision into a snapshot never drops a category or a field; it only adds fields or replaces
values, so applying the same decision twice gives the same snapshot. Names are matched without
regard to case and come out in the schema's spelling.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import msgspec

from .text import field_name, one_line

__all__ = [
    "SCHEMA_V1",
    "Change",
    "DecisionItem",
    "Entry",
    "Snapshot",
    "changes",
    "clean_categories",
    "merge",
    "normalize_item",
]

SCHEMA_V1: dict[str, tuple[str, ...]] = {
    "Frontend": ("Framework", "Routing", "Styling", "UI_Library", "State_Management"),
    "Backend": ("Language", "Framework", "API_Style", "Validation"),
    "Database": ("Type", "ORM", "Migrations"),
    "Authentication": ("Strategy", "Library", "Token_Storage"),
    "Infra": ("Hosting", "CI_CD", "Observability", "Caching"),
    "Other": ("*",),
}


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded value and the ADR that recorded it (None when the source named no ADR)."""

    value: str
    adr: str | None = None


Snapshot = dict[str, dict[str, Entry]]


class DecisionItem(msgspec.Struct, frozen=True, kw_only=True):
    """One field a decision sets.

    Attributes:
        category: a schema category (any case) or `Other`.
        field: a field of that category (any name under `Other`).
        value: the chosen value, one line.
        question: the question it answers, when it came from one.
        source: where the value came from: an answer, the intention, or a language model.
        structural: whether recording it is an architectural decision on its own (False for
            the generic "approach" text, which only becomes an ADR when something else asks).
    """

    category: str
    field: str
    value: str
    question: str | None = None
    source: Literal["answer", "intent", "llm"] = "answer"
    structural: bool = True


class Change(msgspec.Struct, frozen=True, kw_only=True):
    """How one decision item compares with the snapshot it is merged into."""

    kind: Literal["added", "modified", "unchanged"]
    category: str
    field: str
    value: str
    previous: str | None = None

    def line(self) -> str:
        """Return the ADR "Changes in This Version" line for this change."""
        if self.kind == "added":
            return f"Added: {self.category}.{self.field} = {self.value}"
        if self.kind == "modified":
            return f"Modified: {self.category}.{self.field} = {self.value} (was: {self.previous})"
        return f"Reaffirmed: {self.category}.{self.field} = {self.value}"


def normalize_item(item: DecisionItem) -> DecisionItem | None:
    """Return `item` with schema spelling, or None when its category or field is not in the schema.

    Under `Other` any field is accepted, reduced to `\\w+` characters so the markdown parsers can
    read it back. Values are reduced to one line.
    """
    category = next((c for c in SCHEMA_V1 if c.lower() == item.category.strip().lower()), None)
    value = one_line(item.value)
    if category is None or not value:
        return None
    fields = SCHEMA_V1[category]
    if fields == ("*",):
        name = field_name(item.field)
    else:
        found = next((f for f in fields if f.lower() == field_name(item.field).lower()), None)
        if found is None:
            return None
        name = found
    return msgspec.structs.replace(item, category=category, field=name, value=value)


def _find(snapshot: Mapping[str, Mapping[str, Entry]], category: str, field: str) -> tuple[str, str] | None:
    for cat, fields in snapshot.items():
        if cat.lower() == category.lower():
            for name in fields:
                if name.lower() == field.lower():
                    return cat, name
            return cat, field
    return None


def changes(snapshot: Mapping[str, Mapping[str, Entry]], items: Iterable[DecisionItem]) -> list[Change]:
    """Compare each (normalized) item with `snapshot`: added, modified, or unchanged."""
    out: list[Change] = []
    for item in items:
        where = _find(snapshot, item.category, item.field)
        entry = snapshot[where[0]].get(where[1]) if where else None
        if entry is None:
            out.append(Change(kind="added", category=item.category, field=item.field, value=item.value))
        elif entry.value != item.value:
            out.append(
                Change(
                    kind="modified",
                    category=item.category,
                    field=item.field,
                    value=item.value,
                    previous=entry.value,
                )
            )
        else:
            out.append(Change(kind="unchanged", category=item.category, field=item.field, value=item.value))
    return out


def merge(
    snapshot: Mapping[str, Mapping[str, Entry]], items: Iterable[DecisionItem], adr: str | None
) -> Snapshot:
    """Return a new snapshot: `snapshot` with every item set, each referencing ADR `adr`.

    Every category and field of `snapshot` is kept. An existing category or field is matched
    without regard to case and keeps its spelling. Sorted by category, then field (the order
    the artifact files use).
    """
    merged: dict[str, dict[str, Entry]] = {cat: dict(fields) for cat, fields in snapshot.items()}
    for item in items:
        where = _find(merged, item.category, item.field)
        cat, name = where if where else (item.category, item.field)
        merged.setdefault(cat, {})[name] = Entry(value=item.value, adr=adr)
    return {cat: dict(sorted(merged[cat].items())) for cat in sorted(merged)}


def clean_categories(snapshot: Mapping[str, Mapping[str, Entry]]) -> dict[str, dict[str, str]]:
    """Return `{category: {field: value}}` without the ADR references."""
    return {cat: {name: entry.value for name, entry in fields.items()} for cat, fields in snapshot.items()}
