"""Renderings of the run store's results: the run list (coloured statuses), a diff side by side,
a cancel, an artifact, a prune and the operation log."""

from __future__ import annotations

from preflight_sdk.core.results.runs import (
    ArtifactContent,
    CancelResult,
    CaseChange,
    OperationLog,
    PruneResult,
    RunDiff,
    RunList,
)

from ..kit import badge, block, columns, esc, human_ms, plural, row, shorten, table, wrap
from . import renders, renders_line

__all__ = [
    "render_artifact",
    "render_cancel",
    "render_diff",
    "render_operations",
    "render_prune",
    "render_runs",
]

_MARK = {
    "passed": "✓",
    "failed": "✗",
    "running": "…",
    "queued": "…",
    "cancelled": "■",
    "interrupted": "!",
    "error": "!",
}


@renders(RunList)
def render_runs(r: RunList) -> tuple[str, str]:
    """One line per run, newest first."""
    if not r.runs:
        return "no runs recorded yet", wrap("<i>no runs recorded yet</i>", cls="pf-runs")
    lines = [
        [
            f"{_MARK.get(x.status, '•')} {x.status}",
            x.run_id,
            x.kind,
            x.started_at.replace("T", " ")[:19],
            human_ms(x.duration),
            f"{x.totals.passed}/{x.totals.total}" if x.totals.total else "",
            shorten(x.summary, 70),
        ]
        for x in r.runs
    ]
    text = "\n".join(columns(lines, indent=""))
    if r.next_before:
        text += f"\nmore: --before {r.next_before}"
    rows = [
        row(
            [
                badge(x.status),
                f"<code>{esc(x.run_id)}</code>",
                esc(x.kind),
                esc(x.started_at.replace("T", " ")[:19]),
                esc(human_ms(x.duration)),
                esc(f"{x.totals.passed}/{x.totals.total}" if x.totals.total else ""),
                esc(shorten(x.summary, 100))
                + (f" <i>(resumes {esc(x.resumed_from)})</i>" if x.resumed_from else ""),
            ],
            cls=f"pf-run-line pf-{x.status}",
        )
        for x in r.runs
    ]
    html = table(["status", "run", "kind", "started", "took", "passed", "summary"], rows, cls="pf-run-list")
    return text, wrap(html, cls="pf-runs")


def _changes(title: str, items: list[CaseChange]) -> list[str]:
    if not items:
        return []
    lines = [f"{title} ({len(items)}):"]
    for item in items:
        extra = ""
        if item.cause_changed is not None:
            extra = " (new cause)" if item.cause_changed else " (same cause)"
        lines.append(f"  {item.id}: {item.base or '-'} → {item.head or '-'}{extra}")
        # Every cause --json carries, in a line of its own: both when they differ, else the one.
        if item.base_cause and item.head_cause and item.base_cause != item.head_cause:
            lines.append(f"    was: {shorten(item.base_cause, 100)}")
            lines.append(f"    now: {shorten(item.head_cause, 100)}")
        elif item.head_cause or item.base_cause:
            lines.append(f"    cause: {shorten(item.head_cause or item.base_cause or '', 100)}")
    return lines


@renders(RunDiff)
def render_diff(d: RunDiff) -> tuple[str, str]:
    """The two runs side by side: each changed case with its outcome in base and head."""
    text = "\n".join(
        [
            f"{d.base} → {d.head}: {d.summary}",
            *_changes("newly failing", d.newly_failing),
            *_changes("fixed", d.fixed),
            *_changes("still failing", d.still_failing),
            *_changes("added", d.added),
            *_changes("removed", d.removed),
        ]
    )
    groups = [
        ("newly failing", d.newly_failing),
        ("fixed", d.fixed),
        ("still failing", d.still_failing),
        ("added", d.added),
        ("removed", d.removed),
    ]
    rows = [
        row(
            [
                esc(title),
                f"<code>{esc(c.id)}</code>",
                badge(c.base) if c.base else "",
                badge(c.head) if c.head else "",
                esc(shorten(c.base_cause or "", 80)),
                esc(shorten(c.head_cause or "", 80)) + (" <b>(new cause)</b>" if c.cause_changed else ""),
            ],
            cls="pf-diff-row",
        )
        for title, items in groups
        for c in items
    ]
    head = f"<div><code>{esc(d.base)}</code> → <code>{esc(d.head)}</code>: {esc(d.summary)}</div>"
    html = head + table(["change", "case", "base", "head", "base cause", "head cause"], rows, cls="pf-diff")
    return text, wrap(html, cls="pf-run-diff")


@renders(CancelResult)
def render_cancel(c: CancelResult) -> tuple[str, str]:
    """Whether this call stopped the run, and the run's status now."""
    verb = "cancelled" if c.cancelled else "not cancelled (already finished)"
    text = f"{c.run.run_id}: {verb}; status {c.run.status}: {c.run.summary}"
    return text, wrap(f"{badge(c.run.status)} <code>{esc(c.run.run_id)}</code> {esc(verb)}", cls="pf-cancel")


@renders(ArtifactContent)
def render_artifact(a: ArtifactContent) -> tuple[str, str]:
    """The file's content (text as it is; binary says its size)."""
    head = f"{a.name} ({a.content_type}, {plural(a.size, 'byte')}, sha256 {a.sha256[:12]}…)"
    body = a.content if a.encoding == "utf-8" else f"({a.size} bytes of binary content, base64 in --json)"
    more = f"\n… more from offset {a.next_offset}" if a.next_offset is not None else ""
    return f"{head}\n{body}{more}", wrap(f"<b>{esc(head)}</b>" + block(body[:20000]), cls="pf-artifact")


@renders_line(PruneResult, cls="pf-prune")
def render_prune(p: PruneResult) -> str:
    """How many runs were deleted."""
    return f"deleted {plural(len(p.deleted), 'run')}; {p.remaining} remain"


@renders(OperationLog)
def render_operations(o: OperationLog) -> tuple[str, str]:
    """Each call: when, which operation, how long, and how it ended."""
    lines = [
        [
            c.started_at.replace("T", " ")[:23],
            c.operation,
            human_ms(c.duration),
            c.outcome,
            c.error_code or "",
            c.run_id or "",
        ]
        for c in o.calls
    ]
    text = "\n".join(columns(lines, indent="")) or "no calls recorded yet"
    rows = [row([esc(cell) for cell in line]) for line in lines]
    return text, wrap(table(["when", "operation", "took", "outcome", "error", "run"], rows), cls="pf-calls")
