"""`save`, `{{…}}` templates and suite `variables`: types kept, unknown names fail loudly."""

from __future__ import annotations

import re

import pytest
from support.stub import MakeProject, case, one_suite, run

pytestmark = pytest.mark.anyio


async def test_saved_values_keep_their_types_and_fill_later_steps(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Save
        cases:
          - name: create
            request: {method: POST, url: "{{env.STUB}}/items", json: {name: lamp, tags: [a, b]}}
            expect: {status: 201}
            save:
              id: id
              whole: body
              firstTag: body.tags[0]
              location: headers.location
              created: status
          - name: a saved number matches a number
            request: {url: "{{env.STUB}}/items/{{id}}"}
            expect:
              status: 200
              body: {id: "{{id}}", tags: "{{whole.tags}}"}
              expr: "body.id > 100"
          - name: saved values reach paths, headers and bodies
            request:
              method: POST
              url: "{{env.STUB}}/echo/{{runtime.id}}/{{firstTag}}"
              headers: {X-Status: "{{created}}", X-Location: "{{location}}"}
              json: {id: "{{id}}", status: "{{created}}", label: "item {{id}} ({{created}})", item: "{{whole}}"}
            expect:
              body:
                path: {matches: "^/echo/\\\\d+/a$"}
                headers: {x-status: "201", x-location: {startsWith: /items/}}
                body:
                  id: {type: integer}
                  status: 201
                  label: {matches: "^item \\\\d+ \\\\(201\\\\)$"}
                  item: {name: lamp, tags: [a, b]}
        """)
    )
    result = await run(root)
    assert [(c.name, c.failure.error if c.failure else None) for c in result.failures()] == []
    assert result.totals.passed == 3


async def test_a_saved_number_compared_as_text_fails(make_project: MakeProject) -> None:
    """The typed substitution is what makes `id: "{{id}}"` work; an explicit string still differs."""
    root = make_project(
        one_suite("""
        name: Save
        cases:
          - name: create
            request: {method: POST, url: "{{env.STUB}}/items", json: {name: x}}
            save: {id: body.id}
          - name: as text
            request: {url: "{{env.STUB}}/items/{{id}}"}
            expect: {body: {id: "#{{id}}"}}
        """)
    )
    result = await run(root)
    failure = case(result, "as text").failure
    assert failure is not None
    [assertion] = [a for a in failure.assertions if not a.passed]
    assert assertion.path == "body.id" and isinstance(assertion.actual, int)
    assert assertion.expected == f"#{assertion.actual}"


async def test_suite_variables_of_every_type_are_usable(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Variables
        variables:
          count: 5
          ratio: 0.25
          flag: true
          nothing: null
          obj: {a: 1, list: [1, 2]}
          items: [x, y]
          greeting: "hello {{count}}"
          nested: "{{obj}}"
        cases:
          - name: whole-value templates keep types, embedded ones are text
            request:
              method: POST
              url: "{{env.STUB}}/echo"
              json:
                count: "{{count}}"
                ratio: "{{ratio}}"
                flag: "{{flag}}"
                nothing: "{{nothing}}"
                obj: "{{obj}}"
                items: "{{items}}"
                greeting: "{{greeting}}"
                nested: "{{nested.list}}"
                text: "c={{count}} f={{flag}} n={{nothing}} o={{obj}}"
                runtime: "{{runtime.count}}"
            expect:
              body:
                body:
                  count: 5
                  ratio: 0.25
                  flag: true
                  nothing: null
                  obj: {a: 1, list: [1, 2]}
                  items: [x, y]
                  greeting: hello 5
                  nested: [1, 2]
                  text: 'c=5 f=true n=null o={"a":1,"list":[1,2]}'
                  runtime: 5
        """)
    )
    result = await run(root)
    assert [(c.name, c.failure.error if c.failure else None) for c in result.failures()] == []


async def test_builtins_generate_fresh_values(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Builtins
        cases:
          - name: generators
            request:
              method: POST
              url: "{{env.STUB}}/echo"
              json: {u1: "{{uuid}}", u2: "{{uuid}}", ts: "{{timestamp}}", day: "{{date}}", now: "{{now}}"}
            expect:
              body:
                body:
                  u1: {matches: "^[0-9a-f-]{36}$"}
                  ts: {type: integer, gt: 1700000000000}
                  day: {matches: "^\\\\d{4}-\\\\d{2}-\\\\d{2}$"}
                  now: {endsWith: Z}
              expr: body.body.u1 != body.body.u2
        """)
    )
    result = await run(root)
    assert [(c.name, c.failure.error if c.failure else None) for c in result.failures()] == []


async def test_an_unknown_variable_fails_the_case_naming_it_and_is_never_sent(
    make_project: MakeProject,
) -> None:
    root = make_project(
        one_suite("""
        name: Unknown
        variables: {known: 1}
        cases:
          - name: typo
            request: {url: "{{env.STUB}}/echo/{{knwon}}"}
          - name: later cases still run
            request: {url: "{{env.STUB}}/echo/{{known}}"}
            expect: {body: {path: /echo/1}}
        """)
    )
    result = await run(root)
    typo = case(result, "typo")
    assert typo.status == "failed" and typo.failure is not None
    assert "unknown variable `{{knwon}}`" in typo.failure.error
    assert "known" in typo.failure.error  # the hint lists what exists
    assert typo.failure.request is None  # nothing was sent with the placeholder left in
    assert typo.failure.suggested_fix is not None and "`knwon`" in typo.failure.suggested_fix
    assert case(result, "later cases still run").status == "passed"


async def test_services_and_mocks_are_absent_in_test_only_mode(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Test-only
        cases:
          - name: a service url
            request: {url: "{{services.api.url}}/health"}
          - name: a mock url
            request: {url: "{{mocks.payments.url}}/charges"}
        """)
    )
    result = await run(root)
    for name, kind in (("a service url", "service"), ("a mock url", "mock")):
        failure = case(result, name).failure
        assert failure is not None
        assert re.search(r"unknown variable `\{\{(services\.api|mocks\.payments)\.url\}\}`", failure.error)
        assert failure.suggested_fix is not None
        assert f"names a {kind} this project does not run" in failure.suggested_fix
        assert "test-only" in failure.suggested_fix


async def test_a_variable_using_an_unknown_name_blocks_the_suite(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Broken variables
        variables: {a: "{{missing}}"}
        cases:
          - name: c
            request: {url: "{{env.STUB}}/status/200"}
        """)
    )
    result = await run(root)
    [suite] = result.suites
    assert suite.status == "failed"
    assert suite.error is not None and "unknown variable `{{missing}}`" in suite.error
    assert case(result, "c").status == "skipped"


async def test_saving_from_a_missing_path_makes_later_uses_fail_clearly(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Missing save
        cases:
          - name: save nothing
            request: {url: "{{env.STUB}}/doc"}
            save: {ghost: body.no.such.field}
          - name: use it
            request: {url: "{{env.STUB}}/echo/{{ghost}}"}
            expect: {status: 200}
        """)
    )
    result = await run(root)
    assert case(result, "save nothing").status == "passed"
    use = case(result, "use it")
    assert use.status == "failed" and use.failure is not None
    assert use.failure.error == (
        "unknown variable `{{ghost}}`: `body.no.such.field` was not in the result of case `save nothing`"
    )
    assert use.failure.request is None
