"""What a case's page says while it runs: console messages, uncaught errors, failed requests, navigations.

The browser's own request for /favicon.ico (which no page asks for) is neither a console error nor
a failed request.

Playwright calls these listeners as events arrive; they only append (bounded), so a chatty page
cannot grow a case's memory or its report without limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.browser import ConsoleMessage, FailedRequest

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["PageWatch"]

_KEPT = 200  # events of each kind kept while the case runs; the report shows at most 30
_SHOWN = 30
_TEXT = 500


class PageWatch:
    """The events of one page (see the module docstring)."""

    def __init__(self, page: Page, redactor: Redactor) -> None:
        self.redactor = redactor
        self.console: list[ConsoleMessage] = []
        self.errors = 0  # console errors and uncaught exceptions, all of them (not only those kept)
        self.failed: list[FailedRequest] = []
        self.pages: list[str] = []
        self._answered: set[int] = (
            set()
        )  # requests with a response: a later abort of their body is no failure
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("requestfailed", self._on_request_failed)
        page.on("response", self._on_response)
        page.on("framenavigated", self._on_navigated)

    def _on_console(self, message: Any) -> None:
        kind = str(message.type)
        if kind == "verbose":
            return  # the browser's own advice ("[DOM] Input elements should have autocomplete…")
        where = message.location or {}
        if kind == "error" and str(where.get("url", "")).endswith("/favicon.ico"):
            return  # the browser's own request for an icon the page never asked for
        if kind == "error":
            self.errors += 1
        if len(self.console) < _KEPT:
            location = (
                f"{self.redactor.url(where['url'])}:{where.get('lineNumber', 0)}:{where.get('columnNumber', 0)}"
                if where.get("url")
                else None
            )
            self.console.append(ConsoleMessage(type=kind, text=self._text(message.text), location=location))

    def _on_page_error(self, error: Any) -> None:
        self.errors += 1
        if len(self.console) < _KEPT:
            name = getattr(error, "name", None) or "Error"
            text = f"{name}: {getattr(error, 'message', error)}"
            self.console.append(ConsoleMessage(type="pageerror", text=self._text(text)))

    def _on_request_failed(self, request: Any) -> None:
        if len(self.failed) < _KEPT and not _icon(request.url) and id(request) not in self._answered:
            self.failed.append(
                FailedRequest(
                    method=request.method,
                    url=self.redactor.url(request.url),
                    error=request.failure or "failed",
                    resource_type=request.resource_type,
                )
            )

    def _on_response(self, response: Any) -> None:
        if len(self._answered) < 10 * _KEPT:
            self._answered.add(id(response.request))
        if response.status >= 400 and len(self.failed) < _KEPT and not _icon(response.url):
            request = response.request
            self.failed.append(
                FailedRequest(
                    method=request.method,
                    url=self.redactor.url(response.url),
                    status=response.status,
                    resource_type=request.resource_type,
                )
            )

    def _on_navigated(self, frame: Any) -> None:
        if frame.parent_frame is None and len(self.pages) < _KEPT:  # the page itself, not an iframe
            url = self.redactor.url(frame.url)
            if not self.pages or self.pages[-1] != url:
                self.pages.append(url)

    def shown_console(self) -> list[ConsoleMessage]:
        """The messages a report shows: errors (and uncaught ones) first, then the others, in order."""
        bad = [m for m in self.console if m.type in ("error", "pageerror")]
        rest = [m for m in self.console if m.type not in ("error", "pageerror")]
        return (bad + rest)[:_SHOWN]

    def shown_failed(self) -> list[FailedRequest]:
        """The failed requests a report shows (the first 30)."""
        return self.failed[:_SHOWN]

    def _text(self, text: str) -> str:
        text = self.redactor.text(text)
        return text if len(text) <= _TEXT else text[:_TEXT] + f"… [{len(text) - _TEXT} more characters]"


def _icon(url: str) -> bool:
    return url.split("?", 1)[0].endswith("/favicon.ico")
