"""`expect.expr` evaluation and the dotted paths `save` and `expr` read."""

from __future__ import annotations

from typing import Any

import pytest

from preflight_sdk.suites.yaml.expressions import ExpressionError, evaluate, resolve_path

CONTEXT: dict[str, Any] = {
    "status": 201,
    "headers": {"Content-Type": "application/json", "x-count": "5"},
    "body": {
        "id": 42,
        "name": "Widget",
        "ok": True,
        "none": None,
        "ratio": 0.5,
        "items": [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}],
        "meta": {"total": 2, "empty": {}},
    },
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("status == 201", True),
        ("status != 201", False),
        ("status >= 200 && status < 300", True),
        ("status > 201 || body.id == 42", True),
        ("status > 201 || body.id == 41", False),
        ("!(status == 201)", False),
        ("!body.none", True),
        ("!!body.ok", True),
        ("body.ok == true && body.none == null", True),
        ("body.ok == 1", False),  # booleans are not numbers
        ("body.ratio == 0.5 && body.ratio < 1", True),
        ("body.id == -42", False),
        ("body.items.length == 2", True),
        ("body.items[0].tags.length == 2 && body.items[1].tags.length == 0", True),
        ("body.items.1.id == 2", True),
        ("body.name.length == 6", True),
        ("body.meta.length == 2 && body.meta.empty.length == 0", True),
        ('body.name == "Widget"', True),
        ("body.name == 'Widget'", True),
        ('body.name == "Wid\\"get"', False),
        ('headers.content-type == "application/json"', True),  # names are case-insensitive
        ('headers.X-COUNT == "5"', True),
        ("headers.x-count == 5", False),  # a header is text
        ("body.missing == null", True),
        ("body.missing.deeper == null", True),
        ("body.name > 3", False),  # text against a number: false, not an error
        ('body.name > "A"', True),
        ("(status == 200 || status == 201) && (body.id > 40 && !(body.meta.total < 2))", True),
        ("true && !false", True),
        ("body.id", True),  # a bare operand is its truth
        ("body.meta.empty.length", False),
        ("  status   ==   201  ", True),
    ],
)
def test_expressions(expression: str, expected: bool) -> None:
    assert evaluate(expression, CONTEXT) is expected


def test_precedence_and_binds_tighter_than_or() -> None:
    assert evaluate("true || false && false", {}) is True
    assert evaluate("(true || false) && false", {}) is False
    assert evaluate("!true || true", {}) is True


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("status == == 201", "unexpected `==`"),
        ("(status == 201", "unexpected end of"),
        ("status == 201)", "unexpected `)`"),
        ("status = 201", "cannot read `= 201`"),
        ("status == 201 &&", "unexpected end of"),
        ("", "unexpected end of"),
        ("status ~ 1", "cannot read `~ 1`"),
    ],
)
def test_syntax_errors_name_the_problem(expression: str, message: str) -> None:
    with pytest.raises(ExpressionError) as raised:
        evaluate(expression, CONTEXT)
    assert message in str(raised.value)


def test_resolve_path_reads_nested_values_and_reports_missing_ones() -> None:
    assert resolve_path(CONTEXT, "body.items[0].tags[1]") == "b"
    assert resolve_path(CONTEXT, "body.items.0.id") == 1
    assert resolve_path(CONTEXT, "headers.content-type") == "application/json"
    assert resolve_path(CONTEXT, "body.items.length") == 2
    assert resolve_path(CONTEXT, "body.none") is None
    marker = object()
    assert resolve_path(CONTEXT, "body.none", marker) is None  # present, and null
    assert resolve_path(CONTEXT, "body.nope", marker) is marker
    assert resolve_path(CONTEXT, "body.items[5]", marker) is marker
    assert resolve_path(CONTEXT, "body.id.deeper", marker) is marker
