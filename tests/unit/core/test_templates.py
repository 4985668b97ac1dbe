"""`{{…}}` templates: typed whole values, text embedding, per-use callables, lookups, unknown names."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from preflight_sdk.core.templates import UnknownVariableError, find_templates, has_template, lookup, render

SCOPE: dict[str, Any] = {
    "count": 5,
    "ratio": 0.5,
    "ok": True,
    "nothing": None,
    "user": {"id": 42, "name": "ada", "tags": ["x", "y", "z"]},
    "items": [{"id": 1}, {"id": 2}],
    "headers": {"Content-Type": "application/json"},
    "env": {"HOME": "/home/ada"},
}


@pytest.mark.parametrize(
    ("template", "value"),
    [
        ("{{count}}", 5),
        ("{{ratio}}", 0.5),
        ("{{ok}}", True),
        ("{{nothing}}", None),
        ("{{user}}", {"id": 42, "name": "ada", "tags": ["x", "y", "z"]}),
        ("{{user.tags}}", ["x", "y", "z"]),
        ("{{ user.id }}", 42),
    ],
)
def test_a_whole_value_template_keeps_the_json_type(template: str, value: Any) -> None:
    assert render(template, SCOPE) == value


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("n={{count}}", "n=5"),
        ("{{ok}}/{{nothing}}", "true/null"),
        ("user {{user.name}} #{{user.id}}", "user ada #42"),
        ("{{user.tags}}!", '["x","y","z"]!'),
        (" {{count}}", " 5"),  # surrounding text (even a space) makes it text
        ("no templates here", "no templates here"),
    ],
)
def test_a_template_inside_text_is_rendered_as_text(template: str, text: str) -> None:
    assert render(template, SCOPE) == text


def test_render_walks_lists_and_mappings_and_leaves_other_values() -> None:
    value = {"a": ["{{count}}", 7, None, {"b": "{{user.name}}"}], "c": False}
    assert render(value, SCOPE) == {"a": [5, 7, None, {"b": "ada"}], "c": False}


def test_a_callable_is_called_on_every_use() -> None:
    counter = itertools.count(1)
    scope = {"next": lambda: next(counter)}
    assert render(["{{next}}", "{{next}}", "id-{{next}}"], scope) == [1, 2, "id-3"]
    assert lookup(scope, "next") == 4


def test_lookup_is_case_insensitive_after_an_exact_match() -> None:
    assert lookup(SCOPE, "headers.content-type") == "application/json"
    assert lookup(SCOPE, "HEADERS.Content-Type") == "application/json"
    scope = {"a": {"Key": 1, "key": 2}}
    assert lookup(scope, "a.key") == 2 and lookup(scope, "a.Key") == 1 and lookup(scope, "a.KEY") == 1


def test_list_indexes_and_length() -> None:
    assert lookup(SCOPE, "items.1.id") == 2
    assert lookup(SCOPE, "user.tags.-1") == "z"
    assert lookup(SCOPE, "items.length") == 2
    assert lookup(SCOPE, "user.name.length") == 3
    assert lookup(SCOPE, "user.length") == 3
    assert render("{{user.tags.length}} tags", SCOPE) == "3 tags"
    # A real key named `length` wins over the size.
    assert lookup({"m": {"length": "long"}}, "m.length") == "long"


@pytest.mark.parametrize(
    ("expression", "known"),
    [
        ("missing", ["count", "env", "headers", "items", "nothing", "ok", "ratio", "user"]),
        ("user.email", ["user.id", "user.name", "user.tags"]),
        ("items.5.id", []),
        ("count.value", []),
        ("env.NOT_SET", ["env.HOME"]),
    ],
)
def test_an_unknown_name_is_an_error_naming_the_variable(expression: str, known: list[str]) -> None:
    with pytest.raises(UnknownVariableError) as caught:
        render(f"x {{{{{expression}}}}}", SCOPE)
    error = caught.value
    assert error.code == "INVALID_INPUT"
    assert error.name == expression
    assert f"`{{{{{expression}}}}}`" in error.message
    assert error.details == {"variable": expression, "known": sorted(known)}


def test_an_empty_template_is_an_unknown_variable() -> None:
    with pytest.raises(UnknownVariableError):
        render("{{}}", SCOPE)


def test_a_resolver_function_can_be_the_scope() -> None:
    seen: list[str] = []

    def resolve(expression: str) -> Any:
        seen.append(expression)
        return expression.upper()

    assert render({"a": "{{x.y}}", "b": "<{{ z }}>"}, resolve) == {"a": "X.Y", "b": "<Z>"}
    assert seen == ["x.y", "z"]


def test_finding_templates() -> None:
    value = {"a": "{{one}} and {{ two.three }}", "b": ["{{four}}", 5], "c": "plain"}
    assert list(find_templates(value)) == ["one", "two.three", "four"]
    assert has_template(value) is True
    assert has_template({"a": ["plain", 1, None]}) is False
    assert has_template("{ {not one} }") is False
