"""How `ClarifyResult` and `ArchitectureResult` read: questions or written files (with links), decisions."""

from __future__ import annotations

import html
from pathlib import Path

from preflight_sdk.clarify.origin import origin_of
from preflight_sdk.clarify.questions import AnswerValue
from preflight_sdk.clarify.results import ArchitectureResult, ClarifyResult

from . import renders

__all__: list[str] = []


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
