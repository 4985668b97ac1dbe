"""The timeline as HTML: lanes of absolutely placed bars and marks, positioned in percent.

The positions are in the markup (inline `left`/`width`), so the picture is there without
scripts; each bar also carries its start and end in ms (`data-s`, `data-e`) for the script that
zooms the axis to the tests.
"""

from __future__ import annotations

from .evidence import anchor, esc, human_ms
from .timeline import Lane, Timeline

__all__ = ["timeline_html"]

_LEGEND = (
    ("build", "build"), ("create", "create"), ("health", "health check"), ("suite", "suite"),
    ("passed", "passed case"), ("failed", "failed case"), ("skipped", "skipped case"), ("tail", "collecting evidence"),
)  # fmt: skip


def _pct(value: int, total: int) -> str:
    return f"{100 * value / total:.3f}".rstrip("0").rstrip(".") + "%"


def _lane(lane: Lane, total: int, *, max_spans: int) -> str:
    bars = []
    spans = lane.spans if len(lane.spans) <= max_spans else lane.spans[:max_spans]
    for span in spans:
        title = f"{span.label} · {human_ms(span.end - span.start)} (at {human_ms(span.start)})"
        style = f"left:{_pct(span.start, total)};width:{_pct(max(span.end - span.start, 0), total)}"
        attrs = (
            f'class="pfr-bar pfr-k-{span.kind}" style="{style}" data-s="{span.start}" data-e="{span.end}"'
            f' title="{esc(title)}"'
        )
        text = esc(span.label) if span.kind in ("phase", "suite", "build", "health", "create") else ""
        if span.target and span.kind == "failed":
            bars.append(f'<a {attrs} href="#{anchor(span.target)}">{text}</a>')
        else:
            bars.append(f"<span {attrs}>{text}</span>")
    for mark in lane.marks:
        cls = "pfr-mark pfr-m-failed" if mark.failed else "pfr-mark"
        title = f"{mark.label} (at {human_ms(mark.at)})"
        bars.append(
            f'<i class="{cls}" style="left:{_pct(mark.at, total)}" data-s="{mark.at}" data-e="{mark.at}"'
            f' title="{esc(title)}"></i>'
        )
    more = f" (+{len(lane.spans) - max_spans})" if len(lane.spans) > max_spans else ""
    return (
        f'<div class="pfr-row-tl pfr-g-{lane.group}"><div class="pfr-lane-title" title="{esc(lane.title)}">'
        f'{esc(lane.title)}{more}</div><div class="pfr-track">{"".join(bars)}</div></div>'
    )


def timeline_html(timeline: Timeline, *, max_spans: int = 5000) -> str:
    """The timeline section's body."""
    total = timeline.total
    if not timeline.lanes:
        return '<p class="pfr-empty">nothing to place on a timeline (no events and no case times were recorded)</p>'
    ticks = "".join(f'<span style="left:{q * 25}%">{human_ms(total * q // 4)}</span>' for q in range(5))
    lanes = "".join(_lane(lane, total, max_spans=max_spans) for lane in timeline.lanes)
    tests = [s for lane in timeline.lanes if lane.group == "suite" for s in lane.spans]
    window = ""
    if tests:
        start, end = min(s.start for s in tests), max(s.end for s in tests)
        window = f' data-tests="{start},{end}"'
    now = ""
    if timeline.failing:
        first = timeline.failing[0]
        late = ' style="left:auto;right:4px"' if first.at > total * 0.6 else ""
        now = (
            f'<div class="pfr-now" style="left:calc(160px + (100% - 170px) * {first.at / total:.5f})" data-s="{first.at}">'
            f"<span{late}>✗ first failure at {human_ms(first.at)}: {esc(first.label[:60])}</span></div>"
        )
    legend = "".join(f'<span><i class="pfr-k-{kind}"></i>{label}</span>' for kind, label in _LEGEND)
    legend += '<span><i style="background:#0969da"></i>mock request</span>'
    missing = "".join(f'<p class="pfr-note">not shown: {esc(m)}</p>' for m in timeline.missing)
    tools = (
        '<div class="pfr-tl-tools" hidden><span class="pfr-dim">axis:</span>'
        '<button type="button" data-zoom="all" aria-pressed="true">whole run</button>'
        '<button type="button" data-zoom="tests" aria-pressed="false">tests only</button></div>'
    )
    return (
        f'{tools}<div class="pfr-tl" data-total="{total}"{window}>'
        f'<div class="pfr-axis">{ticks}</div>{lanes}{now}</div>'
        f'<div class="pfr-legend">{legend}</div>{missing}'
    )
