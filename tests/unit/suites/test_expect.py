"""Every kind of `expect`, passing and failing, against the stub's nested JSON document."""

from __future__ import annotations

from typing import Any

import pytest
from support.stub import DOC, MakeProject, case, one_suite, run

from preflight_sdk.core.assertions import AssertionResult

pytestmark = pytest.mark.anyio


def frozen(value: Any) -> Any:
    """A hashable copy of a JSON value (mappings as sorted item tuples, lists as tuples)."""
    if isinstance(value, dict):
        return tuple(sorted((k, frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(frozen(v) for v in value)
    return value


def failing(assertions: list[AssertionResult]) -> set[tuple[str, str, Any, Any]]:
    """(path, operator, expected, actual) of each failed assertion."""
    return {(a.path, a.operator, frozen(a.expected), frozen(a.actual)) for a in assertions if not a.passed}


async def test_every_expectation_kind_passes_on_a_matching_response(make_project: MakeProject) -> None:
    root = make_project(
        one_suite(r"""
        name: Expectations
        cases:
          - name: all kinds hold
            request: {url: "{{env.STUB}}/doc"}
            expect:
              status: 200
              headers:
                x-request-id: {startsWith: req-, matches: "^req-\\d+$"}
                CONTENT-TYPE: {contains: json}
                X-Count: "5"
                x-absent: {exists: false}
              body:
                id: {type: integer, gt: 40, gte: 42, lt: 43, lte: 42, in: [41, 42]}
                price: {type: number, gte: 9.5, lt: 10}
                name: {in: [Widget, Gadget], startsWith: Wid, endsWith: get, not: {contains: zz}}
                note: null
                active: true
                tags: {length: 3, contains: red, notContains: pink, some: {eq: blue}, every: {type: string}}
                owner:
                  email: {matches: "^[a-z]+@example\\.com$"}
                  roles: [admin, dev]
                  nickname: {exists: false}
                items: {every: {qty: {gt: 0}}, length: {gte: 2}, some: {sku: B-2}, type: array}
                meta: {page: {number: 1}, total: {not: {eq: 3}}}
              expr:
                - status == 200 && body.items.length == 2
                - "!(body.meta.total < 2)"
                - (body.owner.roles.length >= 2 && headers.x-count == "5") || body.nope == 1
                - body.owner.name.length == 3 && body.items[1].sku == 'B-2' && body.note == null
              all: [{id: 42}, {name: Widget}]
              any: [{id: 0}, {name: Widget}]
              responseTime: 5000
              jsonSchema:
                type: object
                required: [id, items]
                properties:
                  id: {type: integer}
                  items: {type: array, items: {type: object, required: [sku]}}
          - name: a status list allows any of its values
            request: {url: "{{env.STUB}}/status/204"}
            expect: {status: [200, 204]}
          - name: responseTime as a range
            request: {url: "{{env.STUB}}/slow?ms=60"}
            expect: {responseTime: {gte: 50, lt: 3000}}
        """)
    )
    result = await run(root)
    assert [(c.name, c.failure) for c in result.failures()] == []
    assert result.totals.passed == 3


async def test_each_failing_expectation_is_recorded_with_path_operator_expected_and_actual(
    make_project: MakeProject,
) -> None:
    root = make_project(
        one_suite("""
        name: Expectations
        cases:
          - name: nothing holds
            request: {url: "{{env.STUB}}/doc"}
            expect:
              status: [201, 204]
              headers: {X-Request-Id: {endsWith: zzz}, x-missing: {exists: true}}
              body:
                id: "42"
                tags: {length: 2, notContains: red, every: {startsWith: r}, some: {eq: pink}}
                owner: {name: {not: {eq: Ann}}, email: {type: number}}
                price: {lt: 1}
                meta: {page: {size: {in: [10, 50]}}}
              expr: body.items.length > 5
              all: [{id: 42}, {name: Nope}]
              any: [{id: 0}, {name: Nope}]
              responseTime: {lt: 0}
              jsonSchema: {type: object, properties: {id: {type: string}}}
        """)
    )
    result = await run(root)
    failure = case(result, "nothing holds").failure
    assert failure is not None
    timing = next(a for a in failure.assertions if a.path == "responseTime")
    assert isinstance(timing.actual, int) and timing.actual >= 0
    assert failing(failure.assertions) == {
        ("status", "in", (201, 204), 200),
        ("headers.x-request-id", "endsWith", "zzz", "req-123"),
        ("headers.x-missing", "exists", True, None),
        ("body.id", "equals", "42", 42),
        ("body.tags.length", "length", 2, 3),
        ("body.tags", "notContains", "red", tuple(DOC["tags"])),
        ("body.tags[1]", "startsWith", "r", "blue"),
        ("body.tags[2]", "startsWith", "r", "green"),
        ("body.tags", "some", (("eq", "pink"),), tuple(DOC["tags"])),
        ("body.owner.name", "not", (("eq", "Ann"),), "Ann"),
        ("body.owner.email", "type", "number", "ann@example.com"),
        ("body.price", "lt", 1, 9.5),
        ("body.meta.page.size", "in", (10, 50), 20),
        ("expr", "expr", "body.items.length > 5", False),
        ("body(all[1]).name", "equals", "Nope", "Widget"),
        ("body(any)", "any", ((("id", 0),), (("name", "Nope"),)), frozen(DOC)),
        ("responseTime", "lt", 0, timing.actual),
        ("body.id", "jsonSchema", (("type", "string"),), 42),
    }
    schema = next(a for a in failure.assertions if a.operator == "jsonSchema")
    assert "42 is not of type 'string'" in schema.message
    assert next(a for a in failure.assertions if a.path == "body(all[0]).id").passed
    assert failure.summary.startswith("GET /doc returned 200, expected 201 or 204")


async def test_expr_syntax_errors_and_unknown_paths(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Expressions
        cases:
          - name: a syntax error fails with its position
            request: {url: "{{env.STUB}}/doc"}
            expect: {expr: "status == == 200"}
          - name: an unknown path is null
            request: {url: "{{env.STUB}}/doc"}
            expect: {expr: ["body.nothing.here == null", "!body.nothing"]}
          - name: comparing text with a number is false, not an error
            request: {url: "{{env.STUB}}/doc"}
            expect: {expr: "body.name > 3"}
        """)
    )
    result = await run(root)
    broken = case(result, "a syntax error fails with its position").failure
    assert broken is not None
    [assertion] = broken.assertions
    assert assertion.operator == "expr" and not assertion.passed
    assert "unexpected `==`" in assertion.message
    assert case(result, "an unknown path is null").status == "passed"
    text = case(result, "comparing text with a number is false, not an error").failure
    assert text is not None and text.assertions[0].actual is False


async def test_json_schema_that_is_itself_invalid_fails_and_says_so(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Schema
        cases:
          - name: bad schema
            request: {url: "{{env.STUB}}/doc"}
            expect: {jsonSchema: {type: 12}}
          - name: nested failure names the deepest path
            request: {url: "{{env.STUB}}/doc"}
            expect:
              jsonSchema:
                type: object
                properties:
                  items: {type: array, items: {properties: {qty: {maximum: 3}}}}
        """)
    )
    result = await run(root)
    bad = case(result, "bad schema").failure
    assert bad is not None and "the jsonSchema itself is invalid" in bad.assertions[0].message
    nested = case(result, "nested failure names the deepest path").failure
    assert nested is not None
    [assertion] = nested.assertions
    assert (assertion.path, assertion.actual, assertion.passed) == ("body.items[1].qty", 5, False)
    assert "5 is greater than the maximum of 3" in assertion.message


async def test_headers_are_matched_case_insensitively_and_missing_ones_fail(
    make_project: MakeProject,
) -> None:
    root = make_project(
        one_suite("""
        name: Headers
        cases:
          - name: any case
            request: {url: "{{env.STUB}}/doc"}
            expect: {headers: {x-REQUEST-id: req-123, content-type: application/json}}
          - name: missing
            request: {url: "{{env.STUB}}/doc"}
            expect: {headers: {X-Nope: anything}}
        """)
    )
    result = await run(root)
    assert case(result, "any case").status == "passed"
    missing = case(result, "missing").failure
    assert missing is not None
    [assertion] = missing.assertions
    assert (assertion.path, assertion.expected, assertion.actual) == ("headers.x-nope", "anything", None)
    assert "got <missing>" in assertion.message


async def test_a_false_expr_names_each_false_operand_and_the_values_it_read(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Operands
        cases:
          - name: one conjunct of three is false
            request: {url: "{{env.STUB}}/doc"}
            expect: {expr: "status == 200 && body.items.length > 5 && body.owner.name == 'Ann'"}
          - name: every disjunct is false
            request: {url: "{{env.STUB}}/doc"}
            expect: {expr: "body.active == false || !(body.meta.total < 100)"}
          - name: a bare operand
            request: {url: "{{env.STUB}}/doc"}
            expect: {expr: "body.note"}
        """)
    )
    result = await run(root)

    def message(name: str) -> str:
        failure = case(result, name).failure
        assert failure is not None
        [assertion] = failure.assertions
        assert assertion.operator == "expr" and not assertion.passed and assertion.actual is False
        return assertion.message

    conjunct = message("one conjunct of three is false")
    verdict, *reasons = conjunct.split("; ")
    assert verdict == "expr: `status == 200 && body.items.length > 5 && body.owner.name == 'Ann'` is false"
    assert reasons == ["`body.items.length > 5` is false: body.items.length is 2"], conjunct
    disjuncts = message("every disjunct is false")
    assert "`body.active == false` is false" in disjuncts and "body.active is true" in disjuncts, disjuncts
    assert "`!(body.meta.total < 100)` is false" in disjuncts, disjuncts
    assert f"body.meta.total is {DOC['meta']['total']}" in disjuncts, disjuncts
    assert "body.note is null" in message("a bare operand")
    summary = case(result, "one conjunct of three is false").failure.summary  # type: ignore[union-attr]
    assert "(`body.items.length > 5` is false: body.items.length is 2)" in summary, summary
