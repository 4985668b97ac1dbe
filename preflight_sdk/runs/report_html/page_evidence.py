"""A browser failure's page in the report: the screenshot inline, the trace, the console, the DOM.

The screenshot is shown small, inline (its thumbnail as a `data:` URI, so the page stays one file
that needs nothing else to show it) and links to the full-size file of the run's folder; the
trace is a file to download. In a notebook the link becomes a toggle that shows the full image
inline (`embed_full_screenshots`), since a notebook cannot open the run's files by a relative link.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from pathlib import Path

from preflight_sdk.core.results.browser import BrowserEvidence
from preflight_sdk.core.results.run import RunResult

__all__ = ["browser_panel", "embed_full_screenshots"]

# Past this size the screenshot itself is not put in the page when it has no thumbnail (a
# Playwright suite's): the link to the file stays.
_INLINE_SCREENSHOT = 300_000
# A notebook shows at most this much of full screenshots inline, in all.
_FULL_IN_NOTEBOOK = 3_000_000


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _data_uri(path: str | None, kind: str, limit: int) -> str | None:
    if path is None:
        return None
    try:
        target = Path(path)
        if target.stat().st_size > limit:
            return None
        data = target.read_bytes()
    except OSError:
        return None
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def _shot(evidence: BrowserEvidence, files: Mapping[str, str]) -> str:
    if evidence.screenshot is None:
        return '<p class="pfr-empty">no screenshot (the page could not be captured)</p>'
    thumb = _data_uri(files.get(evidence.thumbnail or ""), "image/jpeg", _INLINE_SCREENSHOT)
    thumb = thumb or _data_uri(files.get(evidence.screenshot), "image/png", _INLINE_SCREENSHOT)
    href = _esc(evidence.screenshot)
    if thumb is None:
        return f'<p><a href="{href}">the screenshot at the failure</a> <small>({href})</small></p>'
    return (
        f'<a class="pfr-shot" href="{href}" target="_blank" rel="noopener" title="the full screenshot">'
        f'<img src="{thumb}" alt="the page when the case failed (click for the full size)" loading="lazy"></a>'
    )


def _files(evidence: BrowserEvidence) -> str:
    links = []
    if evidence.screenshot:
        links.append(f'<a href="{_esc(evidence.screenshot)}">screenshot.png</a>')
    if evidence.trace:
        links.append(
            f'<a href="{_esc(evidence.trace)}" download>trace.zip</a> '
            "<small>(<code>npx playwright show-trace trace.zip</code>, or trace.playwright.dev)</small>"
        )
    links += [f'<a href="{_esc(name)}">{_esc(name.rsplit("/", 1)[-1])}</a>' for name in evidence.attachments]
    return f'<p class="pfr-note">files: {" · ".join(links)}</p>' if links else ""


def _console(evidence: BrowserEvidence) -> str:
    if not evidence.console:
        return '<p class="pfr-empty">the page logged nothing</p>'
    rows = []
    for message in evidence.console:
        bad = message.type in ("error", "pageerror")
        where = f" <small>{_esc(message.location)}</small>" if message.location else ""
        text = f"[{_esc(message.type)}] {_esc(message.text)}{where}"
        rows.append(f'<li class="pfr-err">{text}</li>' if bad else f"<li>{text}</li>")
    return f'<ul class="pfr-console">{"".join(rows)}</ul>'


def _requests(evidence: BrowserEvidence) -> str:
    if not evidence.failed_requests:
        return '<p class="pfr-empty">no request failed</p>'
    rows = []
    for request in evidence.failed_requests:
        answer = _esc(request.status or request.error or "failed")
        cells = (
            f"<code>{_esc(request.method)}</code>",
            _esc(request.url),
            f'<span class="pfr-badge pfr-b-failed">{answer}</span>',
            _esc(request.resource_type or ""),
        )
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return f'<table class="pfr-requests"><tbody>{"".join(rows)}</tbody></table>'


def browser_panel(evidence: BrowserEvidence, files: Mapping[str, str]) -> str:
    """The page panel of a failed browser case; `files` maps the run's artifact names to their paths."""
    where = f"<code>{_esc(evidence.url)}</code>" if evidence.url else "the page"
    title = f" “{_esc(evidence.title)}”" if evidence.title else ""
    step = f"<b>failed at:</b> <code>{_esc(evidence.step)}</code> · " if evidence.step else ""
    dom = ""
    if evidence.dom:
        around = (
            f" around <code>{_esc(evidence.selector)}</code>" if evidence.selector else " (the page's body)"
        )
        dom = f"<details><summary>DOM{around}</summary><pre>{_esc(evidence.dom)}</pre></details>"
    if evidence.aria_snapshot:
        dom += (
            "<details><summary>the page (Playwright's ARIA snapshot)</summary>"
            f"<pre>{_esc(evidence.aria_snapshot)}</pre></details>"
        )
    return (
        f'<div class="pfr-panel pfr-browser"><h4>Page</h4><p class="pfr-note">{step}{where}{title}</p>'
        f'<div class="pfr-grid"><div>{_shot(evidence, files)}{_files(evidence)}</div>'
        f"<div><h5>Console</h5>{_console(evidence)}<h5>Failed requests</h5>{_requests(evidence)}</div></div>"
        f"{dom}</div>"
    )


_LINKED = re.compile(r'<a class="pfr-shot" href="([^"]+)"[^>]*>(<img [^>]*>)</a>')


def embed_full_screenshots(page: str, result: RunResult) -> str:
    """`page` with each inline screenshot a toggle that shows the full image in place (for notebooks)."""
    files = {a.name: a.path for a in result.artifacts}
    budget = [_FULL_IN_NOTEBOOK]

    def toggle(match: re.Match[str]) -> str:
        name = html.unescape(match.group(1))
        full = _data_uri(files.get(name), "image/png", budget[0])
        if full is None:
            return match.group(0)
        budget[0] -= len(full)
        return (
            f'<details class="pfr-shot"><summary>{match.group(2)}</summary>'
            f'<img class="pfr-shot-full" src="{full}" alt="the full screenshot"></details>'
        )

    return _LINKED.sub(toggle, page)
