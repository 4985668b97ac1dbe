"""The `browser` step of YAML test files: what loads, and every mistake reported at its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.config import load_test_file
from preflight_sdk.config.browser import BrowserStep, WaitForAction
from preflight_sdk.core.errors import ConfigError

WEBSHOP = Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "webshop"


def _problems(tmp_path: Path, text: str) -> list[tuple[str, str, int | None]]:
    target = tmp_path / "t.yaml"
    target.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_test_file(target)
    return [(p.path, p.message, p.line) for p in caught.value.problems]


def test_the_smallest_browser_case_loads(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        'name: web\ncases:\n  - {name: home, browser: {goto: /index.html}, expect: {text: "Welcome"}}\n'
    )
    test = load_test_file(tmp_path / "t.yaml")
    step = test.cases[0].browser
    assert isinstance(step, BrowserStep)
    assert (step.goto, step.timeout, step.expect_timeout, step.trace) == ("/index.html", "10s", "5s", True)
    assert test.cases[0].expect is not None and test.cases[0].expect.text == "Welcome"


def test_the_webshop_suite_loads_with_its_actions_and_page_expectations() -> None:
    test = load_test_file(WEBSHOP / "tests" / "browser.yaml")
    assert len(test.cases) == 5
    placed = test.cases[2]
    assert placed.browser is not None and placed.expect is not None
    kinds = [
        next(k for k in ("select", "fill", "click") if getattr(a, k) is not None)
        for a in placed.browser.actions
    ]
    assert kinds == ["select", "fill", "click"]
    assert placed.expect.elements["#confirmation"].text == {"matches": "^Order ord_[0-9a-f]+ confirmed$"}
    assert placed.expect.console_errors == 0
    wait = test.cases[4].browser.actions[1].wait_for if test.cases[4].browser else None
    assert isinstance(wait, WaitForAction) and wait.state == "attached"


def test_an_action_with_two_keys_or_none_is_reported_at_its_place(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        "name: web\ncases:\n  - name: a\n    browser:\n      goto: /\n      actions:\n"
        "        - {click: '#a', check: '#b'}\n        - {}\n",
    )
    assert [(path, message.split(";")[1].strip()) for path, message, _ in problems] == [
        ("$.cases[0].browser.actions[0]", "found `click`, `check`"),
        ("$.cases[0].browser.actions[1]", "found none"),
    ]
    assert problems[0][2] == 7


def test_a_typo_in_an_action_gets_a_did_you_mean(tmp_path: Path) -> None:
    target = tmp_path / "t.yaml"
    target.write_text("name: web\ncases:\n  - name: a\n    browser: {goto: /, actions: [{clik: '#a'}]}\n")
    with pytest.raises(ConfigError) as caught:
        load_test_file(target)
    first = caught.value.problems[0]
    assert (first.path, first.suggestion) == ("$.cases[0].browser.actions[0].clik", "click")


def test_page_expectations_need_a_browser_step_and_http_ones_do_not_fit_it(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        "name: web\ncases:\n"
        "  - {name: a, request: {url: 'http://x/'}, expect: {status: 200, text: hi, title: T}}\n"
        "  - {name: b, browser: {goto: /}, expect: {status: 200, body: {a: 1}, headers: {x: y}}}\n",
    )
    assert [p for p, _, _ in problems] == [
        "$.cases[0].expect.text",
        "$.cases[0].expect.title",
        "$.cases[1].expect.body",
        "$.cases[1].expect.headers",
    ]
    assert "needs a `browser` step" in problems[0][1]
    assert "`text`, `title`, `url`, `elements`, `consoleErrors`" in problems[2][1]


def test_a_browser_step_may_retry_but_not_poll(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        "name: web\ncases:\n  - {name: a, browser: {goto: /}, retry: {until: {status: 200}, deadline: 5s}}\n",
    )
    assert [(p, m.split(":")[0]) for p, m, _ in problems] == [
        ("$.cases[0].retry", "a browser step cannot poll (`until`, `failIf`)")
    ]
    (tmp_path / "ok.yaml").write_text(
        "name: web\ncases:\n  - {name: a, browser: {goto: /}, retry: {maxAttempts: 2}}\n"
    )
    assert load_test_file(tmp_path / "ok.yaml").cases[0].retry is not None


def test_select_needs_exactly_one_of_value_and_label(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        "name: web\ncases:\n  - name: a\n    browser:\n      goto: /\n      actions:\n"
        "        - select: {selector: '#s'}\n        - select: {selector: '#s', value: a, label: A}\n",
    )
    assert [(p, m) for p, m, _ in problems] == [
        ("$.cases[0].browser.actions[0].select", "give one of `value` and `label`"),
        ("$.cases[0].browser.actions[1].select", "give one of `value` and `label`"),
    ]


def test_a_browser_step_is_one_action_and_its_durations_are_checked(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        "name: web\ncases:\n"
        "  - {name: a, browser: {goto: /, timeout: soon}, request: {url: 'http://x/'}}\n"
        "  - {name: b, browser: {goto: '', viewport: {width: 10, height: 800}}}\n",
    )
    paths = [p for p, _, _ in problems]
    assert "$.cases[0].browser.timeout" in paths
    assert any(p == "$.cases[0]" and "exactly one thing" in m for p, m, _ in problems)
    assert "$.cases[1].browser.goto" in paths
    assert "$.cases[1].browser.viewport.width" in paths
