"""What the e2e.yaml and test-file Structs share: their base, the scalar type, field metadata."""

from __future__ import annotations

import msgspec
from msgspec import Meta

__all__ = ["DURATION_PATTERN", "Duration", "Scalar", "Section"]

Scalar = str | int | float | bool
"""A plain YAML value: of an environment variable, a build argument, a template variable."""


class Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """Base of every section of e2e.yaml and of a test file: strict (an unknown key is an error), camelCase."""


# What `parse_duration` accepts, for editors: digits with units (combinable), or bare milliseconds.
# `pattern` only constrains strings, so the integer branch of a duration union is unaffected.
DURATION_PATTERN = r"^\s*(?:(?:\d+(?:\.\d+)?\s*(?:[mM][sS]|[sSmMhHdD])\s*)+|\d+(?:\.\d+)?\s*)$"


def Duration(description: str) -> Meta:
    """Return the metadata of a duration field (checked by the loader, patterned in the schema)."""
    return Meta(
        description=f"{description} A duration: '500ms', '5s', '2m', '1h' or milliseconds.",
        extra_json_schema={"pattern": DURATION_PATTERN, "minimum": 0},
        extra={"duration": True},
    )
