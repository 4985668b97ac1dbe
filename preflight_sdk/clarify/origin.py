"""Where a `ClarifyResult` came from: its repository, and how to continue its session.

`clarify` records both for every result it returns, so that in a notebook a displayed
`needs_clarification` result is a form whose Submit continues the same session with no wiring,
and the links to the files written resolve from the notebook's folder. The record sits in a side
table keyed by the result object, not in a field: the result's JSON, MCP and CLI shapes stay as
they are. An entry goes away with its result; a result decoded from JSON has none.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .questions import AnswerValue

if TYPE_CHECKING:
    from .results import ClarifyResult

__all__ = ["Origin", "Resume", "origin_of", "remember"]

Resume = Callable[[Mapping[str, AnswerValue], str], Awaitable["ClarifyResult"]]
"""Continues a session: `(answers, session_id) -> ClarifyResult`, like a second `clarify` call."""


@dataclass
class Origin:
    """What a result knows about where it came from.

    Attributes:
        root: the git repository the clarification writes into.
        resume: continues the result's session (same repository, same test hooks).
        form: a weak reference to the notebook form built for the result, so that every display
            of one result shows the same form (answers typed in one show in the others).
    """

    root: Path
    resume: Resume
    form: weakref.ref[Any] | None = None


# Keyed by id(): a result holds lists, so it is not hashable, and a weak-keyed dict needs a hash.
# The finalizer drops the entry when the result is collected, before its id can be reused.
_ORIGINS: dict[int, Origin] = {}


def remember(result: ClarifyResult, root: Path, resume: Resume) -> ClarifyResult:
    """Record where `result` came from; return `result` (for `return remember(...)`)."""
    key = id(result)
    _ORIGINS[key] = Origin(root=root, resume=resume)
    weakref.finalize(result, _ORIGINS.pop, key, None)
    return result


def origin_of(result: ClarifyResult) -> Origin | None:
    """Return where `result` came from, or None when unknown (e.g. decoded from JSON)."""
    return _ORIGINS.get(id(result))
