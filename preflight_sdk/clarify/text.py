"""Text utilities shared by the artifact renderers and the engine: slugs, one-line values, matching.

Keyword matching is on word boundaries only (a term never matches inside a longer word: "build"
does not contain "ui", "feedback" does not contain "db", "prefix" does not contain "fix"). A term
may be followed by a plural `s`/`es`, and the words of a multi-word term may be joined by spaces,
dashes or slashes ("magic link", "magic-link").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import msgspec

__all__ = [
    "TermHit",
    "escape_block",
    "field_name",
    "find_terms",
    "has_term",
    "one_line",
    "slugify",
    "title_from",
]

_WORD = "a-z0-9"


class TermHit(msgspec.Struct, frozen=True, kw_only=True):
    """Where a vocabulary term was found in a text (character offsets into the original)."""

    term: str
    start: int
    end: int


@lru_cache(maxsize=2048)
def _pattern(term: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"[\s]+", term.strip().lower()) if w]
    body = r"[\s\-/]+".join(words)
    return re.compile(rf"(?<![{_WORD}]){body}(?:s|es)?(?![{_WORD}])", re.IGNORECASE)


def has_term(text: str, term: str) -> bool:
    """Return whether `term` occurs in `text` as whole words (case-insensitive)."""
    return _pattern(term).search(text) is not None


def find_terms(text: str, terms: Iterable[str]) -> list[TermHit]:
    """Return non-overlapping whole-word hits of `terms` in `text`, longest terms first.

    Longest-first means "next.js" wins over "next" and "github actions" over "github"; the hits
    come back ordered by position in the text.
    """
    taken: list[tuple[int, int]] = []
    hits: list[TermHit] = []
    for term in sorted(set(terms), key=lambda t: (-len(t), t)):
        for match in _pattern(term).finditer(text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            hits.append(TermHit(term=term, start=start, end=end))
    return sorted(hits, key=lambda h: (h.start, h.term))


def slugify(text: str) -> str:
    """Return the file-name slug used for ADR and archived task files.

    Lowercase, spaces become `_`, every other character outside `[a-z0-9_]` is dropped, at most
    50 characters, `untitled` when nothing is left ("Authentication: Strategy = OAuth" gives
    `authentication_strategy__oauth`). The slug is decorative; the UID is the identity.
    """
    slug = re.sub(r"[^a-z0-9_]", "", text.lower().replace(" ", "_"))[:50]
    return slug or "untitled"


def one_line(text: str, *, limit: int = 200) -> str:
    """Collapse whitespace to single spaces and cut to `limit` characters (with an ellipsis)."""
    line = " ".join(text.split())
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def field_name(text: str) -> str:
    """Return a snapshot field or category name that the markdown parsers accept (`\\w+`).

    Runs of other characters become one underscore: "Message Broker" gives `Message_Broker`.
    """
    name = re.sub(r"\W+", "_", text.strip()).strip("_")
    return name or "Value"


def title_from(intention: str) -> str:
    """Return a task title: the intention on one line, first letter capitalised, ≤ 80 characters."""
    title = " ".join(intention.split())
    if title:
        title = title[0].upper() + title[1:]
    if len(title) > 80:
        title = title[:77] + "..."
    return title


def escape_block(text: str) -> str:
    """Return user text safe to place under a `## Section` heading of an artifact.

    A line of user text that starts with `#` would read as a new heading (and end the section
    for every parser), so it is escaped as `\\#`.
    """
    lines = text.strip().splitlines()
    return "\n".join("\\" + line if line.lstrip().startswith("#") else line for line in lines)
