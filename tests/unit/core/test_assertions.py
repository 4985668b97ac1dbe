"""The assertion engine: every operator passing and failing, partial matches, lists, edge cases."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from preflight_sdk.core.assertions import (
    MISSING,
    AssertionResult,
    check,
    compare_count,
    is_operator_set,
    json_type,
    passed,
)


def ok(actual: Any, expected: Any) -> bool:
    return passed(check(actual, expected))


# Each operator: (actual, operand) pairs that pass, then pairs that fail.
OPERATOR_CASES: dict[str, tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]] = {
    "type": (
        [
            ("a", "string"),
            (1, "integer"),
            (1, "number"),
            (1.5, "number"),
            (True, "boolean"),
            ({}, "object"),
            ([], "array"),
            (None, "null"),
            ("a", ["string", "null"]),
            (None, ["string", "null"]),
        ],
        [
            (1.5, "integer"),
            ("1", "number"),
            (True, "number"),
            (None, "object"),
            (MISSING, "null"),
            (1, ["string", "null"]),
        ],
    ),
    "exists": ([("x", True), (None, True), (MISSING, False)], [(MISSING, True), (None, False), (0, False)]),
    "in": (
        [("a", ["a", "b"]), (2, [1, 2.0]), (None, [None])],
        [("c", ["a", "b"]), (True, [1]), (MISSING, [None]), ("a", "abc")],
    ),
    "eq": (
        [(1, 1.0), ({"a": [1]}, {"a": [1]}), (None, None)],
        [(1, "1"), (True, 1), ({"a": 1, "b": 2}, {"a": 1}), (MISSING, None)],
    ),
    "ne": ([(1, 2), ("1", 1), (False, 0)], [(1, 1.0), ({"a": 1}, {"a": 1}), (MISSING, 5)]),
    "gt": ([(3, 2), (2.5, 2)], [(2, 2), (1, 2), ("3", 2), (True, 0), (MISSING, 0), (3, "2")]),
    "gte": ([(2, 2), (3, 2.5)], [(1, 2), (None, 0)]),
    "lt": ([(1, 2), (-1.5, 0)], [(2, 2), ("1", 2)]),
    "lte": ([(2, 2), (1, 2)], [(3, 2), ([], 2)]),
    "contains": (
        [
            ("hello world", "world"),
            ([1, 2, 3], 2),
            ({"k": 1}, "k"),
            ([{"id": 1, "n": "a"}], {"id": 1}),
            ("abc", ["a", "c"]),
            ([1, 2, 3], [1, 3]),
        ],
        [
            ("hello", "bye"),
            ([1, 2], 3),
            ({"k": 1}, "x"),
            (5, 5),
            (MISSING, "a"),
            ("abc", ["a", "x"]),
            ("abc", 1),
        ],
    ),
    "notContains": (
        [("hello", "bye"), ([1, 2], 3), ("abc", ["x", "y"]), ([1, 2], [3, 4])],
        [("hello", "ell"), ([1, 2], 2), ("abc", ["x", "b"]), (MISSING, "a")],
    ),
    "matches": ([("abc-123", r"\d+$"), ("x", "^x$")], [("abc", r"^\d+$"), (123, r"\d+"), ("a", "(")]),
    "startsWith": ([("Bearer abc", "Bearer ")], [("abc", "b"), (None, "a")]),
    "endsWith": ([("file.json", ".json")], [("file.json", ".yaml"), (["a"], "a")]),
    "length": (
        [
            ("abc", 3),
            ([1, 2], 2),
            ({"a": 1}, 1),
            ([1, 2, 3], {"gte": 2, "lt": 5}),
            ([1, 2], "> 1"),
            ("ab", "== 2"),
        ],
        [("abc", 2), ([1], {"gt": 1}), (5, 1), (MISSING, 0), ([1, 2], "< 2")],
    ),
    "every": (
        [([1, 2, 3], {"gt": 0}), ([{"a": 1}, {"a": 1, "b": 2}], {"a": 1})],
        [([1, -2, 3], {"gt": 0}), ("abc", {"type": "string"})],
    ),
    "some": ([([1, -2], {"lt": 0}), ([{"a": 1}, {"a": 2}], {"a": 2})], [([1, 2], {"lt": 0}), ({"a": 1}, 1)]),
    "not": ([("a", "b"), (5, {"gt": 10}), (1, None)], [("a", "a"), (5, {"gt": 1}), (None, None)]),
}


@pytest.mark.parametrize("operator", sorted(OPERATOR_CASES))
def test_each_operator_passes_and_fails(operator: str) -> None:
    passing, failing = OPERATOR_CASES[operator]
    for actual, operand in passing:
        results = check(actual, {f"${operator}": operand}, "body.x")
        assert passed(results), f"{operator}: {actual!r} vs {operand!r}: {[r.message for r in results]}"
    for actual, operand in failing:
        results = check(actual, {f"${operator}": operand}, "body.x")
        assert not passed(results), f"{operator}: {actual!r} vs {operand!r} should fail"
        failure = next(r for r in results if not r.passed)
        assert failure.path.startswith("body.x") and failure.message.startswith(failure.path + ": ")


def test_operators_without_a_dollar_are_read_as_operators_when_their_values_fit() -> None:
    assert ok(5, {"gt": 1, "lt": 10})
    assert not ok(5, {"gt": 1, "lt": 3})
    assert ok("ada@example.com", {"type": "string", "matches": "@", "endsWith": ".com"})
    assert ok({"id": "x"}, {"id": {"exists": True, "type": "string"}})


def test_a_field_named_like_an_operator_is_a_field_when_its_value_does_not_fit() -> None:
    # `type: create` is a document field: "create" is not a JSON type.
    assert is_operator_set({"type": "create"}) is False
    assert ok({"type": "create", "id": 1}, {"type": "create"})
    assert not ok({"type": "delete"}, {"type": "create"})
    assert not ok("create", {"type": "create"})
    # `$type` forces the operator reading.
    assert is_operator_set({"$type": "create"}) is True
    assert not ok({"type": "create"}, {"$type": "create"})
    assert ok({"type": "string"}, {"type": {"$eq": "string"}})


def test_dollar_aliases_and_unknown_operators() -> None:
    assert ok("abc", {"$regex": "^a"})
    assert ok("c", {"$notIn": ["a", "b"]}) and not ok("a", {"$notIn": ["a", "b"]})
    (result,) = check(1, {"$frobnicate": 2})
    assert not result.passed and "unknown operator `frobnicate`" in result.message


def test_nested_partial_match_ignores_unlisted_keys_at_any_depth() -> None:
    actual = {
        "user": {"id": 7, "name": "ada", "roles": ["admin"], "address": {"city": "Paris", "zip": "75001"}},
        "extra": 1,
    }
    expected = {"user": {"id": {"gt": 0}, "address": {"city": "Paris"}, "roles": {"contains": "admin"}}}
    results = check(actual, expected, "body")
    assert passed(results)
    assert [r.path for r in results] == ["body.user.id", "body.user.address.city", "body.user.roles"]
    failing = check(actual, {"user": {"address": {"city": "Lyon"}}}, "body")
    assert [(r.path, r.expected, r.actual, r.passed) for r in failing] == [
        ("body.user.address.city", "Lyon", "Paris", False)
    ]


def test_every_leaf_is_reported_passing_or_not() -> None:
    results = check({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": {"exists": False}})
    assert [(r.path, r.passed) for r in results] == [("body.a", True), ("body.b", False), ("body.c", True)]


def test_a_mapping_against_a_non_mapping_fails_once() -> None:
    (result,) = check([1], {"a": 1})
    assert (result.passed, result.operator) == (False, "object")
    assert "expected an object, got array" in result.message
    assert passed(check({"anything": 1}, {}))
    assert not passed(check("x", {}))


def test_lists_match_element_by_element_with_the_same_length() -> None:
    assert ok([1, {"a": 1, "b": 2}], [1, {"a": 1}])
    results = check([1, 2], [1, 3])
    assert [(r.path, r.passed) for r in results] == [("body[0]", True), ("body[1]", False)]
    (short,) = check([1], [1, 2])
    assert not short.passed and "expected 2 item(s), got 1" in short.message
    assert ok([], []) and not ok({}, [])
    (not_a_list,) = check("ab", ["a", "b"])
    assert not not_a_list.passed and "expected an array" in not_a_list.message


def test_every_is_vacuously_true_on_an_empty_list_and_some_is_false() -> None:
    assert ok([], {"every": {"gt": 0}})
    (result,) = check([], {"some": {"gt": 0}})
    assert not result.passed and "none of 0 item(s) match" in result.message


def test_every_reports_each_failing_item_by_index() -> None:
    results = check(
        [{"id": 1}, {"id": "x"}, {"id": None}], {"every": {"id": {"type": "integer"}}}, "body.items"
    )
    assert [r.path for r in results] == ["body.items[1].id", "body.items[2].id"]


def test_not_inverts_a_whole_expectation() -> None:
    assert ok({"status": "ok"}, {"not": {"status": "error"}})
    (result,) = check({"status": "error"}, {"not": {"status": "error"}})
    assert not result.passed and result.operator == "not"


def test_a_missing_path_fails_equality_and_is_reported_as_null() -> None:
    (result,) = check({}, {"id": 1})
    assert (result.path, result.passed, result.actual) == ("body.id", False, None)
    assert "<missing>" in result.message
    # Missing is not null.
    assert not ok({}, {"id": None})
    assert ok({"id": None}, {"id": None})
    assert ok({}, {"id": {"exists": False}})
    assert not ok({"id": None}, {"id": {"exists": False}})


def test_scalars_compare_by_json_value() -> None:
    assert ok(1, 1.0) and ok("a", "a") and ok(None, None) and ok(False, False)
    assert not ok(True, 1) and not ok(0, False) and not ok("1", 1) and not ok(1, None)


def test_results_serialise_in_camel_case_for_the_wire() -> None:
    (result,) = check({"a": 2}, {"a": {"gt": 3}})
    assert isinstance(result, AssertionResult)
    assert msgspec.to_builtins(result) == {
        "path": "body.a",
        "operator": "gt",
        "expected": 3,
        "actual": 2,
        "passed": False,
        "message": "body.a: expected to be > 3, got 2",
    }


@pytest.mark.parametrize(
    ("spec", "value", "expected"),
    [
        (5, 5, True),
        (5, 4, False),
        ("> 3", 4, True),
        ("> 3", 3, False),
        (">= 3", 3, True),
        ("< 3", 3, False),
        ("<= 3", 3, True),
        ("= 2", 2, True),
        ("== 2", 3, False),
        ("!= 2", 3, True),
        ("0", 0, True),
        (" >= -1 ", 0, True),
    ],
)
def test_compare_count(spec: str | int, value: int, expected: bool) -> None:
    assert compare_count(spec, value) is expected


@pytest.mark.parametrize("spec", ["more than 3", ">", "3.5", "=> 3", True])
def test_compare_count_rejects_other_forms(spec: Any) -> None:
    with pytest.raises(ValueError, match="expected a size like"):
        compare_count(spec, 1)


def test_json_type_names() -> None:
    assert [json_type(v) for v in (None, True, 1, 1.5, "s", {}, [], ())] == [
        "null",
        "boolean",
        "integer",
        "number",
        "string",
        "object",
        "array",
        "array",
    ]
