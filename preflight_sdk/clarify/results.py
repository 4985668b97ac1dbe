"""What `clarify` and `read_architecture` return, and how those results look in a notebook."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..display import renders
from ..progress import in_kernel
from ..results.base import Result
from .origin import origin_of
from .questions import AnswerValue, Question

__all__ = ["ArchitectureResult", "Artifact", "ClarifyResult", "Detected", "Progress", "Question"]


class _Part(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A member of a result."""


class Progress(_Part, frozen=True):
    """How far the session is: questions sent so far (at most 5) and how many are answered."""

    asked_so_far: int
    answered: int


class Artifact(_Part, frozen=True):
    """A file the clarification wrote, relative to the repository root."""

    path: str
    type: Literal["adr", "task", "projection"]
    uid: str | None = None


class Detected(_Part, frozen=True):
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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = super()._repr_mimebundle_(include, exclude)
        form = _live_form(self)
        if form is None:
            return bundle
        # The form's widget, with the result's text where widgets are not rendered (GitHub).
        return {**form.widget._repr_mimebundle_(), "text/plain": bundle["text/plain"]}


def _live_form(result: ClarifyResult) -> Any:
    """The notebook form for `result` inside a kernel, or None (no kernel, no ipywidgets, done)."""
    if result.status != "needs_clarification" or not in_kernel():
        return None
    try:
        from .widgets import form_for

        return form_for(result)
    except ImportError:  # the notebook extra (ipywidgets) is not installed
        return None


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


def _value(value: AnswerValue) -> str:
    return ", ".join(value) if isinstance(value, list) else value


def _href(result: ClarifyResult, path: str) -> str:
    """Where a link to an artifact points.

    Relative to the working directory (a notebook's own folder) when the file is below it, so
    Jupyter opens it; a `file:` URI when it is elsewhere; the repository-relative path when the
    repository is unknown (a result decoded from JSON).
    """
    origin = origin_of(result)
    if origin is None:
        return path
    target = (origin.root / path).resolve()
    try:
        return target.relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):  # outside the working directory, or that was deleted
        return target.as_uri()


@renders(ClarifyResult)
def _render_clarify(result: ClarifyResult) -> tuple[str, str]:
    esc = html.escape
    if result.status == "needs_clarification":
        asked = result.progress.asked_so_far if result.progress else len(result.questions)
        head = f"Clarification needed (session {result.session_id}, {asked} of at most 5 questions asked)"
        lines, items = [head], []
        for n, q in enumerate(result.questions, 1):
            opts = f" options: {' | '.join(q.options)}" if q.options else ""
            flag = " (optional)" if q.optional else ""
            lines.append(f"  {n}. [{q.id}] {q.question}{flag}{opts}")
            opt_html = f"<br><small>{esc(' | '.join(q.options))}</small>" if q.options else ""
            items.append(f"<li><code>{esc(q.id)}</code> {esc(q.question)}{esc(flag)}{opt_html}</li>")
        detected = [f"{d.label} = {_value(d.value)}" for d in result.detected_from_intent]
        if detected:
            lines.append("  detected from the intention: " + "; ".join(detected))
        body = f"<b>{esc(head)}</b><ol>{''.join(items)}</ol>"
        if detected:
            body += f"<p>Detected from the intention: {esc('; '.join(detected))}</p>"
    else:
        head = f"Clarification completed: {result.summary or ''}"
        lines = [head] + [
            f"  {a.type:<10} {a.path}" + (f" ({a.uid})" if a.uid else "") for a in result.artifacts
        ]
        rows = "".join(
            f'<li>{esc(a.type)}: <a href="{esc(_href(result, a.path))}" target="_blank">{esc(a.path)}</a></li>'
            for a in result.artifacts
        )
        body = f"<b>{esc(head)}</b><ul>{rows}</ul>"
    if result.warning:
        lines.append(f"  warning: {result.warning} ({result.warning_reason or ''})")
        body += f"<p><i>warning: {esc(result.warning)} ({esc(result.warning_reason or '')})</i></p>"
    return "\n".join(lines), f'<div class="pf-result pf-clarify">{body}</div>'


@renders(ArchitectureResult)
def _render_architecture(result: ArchitectureResult) -> tuple[str, str]:
    esc = html.escape
    head = f"Architecture (ADR {result.uid})" if result.uid else "Architecture: no ADR yet"
    lines = [head]
    rows: list[str] = []
    for category, fields in result.categories.items():
        lines.append(f"  {category}: " + ", ".join(f"{k} = {v}" for k, v in fields.items()))
        rows.extend(
            f"<tr><td>{esc(category)}</td><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in fields.items()
        )
    table = (
        f"<table><tr><th>Category</th><th>Field</th><th>Value</th></tr>{''.join(rows)}</table>"
        if rows
        else ""
    )
    return "\n".join(lines), f'<div class="pf-result pf-architecture"><b>{esc(head)}</b>{table}</div>'
