"""Check a step's outcome against its `expect` block: every check becomes an AssertionResult."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from preflight_sdk.config.testfile import Expect, MockExpect
from preflight_sdk.core.assertions import MISSING, AssertionResult, check, passed, result_at

from ..outcome import StepOutcome
from .actions import output_checks
from .expressions import ExpressionError, why_false

__all__ = ["MockChecker", "evaluate_expect"]

MockChecker = Callable[[MockExpect], Awaitable[list[AssertionResult]]]


async def evaluate_expect(
    expect: Expect, outcome: StepOutcome, *, mocks: MockChecker | None
) -> list[AssertionResult]:
    """Return every check of `expect` made against `outcome` (passing ones included)."""
    results: list[AssertionResult] = []
    if expect.status is not None:
        wanted: Any = {"in": expect.status} if isinstance(expect.status, list) else expect.status
        results += check(outcome.status if outcome.status is not None else MISSING, wanted, "status")
    for name, expected in expect.headers.items():
        results += check(_header(outcome.headers, name), expected, f"headers.{name.lower()}")
    if expect.body is not None:
        results += check(outcome.body, expect.body, "body")
    for expression in [expect.expr] if isinstance(expect.expr, str) else (expect.expr or []):
        results.append(_expression(expression, outcome))
    if expect.all_of:
        for index, part in enumerate(expect.all_of):
            results += check(outcome.body, part, f"body(all[{index}])")
    if expect.any_of:
        results.append(_any(expect.any_of, outcome))
    if expect.response_time is not None:
        limit: Any = (
            {"lte": expect.response_time} if isinstance(expect.response_time, int) else expect.response_time
        )
        results += check(round(outcome.duration), limit, "responseTime")
    if expect.json_schema is not None:
        results.append(_schema(expect.json_schema, outcome.body))
    if expect.exit_code is not None:
        results += check(
            outcome.exit_code if outcome.exit_code is not None else MISSING, expect.exit_code, "exitCode"
        )
    if expect.output is not None:
        results += output_checks(outcome.stdout, expect.output)
    if expect.mock is not None and mocks is not None:
        for mock_expect in expect.mock if isinstance(expect.mock, list) else [expect.mock]:
            results += await mocks(mock_expect)
    return results


def _header(headers: dict[str, str], name: str) -> Any:
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return MISSING


def _expression(expression: str, outcome: StepOutcome) -> AssertionResult:
    try:
        value, reasons = why_false(expression, outcome.context())
    except ExpressionError as exc:
        return result_at("expr", "expr", expression, None, False, str(exc))
    verdict = f"`{expression}` is {'true' if value else 'false'}"
    return result_at("expr", "expr", expression, value, value, "; ".join([verdict, *reasons]))


def _any(options: list[Any], outcome: StepOutcome) -> AssertionResult:
    ok = any(passed(check(outcome.body, option, "body")) for option in options)
    message = "one alternative matches" if ok else f"none of {len(options)} alternatives matches"
    return result_at("body(any)", "any", options, outcome.body, ok, message)


def _schema(schema: dict[str, Any], body: Any) -> AssertionResult:
    import jsonschema  # lazy: only suites with jsonSchema expectations need it

    try:
        validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator_cls.check_schema(schema)
        errors = sorted(validator_cls(schema).iter_errors(body), key=lambda e: list(e.absolute_path))
    except jsonschema.SchemaError as exc:
        return result_at(
            "body", "jsonSchema", schema, body, False, f"the jsonSchema itself is invalid: {exc.message}"
        )
    if not errors:
        return result_at("body", "jsonSchema", schema, None, True, "matches the JSON Schema")
    first = errors[0]
    where = "body" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
    expected = first.schema if isinstance(first.schema, dict) else schema
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return result_at(where, "jsonSchema", expected, first.instance, False, first.message + more)
