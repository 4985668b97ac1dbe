"""Questions as clients see them, and the checking of answers against them.

A choice question lists its options, "Other (specify)" last. A custom value is given inline as
`"Other: <text>"`; choosing "Other (specify)" alone asks for the text in a follow-up question
`<id>__other` (which may also be answered in the same call). Choices are matched without regard
to case or punctuation, and a known product name is accepted for its question even when it is
not listed ("next-auth" for the library question gives "NextAuth.js").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import msgspec

from .errors import invalid_answer
from .text import one_line
from .vocab import OTHER, VOCABULARY, Spec

__all__ = ["AnswerValue", "Question", "build_question", "check_answer", "followup_for", "split_items"]

AnswerValue = str | list[str]
_OTHER_PREFIX = re.compile(r"^\s*other(?:\s*\(specify\))?\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)
_MAX_TEXT = 4000


class Question(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One clarification question.

    Attributes:
        id: the key to use in `answers`.
        type: `single_choice` (answer one option as a string), `multi_choice` (a list of options,
            between `minSelections` and `maxSelections`), or `free_text` (a string).
        question: the question to show.
        optional: whether it may be left unanswered.
        label: a short name for the answer ("Authentication strategy").
        options: the allowed answers of a choice question; "Other (specify)" is last.
        min_selections: fewest options a multi_choice answer may hold.
        max_selections: most options a multi_choice answer may hold.
        other_id: for a choice with "Other (specify)": the id of its free-text follow-up. Instead
            of using it you may answer `"Other: <your value>"` directly.
    """

    id: str
    type: Literal["single_choice", "multi_choice", "free_text"]
    question: str
    optional: bool
    label: str
    options: list[str] | None = None
    min_selections: int | None = None
    max_selections: int | None = None
    other_id: str | None = None


def build_question(spec: Spec, signals: frozenset[str], text: str | None = None) -> Question:
    """Return the question for `spec`, with options chosen from the repository's signals."""
    options: list[str] | None = None
    if spec.kind != "free_text":
        chosen = next((opts for signal, opts in spec.variants if signal in signals), spec.options)
        options = [*chosen, OTHER] if spec.allow_other else list(chosen)
    return Question(
        id=spec.id,
        type=spec.kind,
        question=text or spec.text,
        optional=spec.optional,
        label=spec.label,
        options=options,
        min_selections=spec.min_selections,
        max_selections=spec.max_selections,
        other_id=f"{spec.id}__other" if options and OTHER in options else None,
    )


def followup_for(question: Question) -> Question:
    """Return the required free-text question that asks for an "Other (specify)" value."""
    return Question(
        id=question.other_id or f"{question.id}__other",
        type="free_text",
        question=f"Please specify ({question.question.rstrip('?')}):",
        optional=False,
        label=f"{question.label} (other)",
    )


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9+#]", "", text.lower())


def _choice(question: Question, raw: str) -> str:
    """Return the canonical value of one choice (an option, OTHER, or a custom text)."""
    options = [o for o in question.options or [] if o != OTHER]
    text = raw.strip()
    custom = _OTHER_PREFIX.match(text)
    if custom and question.other_id:
        value = one_line(custom.group(1))
        if not value:
            return OTHER
        return value
    if text.lower() == OTHER.lower() and question.other_id:
        return OTHER
    for option in options:
        if option.lower() == text.lower() or _squash(option) == _squash(text):
            return option
    known = [
        value for term, qid, value in VOCABULARY if qid == question.id and _squash(term) == _squash(text)
    ]
    known += [value for _, qid, value in VOCABULARY if qid == question.id and _squash(value) == _squash(text)]
    if known:
        return next((o for o in options if _squash(o) == _squash(known[0])), known[0])
    raise invalid_answer(question.id, f"{raw!r} is not one of the options", allowed=options)


def split_items(text: str) -> list[str]:
    """Split a list given as text: by lines or semicolons, else by commas; bullets removed."""
    parts = re.split(r"[\n;]", text) if re.search(r"[\n;]", text) else text.split(",")
    items = [re.sub(r"^\s*(?:[-*]\s*(?:\[[ xX]\]\s*)?)?", "", p).strip() for p in parts]
    return [item for item in items if item]


def _check_paths(question: Question, text: str) -> str:
    for path in split_items(text.replace("`", "")):
        if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) or ".." in re.split(r"[/\\]", path):
            raise invalid_answer(
                question.id, f"{path!r} is not a path inside the repository (use relative paths)"
            )
    return text.strip()


def check_answer(question: Question, raw: object, *, paths: bool = False) -> AnswerValue | None:
    """Return the canonical answer to `question`, or None for an optional question left empty.

    Raises:
        InputError: INVALID_ANSWER naming the question, and the allowed values for a choice.
    """
    if question.type == "free_text":
        if isinstance(raw, list) and all(isinstance(r, str) for r in raw):
            raw = "\n".join(str(r) for r in raw)
        if not isinstance(raw, str):
            raise invalid_answer(question.id, f"expected text, got {type(raw).__name__}")
        if not raw.strip():
            if question.optional:
                return None
            raise invalid_answer(question.id, "this question needs a non-empty answer")
        if len(raw) > _MAX_TEXT:
            raise invalid_answer(question.id, f"the answer is longer than {_MAX_TEXT} characters")
        return _check_paths(question, raw) if paths else raw.strip()
    options = [o for o in question.options or [] if o != OTHER]
    if question.type == "single_choice":
        if isinstance(raw, list) and len(raw) == 1:
            raw = raw[0]
        if not isinstance(raw, str):
            raise invalid_answer(question.id, "expected exactly one option as a string", allowed=options)
        if not raw.strip() and question.optional:
            return None
        return _choice(question, raw)
    items: Sequence[object] = (
        split_items(raw) if isinstance(raw, str) else raw if isinstance(raw, list) else [raw]
    )
    if not all(isinstance(item, str) for item in items):
        raise invalid_answer(question.id, "expected a list of options", allowed=options)
    chosen: list[str] = []
    for item in items:
        value = _choice(question, str(item))
        if value not in chosen:
            chosen.append(value)
    if not chosen and question.optional:
        return None
    low, high = question.min_selections or 1, question.max_selections
    if len(chosen) < low or (high is not None and len(chosen) > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise invalid_answer(question.id, f"choose {bound} options (got {len(chosen)})", allowed=options)
    return chosen
