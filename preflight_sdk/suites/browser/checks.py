"""A browser step's page expectations: `text`, `title`, `url`, `elements`, `consoleErrors`.

Like Playwright's web-first assertions they wait: the page is read again every 100 ms until every
check holds or `expectTimeout` passes (a confirmation that appears after a fetch is not a
failure), and the last reading is what the report shows.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from preflight_sdk.config.browser import ElementExpect
from preflight_sdk.config.testfile import Expect
from preflight_sdk.core.assertions import MISSING, AssertionResult, check, passed, result_at

from ..yaml.actions import count_check
from .watch import PageWatch

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

__all__ = ["has_page_checks", "page_checks", "wait_for_page_checks"]

_POLL = 0.1
_READ_MS = 1_000  # one reading of an element may wait this long for it (it is read again anyway)
_SHOWN_TEXT = 500


def has_page_checks(expect: Expect | None) -> bool:
    """Whether `expect` checks the page (anything but `status` and `mock`)."""
    if expect is None:
        return False
    return bool(expect.text or expect.title is not None or expect.url is not None or expect.elements) or (
        expect.console_errors is not None
    )


async def wait_for_page_checks(
    page: Page, expect: Expect, watch: PageWatch, *, timeout: float
) -> tuple[list[AssertionResult], str | None]:
    """Check the page until every expectation holds or `timeout` seconds pass.

    Returns the last results and the selector of the first failing element check (for the DOM
    excerpt), or None.
    """
    deadline = time.monotonic() + timeout
    while True:
        results, selector = await page_checks(page, expect, watch)
        if passed(results) or time.monotonic() >= deadline:
            return results, selector
        await anyio.sleep(min(_POLL, max(0.0, deadline - time.monotonic())))


async def page_checks(
    page: Page, expect: Expect, watch: PageWatch
) -> tuple[list[AssertionResult], str | None]:
    """One reading of every page expectation; see `wait_for_page_checks`."""
    from playwright.async_api import Error

    results: list[AssertionResult] = []
    failing_selector: str | None = None
    wanted = [expect.text] if isinstance(expect.text, str) else list(expect.text or [])
    if wanted:
        try:
            body = await page.locator("body").inner_text(timeout=_READ_MS)
        except Error as exc:
            body = None
            results += [_unread("text", text, exc) for text in wanted]
        if body is not None:
            results += [_text_check(body, text) for text in wanted]
    if expect.title is not None:
        results += check(await page.title(), expect.title, "title")
    if expect.url is not None:
        results += _url_check(page.url, expect.url)
    for selector, spec in expect.elements.items():
        found = await _element_checks(page.locator(selector), selector, spec)
        if failing_selector is None and not passed(found):
            failing_selector = selector
        results += found
    if expect.console_errors is not None:
        results.append(count_check("consoleErrors", expect.console_errors, watch.errors))
    return results, failing_selector


def _text_check(body: str, text: str) -> AssertionResult:
    shown = re.sub(r"\s+", " ", body).strip()
    ok = text in body or text in shown
    cut = shown if len(shown) <= _SHOWN_TEXT else shown[:_SHOWN_TEXT] + f"… [{len(shown) - _SHOWN_TEXT} more]"
    message = f"the page shows {text!r}" if ok else f"the page does not show {text!r}"
    return result_at("text", "visible", text, cut, ok, message)


def _url_check(url: str, expected: Any) -> list[AssertionResult]:
    if isinstance(expected, str) and expected.startswith("/"):
        parts = urlsplit(url)
        return check(parts.path + (f"?{parts.query}" if parts.query else ""), expected, "url")
    return check(url, expected, "url")


async def _element_checks(locator: Locator, selector: str, spec: ElementExpect) -> list[AssertionResult]:
    from playwright.async_api import Error

    base = f"elements[{selector}]"
    try:
        count = await locator.count()
    except Error as exc:  # a selector Playwright cannot parse
        return [_unread(base, selector, exc)]
    results: list[AssertionResult] = []
    if spec.count is not None:
        results.append(count_check(f"{base}.count", spec.count, count))
    reads = _reads(spec)
    if not reads:
        if spec.count is None:  # `{}`: the element exists
            results.append(
                result_at(base, "exists", True, count, count > 0, "exists" if count else "no element matches")
            )
        return results
    if count == 0:
        for name, expected in reads:
            results.append(
                result_at(
                    f"{base}.{name}", name, expected, MISSING, False, f"no element matches `{selector}`"
                )
            )
        return results
    first = locator.first
    for name, expected in reads:
        try:
            results += await _read_check(first, base, name, expected)
        except Error as exc:
            results.append(_unread(f"{base}.{name}", expected, exc))
    return results


def _reads(spec: ElementExpect) -> list[tuple[str, Any]]:
    reads: list[tuple[str, Any]] = []
    for name in ("text", "visible", "enabled", "checked", "value"):
        value = getattr(spec, name)
        if value is not None:
            reads.append((name, value))
    reads += [(f"attributes.{name}", expected) for name, expected in spec.attributes.items()]
    return reads


async def _read_check(first: Locator, base: str, name: str, expected: Any) -> list[AssertionResult]:
    path = f"{base}.{name}"
    if name == "text":
        text = await first.inner_text(timeout=_READ_MS)
        wanted = {"contains": expected} if isinstance(expected, str) else expected
        return check(text.strip(), wanted, path)
    if name == "visible":
        return check(await first.is_visible(), expected, path)
    if name == "enabled":
        return check(await first.is_enabled(timeout=_READ_MS), expected, path)
    if name == "checked":
        return check(await first.is_checked(timeout=_READ_MS), expected, path)
    if name == "value":
        return check(await first.input_value(timeout=_READ_MS), expected, path)
    attribute = await first.get_attribute(name.removeprefix("attributes."), timeout=_READ_MS)
    return check(MISSING if attribute is None else attribute, expected, path)


def _unread(path: str, expected: Any, exc: Exception) -> AssertionResult:
    reason = (getattr(exc, "message", None) or str(exc)).strip().splitlines()
    return result_at(
        path, "read", expected, MISSING, False, f"could not be read: {reason[0][:200] if reason else exc}"
    )
