"""A failing browser step's evidence: a screenshot, the DOM around the selector, and its trace, on disk.

The files go in the run's folder (`cases/<caseId>/` for a case, `browser/step-N/` for a setup or
teardown step) and are listed among the run's artifacts with their digests. Text goes through the
project's redaction policy: the DOM excerpt, and every text entry of the trace (headers by name,
known secret values anywhere, form values typed into secret-named fields). A screenshot is pixels
and cannot be redacted: keep secrets out of test pages, or turn `trace` off for such a step.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from preflight_sdk.core.redaction import REDACTED, Redactor

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["DOM_CHARS", "dom_excerpt", "redact_trace", "screenshot", "thumbnail"]

DOM_CHARS = 4_000
_SCREENSHOT_MS = 5_000
# The small copy report.html and the notebook show inline: 40% of the viewport, as a JPEG.
_THUMBNAIL = {"format": "jpeg", "quality": 70}
_THUMBNAIL_SCALE = 0.4

# The element and its parent, so the excerpt shows where the element sits; the body when the
# selector matches nothing (there is then no better place to look).
_AROUND = (
    "e => { const p = e.parentElement;"
    " return (p && p !== document.body && p !== document.documentElement ? p : e).outerHTML }"
)


async def screenshot(page: Page, target: Path) -> bool:
    """Save the page's viewport as a PNG at `target`; False when the page cannot be captured."""
    from playwright.async_api import Error

    try:
        await anyio.to_thread.run_sync(lambda: target.parent.mkdir(parents=True, exist_ok=True))
        await page.screenshot(path=str(target), timeout=_SCREENSHOT_MS, animations="disabled")
    except Error:
        return False
    return True


async def thumbnail(page: Page, target: Path) -> bool:
    """Save a small JPEG of the viewport at `target` (Chromium scales it); False when it cannot."""
    import base64

    from playwright.async_api import Error

    size = page.viewport_size or {"width": 1280, "height": 720}
    clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": _THUMBNAIL_SCALE}
    try:
        session = await page.context.new_cdp_session(page)
        try:
            shot = await session.send("Page.captureScreenshot", {**_THUMBNAIL, "clip": clip})
        finally:
            await session.detach()
        data = base64.b64decode(shot["data"])
        await anyio.to_thread.run_sync(target.write_bytes, data)
    except (Error, KeyError, ValueError, OSError):
        return False
    return True


async def dom_excerpt(page: Page, selector: str | None, redactor: Redactor) -> tuple[str | None, str | None]:
    """The HTML around `selector` (or of the body when it matches nothing), cut and redacted.

    Returns the excerpt and the selector it is around (None when it is the body's).
    """
    from playwright.async_api import Error

    html: str | None = None
    around: str | None = None
    if selector is not None:
        try:
            target = page.locator(selector)
            if await target.count() > 0:
                html = await target.first.evaluate(_AROUND, timeout=_SCREENSHOT_MS)
                around = selector
        except Error:
            html = None
    if html is None:
        try:
            html = await page.evaluate(
                "() => document.body ? document.body.outerHTML : document.documentElement.outerHTML"
            )
        except Error:
            return None, None
    text = redactor.text(str(html))
    if len(text) > DOM_CHARS:
        text = text[:DOM_CHARS] + f"… [{len(text) - DOM_CHARS} more characters]"
    return text, around


def redact_trace(path: Path, redactor: Redactor) -> None:
    """Rewrite the trace at `path` with its text entries redacted (blocking: call in a thread)."""
    with zipfile.ZipFile(path) as source:
        entries = [(info, source.read(info)) for info in source.infolist()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for info, data in entries:
            out.writestr(info, _redacted_entry(info.filename, data, redactor))
    path.write_bytes(buffer.getvalue())


def _redacted_entry(name: str, data: bytes, redactor: Redactor) -> bytes:
    if name.endswith((".trace", ".network")):
        lines = []
        for line in data.decode(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                lines.append(redactor.text(line))
                continue
            lines.append(
                json.dumps(_redacted(_typed_secret(event, redactor), redactor), separators=(",", ":"))
            )
        return ("\n".join(lines) + "\n").encode()
    if name.endswith((".png", ".jpeg", ".jpg", ".webp")):
        return data
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data
    return redactor.text(text).encode()


def _typed_secret(event: Any, redactor: Redactor) -> Any:
    """A `fill` into a field whose selector names a secret (`#password`) keeps no value."""
    if isinstance(event, dict) and event.get("method") == "fill":
        params = event.get("params")
        if isinstance(params, dict) and redactor.secret(str(params.get("selector", ""))):
            event = {**event, "params": {**params, "value": REDACTED}}
    return event


def _redacted(value: Any, redactor: Redactor, depth: int = 0) -> Any:
    if depth > 40:
        return value
    if isinstance(value, str):
        return redactor.known(value)
    if isinstance(value, list):
        return [_redacted(item, redactor, depth + 1) for item in value]
    if isinstance(value, dict):
        name = value.get("name")
        if isinstance(name, str) and "value" in value and redactor.secret(name):
            # A header, a cookie or a form field: {name, value}.
            return {**value, "value": REDACTED}
        return {key: _redacted(item, redactor, depth + 1) for key, item in value.items()}
    return value
