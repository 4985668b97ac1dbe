"""Static renderings of result Structs: a compact text form and self-contained HTML.

Each result type may register a renderer pair with `renders(ResultType)`; anything without one
falls back to a generic field table. Nothing here imports IPython or ipywidgets: the HTML is
plain markup, so it survives in saved notebooks, nbviewer and GitHub.

Layer: a face (the top). Owns how results read as text and HTML, and what a Jupyter kernel
shows (`../kernel.py`); results reach it through the `render` entry point (`core/face_hooks.py`).
May import anything below and the notebook face (inside a kernel only); nothing below imports it.
"""

from __future__ import annotations

import functools
import html
import importlib
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from ..kit import esc, wrap

__all__ = ["mimebundle", "render_html", "render_text", "renders", "renders_line"]

T = TypeVar("T")
_TEXT: dict[type, Callable[[Any], str]] = {}
_HTML: dict[type, Callable[[Any], str]] = {}
REGISTERED_BY: dict[type, str] = {}  # each result type: the module that registered its renderers


def renders(kind: type[T]) -> Callable[[Callable[[T], tuple[str, str]]], Callable[[T], tuple[str, str]]]:
    """Register a function returning `(text, html)` for results of type `kind`."""

    def decorate(fn: Callable[[T], tuple[str, str]]) -> Callable[[T], tuple[str, str]]:
        REGISTERED_BY[kind] = fn.__module__
        _TEXT[kind] = lambda value: fn(value)[0]
        _HTML[kind] = lambda value: fn(value)[1]
        return fn

    return decorate


def renders_line(kind: type[T], *, cls: str) -> Callable[[Callable[[T], str]], Callable[[T], str]]:
    """Register a function returning the text of results of type `kind`; their HTML is that text,
    escaped, with a `<br>` between lines, in the result `<div>` of class `cls` (see `kit.wrap`)."""

    def decorate(fn: Callable[[T], str]) -> Callable[[T], str]:
        @functools.wraps(fn)  # registered as fn's, from fn's module
        def both(value: T) -> tuple[str, str]:
            text = fn(value)
            return text, wrap(esc(text).replace("\n", "<br>"), cls=cls)

        renders(kind)(both)
        return fn

    return decorate


# The view module that registers the renderers of each results module: a CLI command imports
# only the one its result needs (`preflight status` reads none of the run page's code), a kernel
# that meets a type outside the table loads them all. tests/unit/faces/notebook/test_static_views.py
# checks that every registered type's module is here, with the module that registers it.
VIEWS: dict[str, str] = {
    "preflight_sdk.core.results.lifecycle": "lifecycle_view",
    "preflight_sdk.core.results.mocks": "mocks_view",
    "preflight_sdk.core.results.recording": "recording_view",
    "preflight_sdk.core.results.run": "run_view",
    "preflight_sdk.core.results.runs": "runs_view",
    "preflight_sdk.core.results.saved": "saved_view",
    "preflight_sdk.verify.result": "verify_view",
    "preflight_sdk.clarify.results": "clarify_view",
}


def _load_renderers(kind: type) -> None:
    """Import the view module that registers `kind`'s renderers (all of them for a type outside `VIEWS`)."""
    if kind in _TEXT:
        return
    view = VIEWS.get(kind.__module__)
    importlib.import_module(f"{__name__}.{view}" if view else f"{__name__}.views")


def render_text(result: Any) -> str:
    """Return a compact, human-readable text form of `result`."""
    if result is None:
        return "none"  # an operation that found nothing (get_test of an unknown id)
    _load_renderers(type(result))
    fn = _TEXT.get(type(result))
    if fn is not None:
        return fn(result)
    return f"{type(result).__name__} " + msgspec.json.format(msgspec.json.encode(result), indent=2).decode()


def mimebundle(result: Any) -> dict[str, Any]:
    """What Jupyter shows for `result`: text and HTML, or inside a kernel a live widget (a form) or a
    test run's page (its report.html, see `report_view`).

    A widget or a page keeps the result's text beside it, for where they are not rendered (GitHub).
    """
    from preflight_sdk.faces.notebook import kernel

    text = render_text(result)
    live = kernel.live_bundle(result) or kernel.page_bundle(result)
    if live is not None:
        return {**live, "text/plain": text}
    return {"text/plain": text, "text/html": render_html(result)}


def render_html(result: Any) -> str:
    """Return a self-contained HTML rendering of `result`."""
    if result is None:
        return "<i>none</i>"
    _load_renderers(type(result))
    fn = _HTML.get(type(result))
    if fn is not None:
        return fn(result)
    body = msgspec.json.format(msgspec.json.encode(result), indent=2).decode()
    return f'<div class="pf-result"><b>{html.escape(type(result).__name__)}</b><pre>{html.escape(body)}</pre></div>'
