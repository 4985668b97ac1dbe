"""The `browser` step of a YAML test: open a page, act on it, and check what it shows.

```yaml
- name: an order is placed
  browser:
    goto: /index.html                 # a path of the service (the file's `service`), or a URL
    actions:
      - fill: {selector: "#sku", value: book}
      - click: "button#place"
  expect:
    text: Order confirmed             # visible on the page
    elements: {"#orders li": {count: 1}}
    consoleErrors: 0
```

Selectors are Playwright's (`#id`, `.class`, `text=Save`, `role=button[name="Save"]`, `xpath=…`).
The page expectations live in the step's `expect` (`text`, `title`, `url`, `elements`,
`consoleErrors`, beside `status` of the first navigation and `mock`); `check_browser_step` says
which keys fit which step.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ._meta import Duration, Section
from .validate import Validator

__all__ = [
    "BROWSER_EXPECTATIONS",
    "BrowserAction",
    "BrowserStep",
    "ElementExpect",
    "FillAction",
    "PressAction",
    "SelectAction",
    "Viewport",
    "WaitForAction",
    "check_browser_step",
]

Selector = Annotated[str, Meta(min_length=1, description="A Playwright selector (`#id`, `text=Save`…).")]


class FillAction(Section, frozen=True, kw_only=True):
    """Type `value` into the field (its old value is replaced)."""

    selector: Selector
    value: Annotated[str | int | float, Meta(description="The text to put in the field.")]


class PressAction(Section, frozen=True, kw_only=True):
    """Press a key (`Enter`, `Tab`, `Control+A`), in a field or on the page."""

    key: Annotated[str, Meta(min_length=1, description="A key as Playwright names it: `Enter`, `Shift+Tab`.")]
    selector: Annotated[str | None, Meta(description="Focus this element first (default: the page).")] = None


class SelectAction(Section, frozen=True, kw_only=True):
    """Choose options of a `<select>` by their value (or by their label)."""

    selector: Selector
    value: Annotated[str | list[str] | None, Meta(description="Option value(s) to select.")] = None
    label: Annotated[str | list[str] | None, Meta(description="Option label(s) to select.")] = None


class WaitForAction(Section, frozen=True, kw_only=True):
    """Wait until an element reaches a state (default: visible)."""

    selector: Selector
    state: Annotated[
        Literal["visible", "hidden", "attached", "detached"], Meta(description="The state to wait for.")
    ] = "visible"
    timeout: Annotated[str | int, Duration("How long to wait (default: the step's timeout).")] | None = None


# `click`, `check`, `uncheck`, `hover`: the action is the key, the element its value.
OnElement = Annotated[str | None, Meta(description="The element to act on: a Playwright selector.")]


class BrowserAction(Section, frozen=True, kw_only=True):
    """One action on the page: exactly one of its keys."""

    goto: Annotated[str | None, Meta(description="Open another path of the service, or a URL.")] = None
    click: OnElement = None
    fill: Annotated[FillAction | None, Meta(description="Fill a field.")] = None
    press: Annotated[PressAction | None, Meta(description="Press a key.")] = None
    check: OnElement = None
    select: Annotated[SelectAction | None, Meta(description="Choose options of a select.")] = None
    uncheck: OnElement = None
    hover: OnElement = None
    wait_for: Annotated[
        str | WaitForAction | None, Meta(description="Wait for an element (a selector: until visible).")
    ] = None


ACTION_KEYS = ("goto", "click", "fill", "press", "select", "check", "uncheck", "hover", "waitFor")


class Viewport(Section, frozen=True, kw_only=True):
    """The page's size in CSS pixels."""

    width: Annotated[int, Meta(ge=100, le=7680)]
    height: Annotated[int, Meta(ge=100, le=4320)]


class BrowserStep(Section, frozen=True, kw_only=True):
    """Open a page in the run's Chromium (a fresh context for the case), act on it, then check `expect`."""

    goto: Annotated[
        str, Meta(min_length=1, description="The page: a path of the service (`/index.html`) or a URL.")
    ]
    service: Annotated[
        str | None, Meta(description="Whose base URL a path is on (default: the file's `service`).")
    ] = None
    actions: Annotated[list[BrowserAction], Meta(description="Actions, in order, after the page loads.")] = (
        field(default_factory=list)
    )
    timeout: Annotated[str | int, Duration("Each navigation and action (default 10s).")] = "10s"
    expect_timeout: Annotated[
        str | int, Duration("How long the page expectations may take to hold (default 5s).")
    ] = "5s"
    wait_until: Annotated[
        Literal["load", "domcontentloaded", "networkidle", "commit"],
        Meta(description="When a navigation counts as done (default `load`)."),
    ] = "load"
    viewport: Annotated[Viewport | None, Meta(description="Page size (default 1280x720).")] = None
    trace: Annotated[
        bool, Meta(description="Record a Playwright trace, kept as an artifact when the case fails.")
    ] = True


class ElementExpect(Section, frozen=True, kw_only=True):
    """Checks on the elements a selector matches (the first one, for all but `count`)."""

    count: Annotated[int | str | None, Meta(description="How many match: 2, or `'>= 1'`.")] = None
    text: Annotated[Any, Meta(description="Its text: a string means contains; operators allowed.")] = None
    visible: Annotated[bool | None, Meta(description="Whether it is visible.")] = None
    enabled: Annotated[bool | None, Meta(description="Whether it is enabled.")] = None
    checked: Annotated[bool | None, Meta(description="Whether a checkbox or radio is checked.")] = None
    value: Annotated[Any, Meta(description="The value of an input, select or textarea.")] = None
    attributes: Annotated[
        dict[str, Any], Meta(description="Attribute checks: `{href: /cart, disabled: {exists: false}}`.")
    ] = field(default_factory=dict)


# The keys of `expect` that only a browser step reads, and the ones a browser step has no use for.
BROWSER_EXPECTATIONS = ("text", "title", "url", "elements", "consoleErrors")
_NOT_FOR_PAGES = ("headers", "body", "all", "any", "jsonSchema", "exitCode", "output", "responseTime", "expr")


def check_browser_step(step: dict[str, Any], path: tuple[str | int, ...], out: Validator) -> None:
    """Add a problem to `out` for each rule of browser steps that `step` (a step at `path`) breaks.

    Browser expectations on another step, HTTP expectations on a browser step, a poll on a browser
    step (its expectations already wait), and an action with none or several keys.
    """
    expect = step.get("expect")
    keys = set(expect) if isinstance(expect, dict) else set()
    browser = step.get("browser")
    if browser is None:
        for key in sorted(keys.intersection(BROWSER_EXPECTATIONS)):
            out.add((*path, "expect", key), f"`expect.{key}` checks a page: it needs a `browser` step")
        return
    for key in sorted(keys.intersection(_NOT_FOR_PAGES)):
        out.add(
            (*path, "expect", key),
            f"`expect.{key}` checks an HTTP response or a command; a browser step checks its page with "
            + ", ".join(f"`{k}`" for k in BROWSER_EXPECTATIONS),
        )
    retry = step.get("retry")
    if isinstance(retry, dict) and (retry.get("until") is not None or retry.get("failIf") is not None):
        out.add(
            (*path, "retry"),
            "a browser step cannot poll (`until`, `failIf`): its expectations wait up to `expectTimeout`",
        )
    if not isinstance(browser, dict) or not isinstance(browser.get("actions"), list):
        return
    for index, action in enumerate(browser["actions"]):
        if not isinstance(action, dict):
            continue
        given = [key for key in ACTION_KEYS if action.get(key) is not None]
        if len(given) != 1 and set(action) <= set(ACTION_KEYS):  # an unknown key: the type check says it
            found = ", ".join(f"`{k}`" for k in given) if given else "none"
            out.add(
                (*path, "browser", "actions", index),
                f"an action does exactly one of {', '.join(ACTION_KEYS)}; found {found}",
            )
        select = action.get("select")
        if isinstance(select, dict) and (select.get("value") is None) == (select.get("label") is None):
            out.add((*path, "browser", "actions", index, "select"), "give one of `value` and `label`")
