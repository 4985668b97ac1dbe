"""A browser step's navigations and actions, each bounded by the step's timeout.

An action acts on the *first* element its selector matches (as `locator(...).first` does), so a
selector that matches several elements is not an error; `expect.elements` counts them when that
matters. A failed action says which action, on which selector, and Playwright's reason in one
line (its call log is left out: the DOM excerpt and the screenshot show the page).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import msgspec

from preflight_sdk.config.browser import BrowserAction, WaitForAction
from preflight_sdk.core.durations import parse_duration

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["ActionFailed", "Navigation", "describe", "run_action", "selector_of", "target_url"]


class ActionFailed(Exception):
    """An action (or navigation) that did not happen, with the selector it was about."""

    def __init__(self, message: str, *, step: str, selector: str | None, kind: str = "action") -> None:
        super().__init__(message)
        self.message = message
        self.step = step
        self.selector = selector
        self.kind = kind  # `action`, `timeout` or `navigation`


class Navigation(msgspec.Struct, kw_only=True):
    """The first navigation's answer: its status (None when the page was not loaded over HTTP)."""

    status: int | None = None
    url: str | None = None


def target_url(goto: str, base_url: str | None) -> str:
    """The URL of `goto`: itself when absolute, else a path on `base_url`.

    Raises:
        ActionFailed: a path with no service to resolve it against.
    """
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", goto):
        return goto
    if base_url is None:
        raise ActionFailed(
            f"`goto: {goto}` is a path, and there is no service to open it on: give a URL, "
            "`browser.service`, the file's `service`, or set BASE_URL",
            step=f"goto {goto}",
            selector=None,
            kind="navigation",
        )
    return base_url.rstrip("/") + ("" if goto.startswith("/") else "/") + goto


async def goto(page: Page, url: str, *, wait_until: Any, timeout_ms: float, shown: str) -> Navigation:
    """Open `url` and wait until it counts as loaded; a failure is an `ActionFailed`."""
    from playwright.async_api import Error, TimeoutError

    try:
        response = await page.goto(url, wait_until=wait_until, timeout=timeout_ms)
    except TimeoutError:
        raise ActionFailed(
            f"goto {shown}: the page did not reach `{wait_until}` within {timeout_ms / 1000:g}s",
            step=f"goto {shown}",
            selector=None,
            kind="timeout",
        ) from None
    except Error as exc:
        raise ActionFailed(
            f"goto {shown}: {_first_line(exc.message)}",
            step=f"goto {shown}",
            selector=None,
            kind="navigation",
        ) from None
    return Navigation(status=response.status if response is not None else None, url=page.url)


async def run_action(page: Page, action: BrowserAction, *, base_url: str | None, timeout_ms: float) -> bool:
    """Do one action on `page`; a failure is an `ActionFailed` naming the action and its selector.

    Returns whether it typed into a password field (its value is then a secret of the step).
    """
    from playwright.async_api import Error, TimeoutError

    step = describe(action)
    selector = selector_of(action)
    wait = action.wait_for
    limit = (
        parse_duration(wait.timeout) * 1000
        if isinstance(wait, WaitForAction) and wait.timeout is not None
        else timeout_ms
    )
    try:
        if action.goto is not None:
            await goto(
                page,
                target_url(action.goto, base_url),
                wait_until="load",
                timeout_ms=limit,
                shown=action.goto,
            )
            return False
        assert selector is not None
        target = page.locator(selector).first
        if action.click is not None:
            await target.click(timeout=limit)
        elif action.fill is not None:
            await target.fill(str(action.fill.value), timeout=limit)
            return await target.get_attribute("type", timeout=limit) == "password"
        elif action.press is not None:
            if action.press.selector is None:
                await page.keyboard.press(action.press.key)
            else:
                await target.press(action.press.key, timeout=limit)
        elif action.select is not None:
            chosen = action.select
            await target.select_option(value=chosen.value, label=chosen.label, timeout=limit)
        elif action.check is not None:
            await target.check(timeout=limit)
        elif action.uncheck is not None:
            await target.uncheck(timeout=limit)
        elif action.hover is not None:
            await target.hover(timeout=limit)
        elif wait is not None:
            state = wait.state if isinstance(wait, WaitForAction) else "visible"
            await target.wait_for(state=state, timeout=limit)
    except TimeoutError as exc:
        raise ActionFailed(
            f"{step}: {_timeout_reason(exc.message, selector, limit)}",
            step=step,
            selector=selector,
            kind="timeout",
        ) from None
    except Error as exc:
        raise ActionFailed(f"{step}: {_first_line(exc.message)}", step=step, selector=selector) from None
    return False


def describe(action: BrowserAction) -> str:
    """The action in a few words (`click #place`, `fill #sku`): a fill's value is left out (it may be a secret)."""
    for name in ("goto", "click", "check", "uncheck", "hover"):
        value = getattr(action, name)
        if value is not None:
            return f"{name} {value}"
    if action.fill is not None:
        return f"fill {action.fill.selector}"
    if action.press is not None:
        return f"press {action.press.key}" + (f" in {action.press.selector}" if action.press.selector else "")
    if action.select is not None:
        return f"select in {action.select.selector}"
    wait = action.wait_for
    if isinstance(wait, WaitForAction):
        return f"waitFor {wait.selector} ({wait.state})"
    return f"waitFor {wait}"


def selector_of(action: BrowserAction) -> str | None:
    """The selector an action is about (None for `goto` and a page-wide `press`)."""
    for name in ("click", "check", "uncheck", "hover"):
        value = getattr(action, name)
        if value is not None:
            return str(value)
    if action.fill is not None:
        return action.fill.selector
    if action.press is not None:
        return action.press.selector
    if action.select is not None:
        return action.select.selector
    wait = action.wait_for
    if isinstance(wait, WaitForAction):
        return wait.selector
    return wait


def _timeout_reason(message: str, selector: str | None, limit: float) -> str:
    """Playwright's call log in the page's words: nothing matched, the element was hidden or disabled."""
    seconds = f"timed out after {limit / 1000:g}s"
    if selector is None:
        return seconds
    lines = [re.sub(r"^\d+ × ", "", line.strip().lstrip("-").strip()) for line in message.splitlines()]
    if not any("resolved to" in line for line in lines):
        return f"{seconds}: no element matches `{selector}`"
    state = next((line for line in reversed(lines) if line.startswith("element is ")), None)
    if state is not None:
        return f"{seconds}: `{selector}` matched, but the element {state.removeprefix('element ')}"
    if any("resolved to hidden" in line for line in lines):
        return f"{seconds}: `{selector}` matched, but the element is hidden"
    return seconds


def _first_line(message: str | None) -> str:
    text = (message or "failed").strip().splitlines()
    return text[0][:300] if text else "failed"
