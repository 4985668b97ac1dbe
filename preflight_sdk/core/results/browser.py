"""What a failing browser case shows: its page at the failure, and the files kept of it.

A browser step's failure (and a failed test of a Playwright suite) carries `Failure.browser`:
the artifacts to fetch (a screenshot, the Playwright trace), the DOM around the selector the
step was waiting for, and what the page logged and failed to load. The container log lines and
mock requests of the same moment are in the failure's `diagnostics`, as for any case.
"""

from __future__ import annotations

import msgspec

from .base import Part

__all__ = ["BrowserEvidence", "ConsoleMessage", "FailedRequest"]


class ConsoleMessage(Part, frozen=True, kw_only=True):
    """A message the page logged (`console.*`), or an uncaught error (`type: pageerror`).

    Attributes:
        type: `error`, `warning`, `log`, `info`, `debug`… as the browser names it, or `pageerror`.
        text: the message (cut at 500 characters).
        location: `url:line:column` of the code that logged it, when known.
    """

    type: str
    text: str
    location: str | None = None


class FailedRequest(Part, frozen=True, kw_only=True):
    """A request of the page that got no answer, or an answer of 400 or more.

    Attributes:
        method: HTTP method.
        url: the URL requested (secret query parameters redacted).
        status: the status answered; 0 when the request failed without an answer.
        error: why it failed without an answer (`net::ERR_CONNECTION_REFUSED`).
        resource_type: `document`, `fetch`, `xhr`, `script`, `image`…
    """

    method: str
    url: str
    status: int = 0
    error: str | None = None
    resource_type: str | None = None


class BrowserEvidence(Part, frozen=True, kw_only=True):
    """The page of a failing browser case.

    Attributes:
        step: the action or check that failed (`click #place`, `expect text "Order confirmed"`).
        url: the page's URL when the case failed.
        title: its title then.
        selector: the selector the DOM excerpt is around.
        dom: the HTML around that selector (its element and its parent), or of the page's body when
            nothing matches it; cut at 4,000 characters.
        screenshot: the artifact with the screenshot at the failure (`cases/<caseId>/screenshot.png`);
            `get_artifact` returns it as an image.
        thumbnail: a small copy of the screenshot (a JPEG at 40%), the one report.html shows inline.
        aria_snapshot: a Playwright test's page as its error context recorded it (the ARIA tree:
            roles, names, values), cut at 4,000 characters.
        trace: the artifact with the Playwright trace (open it with `npx playwright show-trace`, or at
            trace.playwright.dev).
        attachments: other files the case left (a Playwright suite's video, its error context).
        console: what the page logged, errors first (at most 30).
        failed_requests: the page's requests that failed or answered 400 or more (at most 30).
    """

    step: str | None = None
    url: str | None = None
    title: str | None = None
    screenshot: str | None = None
    console: list[ConsoleMessage] = msgspec.field(default_factory=list)
    failed_requests: list[FailedRequest] = msgspec.field(default_factory=list)
    selector: str | None = None
    dom: str | None = None
    aria_snapshot: str | None = None
    trace: str | None = None
    thumbnail: str | None = None
    attachments: list[str] = msgspec.field(default_factory=list)
