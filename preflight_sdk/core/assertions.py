"""The assertion engine shared by YAML test `expect` blocks and mock `when` conditions.

`check(actual, expected, path)` returns one `AssertionResult` per leaf check, passing or not, so a
failure report can show every expected/actual pair. Expectations are JSON-like:

- a scalar is compared for equality (`1 == 1.0`, but `true != 1`);
- a list matches a list of the same length, element by element;
- a mapping whose keys are all operators is an operator set (`{gt: 3, lt: 10}`);
- any other mapping is a *partial* match: every listed key must match, other keys are ignored,
  and nesting works at any depth.

Operators: `type exists in eq ne gt gte lt lte contains notContains matches startsWith endsWith
length every some not`. A key may also be written with a `$` (`$type`, `$exists`, `$regex`) to force
the operator reading when a document has a field of the same name. Without the `$`, a mapping is
read as operators only when each value fits its operator, so `{type: "create"}` is a field match.

Operand forms worth knowing: `type` takes a name or a list of names (`[string, "null"]`);
`contains` / `notContains` with a list on a string or a list mean "each of these" / "none of these";
`length` takes a number, a comparison set (`{gte: 1}`) or an "op N" string (`"> 2"`); `every` is true
on an empty list and `some` is false on one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

__all__ = [
    "OPERATORS",
    "AssertionResult",
    "check",
    "compare_count",
    "is_operator_set",
    "json_text",
    "json_type",
    "passed",
    "result_at",
]

_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
_COMPARISONS = {"gt", "gte", "lt", "lte"}
OPERATORS = frozenset(
    {
        "type",
        "exists",
        "in",
        "eq",
        "ne",
        "gt",
        "gte",
        "lt",
        "lte",
        "contains",
        "notContains",
        "matches",
        "startsWith",
        "endsWith",
        "length",
        "every",
        "some",
        "not",
    }
)
_ALIASES = {"regex": "matches", "notIn": "not_in"}
_MISSING_TEXT = "<missing>"
_COUNT = re.compile(r"\s*(>=|<=|==|!=|>|<|=)?\s*(-?\d+)\s*")


class AssertionResult(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One check: where (`path`), how (`operator`), what was wanted and what was found.

    A check against an OpenAPI contract has the operator `contract` and says more: the schema
    `rule` broken (`type`, `required`, `status`…), the `operation` it was checked against, and the
    `document` place (`contracts/orders.yaml:23`) where the contract states that rule.
    """

    path: str
    operator: str
    expected: Any
    actual: Any
    passed: bool
    message: str
    rule: str | None = None
    operation: str | None = None
    document: str | None = None


_Handler = Callable[[Any, Any, str], list[AssertionResult]]


class _Missing:
    """The value at a path that does not exist (distinct from JSON null)."""

    def __repr__(self) -> str:
        return _MISSING_TEXT


MISSING: Any = _Missing()


def passed(results: Sequence[AssertionResult]) -> bool:
    """Tell whether every result in `results` passed."""
    return all(r.passed for r in results)


def json_type(value: Any) -> str:
    """Return the JSON type name of `value` (`integer` values are also `number`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def is_operator_set(expected: Any) -> bool:
    """Tell whether a mapping is read as operators rather than as a partial document."""
    if not isinstance(expected, Mapping) or not expected:
        return False
    for key, value in expected.items():
        if not isinstance(key, str):
            return False
        if key.startswith("$"):
            continue
        if key not in OPERATORS or not _fits(key, value):
            return False
    return True


def check(actual: Any, expected: Any, path: str = "body") -> list[AssertionResult]:
    """Compare `actual` with `expected` and return every leaf check made.

    Args:
        actual: the observed value; pass `MISSING` for a path that does not exist.
        expected: the expectation (scalar, list, partial mapping or operator set).
        path: where `actual` lives, used in every result (`body.items[0].id`).
    """
    if is_operator_set(expected):
        results: list[AssertionResult] = []
        for key, operand in expected.items():
            name = key[1:] if key.startswith("$") else key
            name = _ALIASES.get(name, name)
            results.extend(_operator(name, actual, operand, path))
        return results
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [
                result_at(path, "object", expected, actual, False, f"expected an object, got {_kind(actual)}")
            ]
        results = []
        for key, sub in expected.items():
            child = actual.get(key, MISSING) if isinstance(key, str) else MISSING
            results.extend(check(child, sub, f"{path}.{key}"))
        if not expected:
            results.append(result_at(path, "object", expected, actual, True, "is an object"))
        return results
    if isinstance(expected, list):
        if not isinstance(actual, list | tuple):
            return [
                result_at(path, "array", expected, actual, False, f"expected an array, got {_kind(actual)}")
            ]
        if len(actual) != len(expected):
            return [
                result_at(
                    path,
                    "equals",
                    expected,
                    actual,
                    False,
                    f"expected {len(expected)} item(s), got {len(actual)}",
                )
            ]
        results = []
        for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
            results.extend(check(got, want, f"{path}[{index}]"))
        if not expected:
            results.append(result_at(path, "equals", expected, actual, True, "is an empty array"))
        return results
    ok = actual is not MISSING and _equal(actual, expected)
    return [result_at(path, "equals", expected, actual, ok, _describe("equal", expected, actual, ok))]


def compare_count(spec: str | int, value: int) -> bool:
    """Evaluate an `"op N"` size expression (`"> 3"`, `"<= 10"`, `"== 0"`, `5`) against `value`.

    Raises:
        ValueError: when `spec` is not of that form.
    """
    if isinstance(spec, int) and not isinstance(spec, bool):
        return value == spec
    match = _COUNT.fullmatch(str(spec))
    if match is None:
        raise ValueError(f"expected a size like '> 3', '<= 10' or '5', got {spec!r}")
    op, number = match.group(1) or "==", int(match.group(2))
    return {
        ">": value > number,
        "<": value < number,
        ">=": value >= number,
        "<=": value <= number,
        "=": value == number,
        "==": value == number,
        "!=": value != number,
    }[op]


# -- operators --------------------------------------------------------------------------------


def _operator(name: str, actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    handler = _HANDLERS.get(name)
    if handler is None:
        message = f"unknown operator `{name}`"
        return [result_at(path, name, operand, actual, False, message)]
    return handler(actual, operand, path)


def _op_type(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    kind = json_type(actual) if actual is not MISSING else "missing"
    wanted = operand if isinstance(operand, list) else [operand]
    ok = any(kind == w or (w == "number" and kind == "integer") for w in wanted)
    shown = " or ".join(str(w) for w in wanted)
    return [result_at(path, "type", operand, actual, ok, f"type is {_kind(actual)}, expected {shown}")]


def _op_exists(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    present = actual is not MISSING
    ok = present == bool(operand)
    message = ("exists" if present else "does not exist") + (
        "" if ok else f", expected it {'to exist' if operand else 'not to exist'}"
    )
    return [result_at(path, "exists", operand, actual, ok, message)]


def _op_in(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    if not isinstance(operand, list):
        return [
            result_at(
                path, "in", operand, actual, False, f"`in` needs a list of values, got {_kind(operand)}"
            )
        ]
    ok = actual is not MISSING and any(_equal(actual, item) for item in operand)
    return [result_at(path, "in", operand, actual, ok, _describe("be one of", operand, actual, ok))]


def _op_not_in(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    if not isinstance(operand, list):
        message = f"`notIn` needs a list of values, got {_kind(operand)}"
        return [result_at(path, "notIn", operand, actual, False, message)]
    ok = actual is not MISSING and not any(_equal(actual, item) for item in operand)
    return [result_at(path, "notIn", operand, actual, ok, _describe("be none of", operand, actual, ok))]


def _op_eq(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    ok = actual is not MISSING and _equal(actual, operand)
    return [result_at(path, "eq", operand, actual, ok, _describe("equal", operand, actual, ok))]


def _op_ne(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    ok = actual is not MISSING and not _equal(actual, operand)
    return [result_at(path, "ne", operand, actual, ok, _describe("differ from", operand, actual, ok))]


def _comparison(name: str) -> _Handler:
    def handler(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
        ok = _is_number(actual) and _compare(name, actual, operand)
        words = {"gt": "be >", "gte": "be >=", "lt": "be <", "lte": "be <="}[name]
        return [result_at(path, name, operand, actual, ok, _describe(words, operand, actual, ok))]

    return handler


def _op_contains(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    # A list operand on a string or a list means "contains each of these".
    items = operand if isinstance(operand, list) and isinstance(actual, str | list | tuple) else [operand]
    ok = all(_contains(actual, item) for item in items)
    return [result_at(path, "contains", operand, actual, ok, _describe("contain", operand, actual, ok))]


def _op_not_contains(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    items = operand if isinstance(operand, list) and isinstance(actual, str | list | tuple) else [operand]
    ok = actual is not MISSING and not any(_contains(actual, item) for item in items)
    return [
        result_at(path, "notContains", operand, actual, ok, _describe("not contain", operand, actual, ok))
    ]


def _op_matches(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    try:
        pattern = re.compile(str(operand))
    except re.error as exc:
        return [result_at(path, "matches", operand, actual, False, f"invalid regular expression: {exc}")]
    ok = isinstance(actual, str) and pattern.search(actual) is not None
    return [result_at(path, "matches", operand, actual, ok, _describe("match", operand, actual, ok))]


def _op_starts_with(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    ok = isinstance(actual, str) and actual.startswith(str(operand))
    return [result_at(path, "startsWith", operand, actual, ok, _describe("start with", operand, actual, ok))]


def _op_ends_with(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    ok = isinstance(actual, str) and actual.endswith(str(operand))
    return [result_at(path, "endsWith", operand, actual, ok, _describe("end with", operand, actual, ok))]


def _op_length(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    if not isinstance(actual, str | list | tuple | Mapping):
        return [
            result_at(f"{path}.length", "length", operand, actual, False, f"{_kind(actual)} has no length")
        ]
    size = len(actual)
    if isinstance(operand, Mapping):
        return check(size, dict(operand), f"{path}.length")
    if isinstance(operand, str):
        # The "op N" form of the test grammar: `length: "> 2"`.
        try:
            ok = compare_count(operand, size)
        except ValueError as exc:
            return [result_at(f"{path}.length", "length", operand, size, False, str(exc))]
        return [result_at(f"{path}.length", "length", operand, size, ok, _describe("be", operand, size, ok))]
    ok = size == operand
    return [result_at(f"{path}.length", "length", operand, size, ok, _describe("be", operand, size, ok))]


def _op_every(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    if not isinstance(actual, list | tuple):
        return [result_at(path, "every", operand, actual, False, f"expected an array, got {_kind(actual)}")]
    failures: list[AssertionResult] = []
    for index, item in enumerate(actual):
        failures.extend(r for r in check(item, operand, f"{path}[{index}]") if not r.passed)
    if failures:
        return failures
    return [result_at(path, "every", operand, actual, True, f"all {len(actual)} item(s) match")]


def _op_some(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    if not isinstance(actual, list | tuple):
        return [result_at(path, "some", operand, actual, False, f"expected an array, got {_kind(actual)}")]
    ok = any(passed(check(item, operand, path)) for item in actual)
    message = "an item matches" if ok else f"none of {len(actual)} item(s) match"
    return [result_at(path, "some", operand, actual, ok, message)]


def _op_not(actual: Any, operand: Any, path: str) -> list[AssertionResult]:
    inner = check(actual, operand, path)
    ok = not passed(inner)
    message = "does not match, as expected" if ok else "matches, but was expected not to"
    return [result_at(path, "not", operand, actual, ok, message)]


_HANDLERS: dict[str, _Handler] = {
    "type": _op_type,
    "exists": _op_exists,
    "in": _op_in,
    "not_in": _op_not_in,
    "eq": _op_eq,
    "ne": _op_ne,
    "gt": _comparison("gt"),
    "gte": _comparison("gte"),
    "lt": _comparison("lt"),
    "lte": _comparison("lte"),
    "contains": _op_contains,
    "notContains": _op_not_contains,
    "matches": _op_matches,
    "startsWith": _op_starts_with,
    "endsWith": _op_ends_with,
    "length": _op_length,
    "every": _op_every,
    "some": _op_some,
    "not": _op_not,
}


# -- helpers ----------------------------------------------------------------------------------


def _fits(operator: str, value: Any) -> bool:
    """Tell whether `value` is a sensible operand for `operator` (used to tell operators from fields)."""
    if operator == "type":
        names = value if isinstance(value, list) and value else [value]
        return all(isinstance(name, str) and name in _TYPES for name in names)
    if operator == "exists":
        return isinstance(value, bool)
    if operator == "in":
        return isinstance(value, list)
    if operator in _COMPARISONS:
        return _is_number(value)
    if operator in {"matches", "startsWith", "endsWith"}:
        return isinstance(value, str)
    if operator == "length":
        return (
            (isinstance(value, int) and not isinstance(value, bool))
            or (isinstance(value, Mapping) and bool(value) and set(value) <= _COMPARISONS | {"eq", "ne"})
            or (isinstance(value, str) and _COUNT.fullmatch(value) is not None)
        )
    if operator in {"every", "some", "not"}:
        return isinstance(value, Mapping | list) or value is None or isinstance(value, str | int | float)
    return True


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and not (isinstance(value, float) and math.isnan(value))
    )


def _compare(name: str, actual: Any, operand: Any) -> bool:
    if not _is_number(operand):
        return False
    return bool(
        {
            "gt": actual > operand,
            "gte": actual >= operand,
            "lt": actual < operand,
            "lte": actual <= operand,
        }[name]
    )


def _equal(actual: Any, expected: Any) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if _is_number(actual) and _is_number(expected):
        return bool(actual == expected)
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return actual.keys() == expected.keys() and all(_equal(actual[k], expected[k]) for k in actual)
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
        return len(actual) == len(expected) and all(
            _equal(a, b) for a, b in zip(actual, expected, strict=True)
        )
    return type(actual) is type(expected) and bool(actual == expected)


def _contains(actual: Any, operand: Any) -> bool:
    if isinstance(actual, str):
        return isinstance(operand, str) and operand in actual
    if isinstance(actual, list | tuple):
        if isinstance(operand, Mapping) and not is_operator_set(operand):
            return any(isinstance(item, Mapping) and passed(check(item, operand)) for item in actual)
        return any(_equal(item, operand) for item in actual)
    if isinstance(actual, Mapping):
        return isinstance(operand, str) and operand in actual
    return False


def _kind(value: Any) -> str:
    return _MISSING_TEXT if value is MISSING else json_type(value)


def json_text(value: Any) -> str:
    """`value` as JSON spells it (`false`, `null`, `{"a": 1}`; a string quoted but not escaped);
    `<missing>` for a path that does not exist.

    Every message a person reads shows values this way, never in Python's spelling.
    """
    if value is MISSING:
        return _MISSING_TEXT
    if isinstance(value, str):
        return f'"{value}"'  # quoted, but unescaped: a regex reads as written
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # a value JSON cannot hold (a cycle, a NaN key...)
        return str(value)


def _short(value: Any) -> str:
    text = json_text(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _describe(verb: str, expected: Any, actual: Any, ok: bool) -> str:
    if ok:
        return f"{_short(actual)} {_present(verb)} {_short(expected)}"
    return f"expected to {verb} {_short(expected)}, got {_short(actual)}"


def _present(verb: str) -> str:
    """`equal` → `equals`, `be one of` → `is one of`, `not contain` → `does not contain`."""
    first, _, rest = verb.partition(" ")
    if first == "be":
        word = "is"
    elif first == "not":
        return f"does {verb}"
    else:
        word = first + ("es" if first.endswith(("ch", "sh", "s", "x")) else "s")
    return f"{word} {rest}".rstrip()


def result_at(
    path: str, operator: str, expected: Any, actual: Any, ok: bool, message: str
) -> AssertionResult:
    """One check's result, its message led by its path (`body.id: ...`); a MISSING `actual` reads as null."""
    return AssertionResult(
        path=path,
        operator=operator,
        expected=expected,
        actual=None if actual is MISSING else actual,
        passed=ok,
        message=f"{path}: {message}",
    )
