"""What `clarify` and `read_architecture` return.

How they look is the notebook face's: `faces/notebook/static/clarify_view.py`.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from preflight_sdk.core.results.base import Part, Result

from .questions import AnswerValue, Question

__all__ = [
    "ArchitectureResult",
    "Artifact",
    "ArtifactType",
    "ClarifyResult",
    "Detected",
    "Progress",
    "Question",
]


class Progress(Part, frozen=True):
    """How far the session is: questions sent so far (at most 5) and how many are answered."""

    asked_so_far: int
    answered: int


# What a written file is: the ADR, the task, or the projection of the architecture state.
ArtifactType = Literal["adr", "task", "projection"]


class Artifact(Part, frozen=True):
    """A file the clarification wrote, relative to the repository root."""

    path: str
    type: ArtifactType
    uid: str | None = None


class Detected(Part, frozen=True):
    """An answer taken from the intention itself, so its question was not asked."""

    question_id: str
    label: str
    value: AnswerValue


class ClarifyResult(Result, frozen=True, weakref=True):
    """The outcome of one `clarify` call.

    `needs_clarification`: answer `questions` in the next call, with `session_id`. `completed`:
    `artifacts` lists the files written (the ADR when one was needed, `docs/CURRENT_TASK.md`, and
    `docs/ARCHITECTURE_STATE.md` when it was regenerated); `adr_reasons` says why an ADR was or
    was not written. `warning` is `llm_fallback` when a configured language model failed and the
    deterministic engine was used (`warning_reason` says why).

    In a Jupyter kernel (with the `notebook` extra), a `needs_clarification` result returned by
    `clarify` displays as a form whose Submit continues the session; `completed` shows the files
    with links. Elsewhere, and in saved notebooks, both render as static HTML and text.
    """

    status: Literal["needs_clarification", "completed"]
    session_id: str | None = None
    questions: list[Question] = msgspec.field(default_factory=list)
    progress: Progress | None = None
    artifacts: list[Artifact] = msgspec.field(default_factory=list)
    archived_task: str | None = None
    summary: str | None = None
    adr_reasons: list[str] = msgspec.field(default_factory=list)
    detected_from_intent: list[Detected] = msgspec.field(default_factory=list)
    warning: str | None = None
    warning_reason: str | None = None
    hint: str | None = None


class ArchitectureResult(Result, frozen=True):
    """The current architecture: the latest ADR's snapshot, `{category: {field: value}}`.

    `uid` is the latest ADR's UID (null when the repository has no ADR yet), `adr_file` its path.
    `source_file` is the projection `docs/ARCHITECTURE_STATE.md`, rewritten from that ADR when it
    was missing or stale (`regenerated`).
    """

    uid: str | None
    categories: dict[str, dict[str, str]]
    source_file: str
    adr_file: str | None = None
    regenerated: bool = False
