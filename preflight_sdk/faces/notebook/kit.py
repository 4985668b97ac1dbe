"""Small building blocks shared by the text and HTML renderers: escaping, badges, tables, sizes.

The HTML uses inline styles only (no `<style>` block, no script), so it looks the same in
JupyterLab, VS Code, nbviewer and saved notebooks, and degrades to plain tables on GitHub, which
strips styles. JupyterLab right-aligns table cells by default, so cells say `text-align:left`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

__all__ = [
    "COLOURS",
    "MARKS",
    "badge",
    "block",
    "columns",
    "esc",
    "human_ms",
    "json_text",
    "plural",
    "row",
    "shorten",
    "table",
    "wrap",
]

COLOURS = {
    "passed": "#1a7f37",
    "ok": "#1a7f37",
    "success": "#1a7f37",
    "healthy": "#1a7f37",
    "running": "#1a7f37",
    "completed": "#1a7f37",
    "removed": "#1a7f37",
    "stopped": "#57606a",
    "failed": "#cf222e",
    "error": "#cf222e",
    "unhealthy": "#cf222e",
    "exited": "#cf222e",
    "dead": "#cf222e",
    "missing": "#cf222e",
    "skipped": "#9a6700",
    "carried": "#0969da",
    "warning": "#9a6700",
    "starting": "#9a6700",
    "queued": "#0969da",
    "cancelled": "#9a6700",
    "interrupted": "#bc4c00",
}
MARKS = {"passed": "✓", "failed": "✗", "skipped": "-", "carried": "↺"}
_NEUTRAL = "#57606a"
_ONE_LINE = 72
_CELL = "text-align:left;vertical-align:top;padding:2px 8px"
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.45"
_PRE = (
    "margin:2px 0;padding:4px 6px;background:rgba(127,127,127,.08);border-radius:4px;"
    "font-size:12px;white-space:pre-wrap;word-break:break-word;max-height:24em;overflow:auto"
)


def esc(value: Any) -> str:
    """Escape any value for HTML text and attributes."""
    return html.escape(str(value), quote=True)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 case`, `2 cases`."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def human_ms(ms: float | None) -> str:
    """Milliseconds as `340 ms`, `2.3 s` or `1 m 05 s`."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} m {seconds:02d} s"


def shorten(text: str, limit: int = 120) -> str:
    """Cut `text` to one line of at most `limit` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def json_text(value: Any, *, limit: int = 4000) -> str:
    """Pretty JSON for a body or a value (strings stay as they are), cut at `limit` characters."""
    if isinstance(value, str):
        text = value
    else:
        try:
            raw = msgspec.json.encode(value)
        except (TypeError, msgspec.EncodeError):
            raw = None
        if raw is None:
            text = repr(value)
        else:
            # Short values stay on one line; longer ones are indented to be read.
            flat = msgspec.json.format(raw, indent=0).decode()
            text = flat if len(flat) <= _ONE_LINE else msgspec.json.format(raw, indent=2).decode()
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def badge(status: str, label: str | None = None) -> str:
    """A coloured pill with class `pf-badge pf-badge-<status>`."""
    colour = COLOURS.get(status, _NEUTRAL)
    return (
        f'<span class="pf-badge pf-badge-{esc(status)}" style="display:inline-block;padding:0 7px;'
        f"border-radius:9px;color:#fff;background:{colour};font-size:11px;font-weight:600;"
        f'line-height:17px">{esc(label or status)}</span>'
    )


def block(text: str, *, cls: str = "") -> str:
    """Preformatted, escaped text in a light box."""
    klass = f' class="{esc(cls)}"' if cls else ""
    return f'<pre{klass} style="{_PRE}">{esc(text)}</pre>'


def row(cells: Iterable[str], *, cls: str = "", style: str = "") -> str:
    """A table row of already-rendered HTML cells."""
    klass = f' class="{esc(cls)}"' if cls else ""
    extra = f' style="{style}"' if style else ""
    return f"<tr{klass}{extra}>" + "".join(f'<td style="{_CELL}">{c}</td>' for c in cells) + "</tr>"


def table(
    headers: Sequence[str], rows: Iterable[str], *, cls: str = "", ident: str = "", caption: str = ""
) -> str:
    """A compact table: escaped `headers`, rows rendered by `row`."""
    attrs = (f' id="{esc(ident)}"' if ident else "") + (f' class="{esc(cls)}"' if cls else "")
    head = "".join(f'<th style="{_CELL};font-weight:600">{esc(h)}</th>' for h in headers)
    cap = f'<caption style="text-align:left;font-weight:600">{esc(caption)}</caption>' if caption else ""
    return (
        f'<table{attrs} style="border-collapse:collapse;margin:4px 0">{cap}'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def wrap(inner: str, *, cls: str, ident: str = "") -> str:
    """The outer `<div class="pf-result …">` every rendering sits in."""
    attr = f' id="{esc(ident)}"' if ident else ""
    return f'<div class="pf-result {esc(cls)}"{attr} style="{_FONT}">{inner}</div>'


def columns(rows: Sequence[Sequence[str]], *, indent: str = "  ") -> list[str]:
    """Align text rows into columns (two spaces apart); trailing spaces trimmed."""
    if not rows:
        return []
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(max(len(r) for r in rows))]
    return [(indent + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r))).rstrip() for r in rows]
