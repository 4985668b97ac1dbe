"""Contracts in a run: a service's answers and the requests sent to a mock, checked against OpenAPI.

The service is a real HTTP server on loopback (starlette on uvicorn, in a thread) that the fake
engine's container publishes; the mock is preflight's own, served for real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from support.fake_engine import FakeEngine
from support.stub import case, environment, serve_in_thread, wire, write_project

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.results.run import RunResult

pytestmark = pytest.mark.anyio

CONTRACT = """\
openapi: 3.0.3
info: {title: Items, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: The item.
          headers:
            X-Request-Id: {required: true, schema: {type: string}}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Item"}
        "404":
          description: No such item.
          content:
            application/json:
              schema: {type: object, required: [error], properties: {error: {type: string}}}
  /items:
    post:
      operationId: createItem
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Item"}
      responses:
        "201":
          description: Created.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Item"}
components:
  schemas:
    Item:
      type: object
      required: [id, name]
      properties:
        id: {type: integer}
        name: {type: string}
        price: {type: number, nullable: true}
"""

ANSWERS: dict[str, tuple[int, Any]] = {
    "1": (200, {"id": 1, "name": "lamp", "price": None}),
    "2": (200, {"id": "2", "name": "chair"}),  # a wrong type
    "3": (200, {"id": 3}),  # a missing required field
    "4": (500, {"error": "boom"}),  # an undocumented status
    "5": (404, {"error": "no such item"}),
}


def app() -> Starlette:
    async def item(request: Request) -> Response:
        status, body = ANSWERS.get(request.path_params["id"], (404, {"error": "no such item"}))
        return JSONResponse(body, status_code=status, headers={"X-Request-Id": "r-1"})

    async def create(request: Request) -> Response:
        body = await request.json()
        return JSONResponse(body, status_code=201)

    return Starlette(routes=[Route("/items/{id}", item), Route("/items", create, methods=["POST"])])


@pytest.fixture(scope="module")
def service() -> Iterator[int]:
    with serve_in_thread(app()) as url:
        yield int(url.rsplit(":", 1)[1])


def project(root: Path, port: int, cases: str, **extra: Any) -> Path:
    document: dict[str, Any] = {
        "project": {"name": "contracts"},
        "services": {
            "items": {
                "build": {"image": "items:test"},
                "container": {"ports": ["0:8000"]},
                "contract": "openapi.yaml",
            }
        },
        "tests": {
            "suites": [{"id": "s", "file": "tests/s.yaml", **extra.pop("suite", {})}],
            **extra.pop("tests", {}),
        },
        **extra,
    }
    return write_project(root, document, files={"openapi.yaml": CONTRACT, "tests/s.yaml": cases})


async def run_project(root: Path, port: int) -> RunResult:
    # The fake engine publishes the service on `port`, where the real server listens.
    async with (
        FakeEngine(images=["items:test"], first_port=port) as engine,
        environment(root, engine) as opened,
    ):
        return await opened.run()


THREE_WAYS = """\
name: Items
service: items
cases:
  - name: a good item
    request: {path: /items/1}
    expect: {status: 200}
  - name: a wrong type
    request: {path: /items/2}
    expect: {status: 200}
  - name: a missing field
    request: {path: /items/3}
    expect: {status: 200, body: {id: 3}}
  - name: an undocumented status
    request: {path: /items/4}
  - name: a documented error
    request: {path: /items/5}
    expect: {status: 404}
"""


async def test_each_way_an_answer_breaks_its_contract_fails_its_case_with_path_rule_and_line(
    tmp_path: Path, service: int
) -> None:
    result = await run_project(project(tmp_path / "p", service, THREE_WAYS), service)
    statuses = {c.name: c.status for c in result.suites[0].cases}
    assert statuses == {
        "a good item": "passed",
        "a wrong type": "failed",
        "a missing field": "failed",
        "an undocumented status": "failed",
        "a documented error": "passed",
    }, wire(result)

    def broken(name: str) -> Any:
        failure = case(result, name).failure
        assert failure is not None
        [assertion] = [a for a in failure.assertions if not a.passed]
        return assertion

    wrong = broken("a wrong type")
    assert (wrong.operator, wrong.path, wrong.rule, wrong.actual) == ("contract", "body.id", "type", "2")
    assert wrong.document == "openapi.yaml:42"  # `type: integer` of Item.id
    assert wrong.operation == "GET /items/{id} → 200"
    assert wrong.expected == {"type": "integer"}
    missing = broken("a missing field")
    assert (missing.path, missing.rule, missing.document) == ("body", "required", "openapi.yaml:40")
    assert "'name' is a required property" in missing.message
    undocumented = broken("an undocumented status")
    assert (undocumented.path, undocumented.rule, undocumented.actual) == ("status", "status", 500)
    assert undocumented.document == "openapi.yaml:9"  # the operation's `responses:`
    assert "status 500 is not documented for GET /items/{id} (documented: 200, 404)" in undocumented.message
    summary = case(result, "a wrong type").failure
    assert summary is not None and "which its contract forbids: body.id" in summary.summary

    [coverage] = result.contracts or []
    assert (coverage.contract, coverage.kind, coverage.file) == ("items", "service", "openapi.yaml")
    assert (coverage.operations, coverage.covered, coverage.statuses, coverage.statuses_covered) == (
        2,
        1,
        3,
        2,
    )
    get = next(i for i in coverage.items if i.operation == "GET /items/{id}")
    assert (get.calls, get.exercised, get.documented) == (5, [200, 500, 404], ["200", "404"])
    assert coverage.violations == 3


async def test_warn_mode_makes_violations_suite_warnings_and_a_case_can_opt_out(
    tmp_path: Path, service: int
) -> None:
    cases = """\
name: Items
service: items
cases:
  - name: a wrong type, as a warning
    request: {path: /items/2}
  - name: an undocumented status, not checked
    request: {path: /items/4}
    contract: false
"""
    warned = await run_project(
        project(tmp_path / "warn", service, cases, tests={"contract": "warn"}), service
    )
    assert warned.status == "passed", wire(warned)
    [warning] = warned.suites[0].warnings
    assert "body.id: '2' is not of type 'integer'" in warning and "openapi.yaml:42" in warning
    [coverage] = warned.contracts or []
    assert coverage.mode == "warn" and coverage.violations == 1

    # The suite's own mode wins over the project's; `off` checks nothing (and counts nothing).
    off = await run_project(project(tmp_path / "off", service, cases, suite={"contract": "off"}), service)
    assert off.status == "passed" and off.suites[0].warnings == []
    [coverage] = off.contracts or []
    assert coverage.covered == 0

    failing = await run_project(project(tmp_path / "fail", service, cases), service)
    assert [c.status for c in failing.suites[0].cases] == ["failed", "passed"]


PAYMENTS_CONTRACT = {
    "openapi": "3.1.0",
    "info": {"title": "Payments", "version": "1"},
    "paths": {
        "/charges": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["amount"],
                                "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}},
                            }
                        }
                    },
                },
                "responses": {
                    "201": {
                        "description": "Captured.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id"],
                                    "properties": {"id": {"type": "string"}},
                                }
                            }
                        },
                    }
                },
            }
        }
    },
}


def mocked(root: Path, routes: list[dict[str, Any]], cases: str) -> Path:
    import json

    document = {
        "project": {"name": "mocked"},
        "mocks": {"payments": {"port": 0, "routes": routes, "contract": "payments.json"}},
        "tests": {"suites": [{"id": "s", "file": "tests/s.yaml"}]},
    }
    return write_project(
        root,
        document,
        files={"payments.json": json.dumps(PAYMENTS_CONTRACT, indent=2), "tests/s.yaml": cases},
    )


CHARGE = {
    "name": "charge",
    "method": "POST",
    "path": "/charges",
    "response": {"status": 201, "body": {"id": "ch_{{counter}}"}},
}


async def test_a_mock_route_its_contract_forbids_is_reported_when_the_configuration_loads(
    tmp_path: Path,
) -> None:
    refund = {"name": "refund", "method": "POST", "path": "/refunds", "response": {"status": 201, "body": {}}}
    wrong = {
        "name": "wrong",
        "method": "POST",
        "path": "/charges",
        "response": {"status": 201, "body": {"id": 7}},
    }
    root = mocked(tmp_path / "p", [CHARGE, wrong, refund], "name: S\ncases: []\n")
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).init()
    assert caught.value.code == "CONFIG_INVALID"
    problems = {p.path: p for p in caught.value.problems}
    assert set(problems) == {"$.mocks.payments.routes[1].response", "$.mocks.payments.routes[2].response"}
    first = problems["$.mocks.payments.routes[1].response"]
    assert first.file is not None and first.file.endswith("e2e.yaml") and first.line is not None
    text = (root / "e2e.yaml").read_text().splitlines()
    assert '"response"' in text[first.line - 1]  # the line of routes[1].response
    assert "route `wrong` answers what the contract of mock `payments` forbids" in first.message
    assert "body.id: 7 is not of type 'string'" in first.message and "payments.json:" in first.message
    assert (
        "POST /refunds: no operation of the contract matches"
        in problems["$.mocks.payments.routes[2].response"].message
    )


async def test_a_request_the_mock_contract_refuses_fails_expect_mock_contract_and_is_run_evidence(
    tmp_path: Path,
) -> None:
    cases = """\
name: S
cases:
  - name: a good charge
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
    expect:
      status: 201
      mock: {name: payments, path: /charges, contract: true}
  - name: a charge without an amount
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {sku: book}}
    expect:
      status: 201
      mock: {name: payments, path: /charges, contract: true}
"""
    root = mocked(tmp_path / "p", [CHARGE], cases)
    async with environment(root) as opened:
        result = await opened.run()
    assert [c.status for c in result.suites[0].cases] == ["passed", "failed"], wire(result)
    failure = case(result, "a charge without an amount").failure
    assert failure is not None
    [broken] = [a for a in failure.assertions if not a.passed]
    assert (broken.operator, broken.path, broken.rule) == (
        "contract",
        "mock.payments.request.body",
        "required",
    )
    assert broken.document is not None and broken.document.startswith("payments.json:")
    assert "'amount' is a required property" in broken.message
    [coverage] = result.contracts or []
    assert (coverage.contract, coverage.kind, coverage.covered, coverage.violations) == (
        "payments",
        "mock",
        1,
        1,
    )
    [evidence] = coverage.requests
    assert (evidence.method, evidence.path, evidence.case) == (
        "POST",
        "/charges",
        "s.a-charge-without-an-amount",
    )
    assert [v.path for v in evidence.violations] == ["request.body"]


def relay() -> Starlette:
    """A service that charges the payments provider: it forgets the amount when told to."""

    async def order(request: Request) -> Response:
        import httpx

        payments = request.query_params["payments"]
        charge = {"sku": "book"} if request.query_params.get("bug") else {"amount": 5, "sku": "book"}
        async with httpx.AsyncClient() as client:
            reply = await client.post(f"{payments}/charges", json=charge)
        return JSONResponse({"charged": reply.status_code == 201}, status_code=201)

    return Starlette(routes=[Route("/orders", order, methods=["POST"])])


@pytest.fixture(scope="module")
def orders() -> Iterator[int]:
    with serve_in_thread(relay()) as url:
        yield int(url.rsplit(":", 1)[1])


async def test_a_service_that_sends_the_mock_a_request_its_contract_refuses_fails_the_case(
    tmp_path: Path, orders: int
) -> None:
    cases = """\
name: S
service: orders
cases:
  - name: an order charges the provider
    request: {method: POST, path: /orders, query: {payments: "{{mocks.payments.url}}"}}
    expect:
      status: 201
      mock: {name: payments, path: /charges, contract: true}
  - name: an order that forgets the amount
    request: {method: POST, path: /orders, query: {payments: "{{mocks.payments.url}}", bug: "1"}}
    expect:
      status: 201
      mock: {name: payments, path: /charges, contract: true}
"""
    root = mocked(tmp_path / "p", [CHARGE], cases)
    document = json.loads((root / "e2e.yaml").read_text())
    document["services"] = {"orders": {"build": {"image": "orders:test"}, "container": {"ports": ["0:8000"]}}}
    (root / "e2e.yaml").write_text(json.dumps(document))
    async with (
        FakeEngine(images=["orders:test"], first_port=orders) as engine,
        environment(root, engine) as opened,
    ):
        result = await opened.run()
    assert [c.status for c in result.suites[0].cases] == ["passed", "failed"], wire(result)
    failure = case(result, "an order that forgets the amount").failure
    assert failure is not None
    [broken] = [a for a in failure.assertions if not a.passed]
    assert (broken.path, broken.rule) == ("mock.payments.request.body", "required")
    assert "POST /charges: request.body: 'amount' is a required property" in broken.message
    [coverage] = [c for c in result.contracts or [] if c.contract == "payments"]
    [evidence] = coverage.requests
    assert evidence.case == "s.an-order-that-forgets-the-amount"


SETUP_AND_TEARDOWN = """\
name: Items
service: items
setup:
  - name: read the item the cases need
    request: {path: /items/2}
teardown:
  - name: read an item back
    request: {path: /items/3}
  - name: a legacy read, not checked
    request: {path: /items/4}
    contract: false
cases:
  - name: a good item
    request: {path: /items/1}
    expect: {status: 200}
"""


async def test_setup_and_teardown_answers_are_checked_like_a_cases(tmp_path: Path, service: int) -> None:
    result = await run_project(project(tmp_path / "fail", service, SETUP_AND_TEARDOWN), service)
    [suite] = result.suites
    # A setup step whose answer breaks the contract fails, as a failed assertion would: no case runs.
    assert suite.status == "failed" and suite.error is not None, wire(result)
    assert suite.error.startswith("setup step 1 (read the item the cases need) failed: body.id: '2'")
    assert "openapi.yaml:42" in suite.error
    assert [c.status for c in suite.cases] == ["skipped"]
    # A teardown step's violation is a suite warning, as its other failures are; `contract: false` opts out.
    [teardown] = suite.warnings
    assert teardown.startswith("teardown step read an item back failed: body: 'name' is a required property")
    [coverage] = result.contracts or []
    get = next(i for i in coverage.items if i.operation == "GET /items/{id}")
    assert (get.calls, get.exercised) == (2, [200]), get
    assert coverage.violations == 2

    warned = await run_project(
        project(tmp_path / "warn", service, SETUP_AND_TEARDOWN, suite={"contract": "warn"}), service
    )
    [suite] = warned.suites
    assert suite.status == "passed" and [c.status for c in suite.cases] == ["passed"], wire(warned)
    assert [w.split(": ", 1)[0] for w in suite.warnings] == ["contract of items", "contract of items"]
    assert "body.id: '2' is not of type 'integer'" in suite.warnings[0]
    assert "'name' is a required property" in suite.warnings[1]


WRONG = {
    "name": "wrong",
    "method": "POST",
    "path": "/charges",
    "response": {"status": 201, "body": {"id": 7}},
}
CHARGE_CASE = """\
name: S
cases:
  - name: a charge
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
    expect: {status: 201}
"""


def with_suites(root: Path, suites: list[dict[str, Any]], **tests: Any) -> Path:
    document = json.loads((root / "e2e.yaml").read_text())
    document["tests"] = {"suites": suites, **tests}
    (root / "e2e.yaml").write_text(json.dumps(document, indent=2))
    return root


async def test_a_forbidden_mock_route_is_a_load_warning_where_no_suite_fails_on_violations(
    tmp_path: Path,
) -> None:
    one = {"id": "s", "file": "tests/s.yaml"}
    other = {"id": "t", "file": "tests/s.yaml"}
    # A suite's own `warn` (the project's mode left at `fail`): the route is a warning with its line.
    root = with_suites(mocked(tmp_path / "suite", [WRONG], CHARGE_CASE), [{**one, "contract": "warn"}])
    async with environment(root) as opened:
        setup = await opened.status()
        result = await opened.run()
    [warning] = [w for w in setup.warnings if "route `wrong`" in w]
    line = int(warning.split(":")[1])
    assert (
        warning.startswith("e2e.yaml:")
        and '"response"' in (root / "e2e.yaml").read_text().splitlines()[line - 1]
    )
    assert (
        "answers what the contract of mock `payments` forbids: body.id: 7 is not of type 'string'" in warning
    )
    assert result.status == "passed" and result.setup is not None and warning in result.setup.warnings

    # The project's `warn` and every suite's own `warn` or `off` likewise; every suite `off`: not checked.
    for suites, tests, told in (
        ([one, other], {"contract": "warn"}, True),
        ([{**one, "contract": "warn"}, {**other, "contract": "off"}], {}, True),
        ([{**one, "contract": "off"}, {**other, "contract": "off"}], {}, False),
    ):
        root = with_suites(
            mocked(tmp_path / f"m{len(list(tmp_path.iterdir()))}", [WRONG], CHARGE_CASE), suites, **tests
        )
        initialized = await Project.open(root).init()
        assert any("route `wrong`" in w for w in initialized.warnings) is told, (suites, tests)

    # One suite that fails on violations (its own `fail`, or the project's default) makes it an error.
    for suites, tests in (
        ([{**one, "contract": "warn"}, other], {}),
        ([one, {**other, "contract": "fail"}], {"contract": "warn"}),
    ):
        root = with_suites(
            mocked(tmp_path / f"e{len(list(tmp_path.iterdir()))}", [WRONG], CHARGE_CASE), suites, **tests
        )
        with pytest.raises(PreflightError) as caught:
            await Project.open(root).init()
        assert caught.value.code == "CONFIG_INVALID", (suites, tests)


FIRST_RUN = """\
name: Items
service: items
cases:
  - name: a wrong type
    request: {path: /items/2}
    expect: {status: 200}
"""
SECOND_RUN = """\
name: Items
service: items
cases:
  - name: a good item
    request: {path: /items/1}
    expect: {status: 200}
  - name: a new item
    request: {method: POST, path: /items, json: {id: 9, name: desk}}
    expect: {status: 201}
"""


async def test_the_report_page_the_notebook_and_runs_diff_show_violations_and_coverage(
    tmp_path: Path, service: int
) -> None:
    import preflight_sdk.faces.notebook  # noqa: F401  (installs the notebook's renderer)

    root = project(tmp_path / "p", service, FIRST_RUN)
    document = json.loads((root / "e2e.yaml").read_text())
    document["services"]["items"]["reset"] = "none"  # the second run reaches the same server
    (root / "e2e.yaml").write_text(json.dumps(document))
    async with (
        FakeEngine(images=["items:test"], first_port=service) as engine,
        environment(root, engine) as opened,
    ):
        first = await opened.run()
        (root / "tests" / "s.yaml").write_text(SECOND_RUN)
        second = await opened.run()
        page = await opened.get_artifact(first.run_id, "report.html")
        report = await opened.get_artifact(first.run_id, "report.json")
        diff = await opened.diff_runs(first.run_id, second.run_id)
    assert first.status == "failed" and second.status == "passed", wire(second)

    # report.html: the violation's row has its rule and line, the schema excerpt beside the value
    html = page.content
    [row] = [r for r in html.split("<tr ") if r.startswith('class="pfr-assert-failed"')]
    assert "<code>body.id</code>" in row and "contract <code>type</code>" in row
    assert "<small>openapi.yaml:42</small>" in row
    expected, actual = row.split("</td><td")[-2:]
    assert expected == ">{\n  &quot;type&quot;: &quot;integer&quot;\n}", row  # the rule of Item.id
    assert actual == ' class="pfr-actual">&quot;2&quot;</td></tr>', row  # the string the service sent
    # ... and the contracts section lists every operation, the one no case reached greyed.
    assert 'id="pfr-contracts"' in html and "1/2 operations" in html
    assert html.count('<tr class="pfr-uncovered"><td><code>POST /items</code>') == 1
    assert html.count('<tr class="pfr-uncovered">') == 1

    # report.json: the coverage of each contract, every operation listed, the unreached with no calls
    [recorded] = json.loads(report.content)["contracts"]
    assert (recorded["contract"], recorded["covered"], recorded["operations"], recorded["violations"]) == (
        "items",
        1,
        2,
        1,
    )
    assert {i["operation"]: i.get("calls", 0) for i in recorded["items"]} == {
        "GET /items/{id}": 1,
        "POST /items": 0,
    }

    # the notebook: one line per contract, with what no case reached
    text = first._repr_mimebundle_()["text/plain"]
    assert (
        "contract items (service, openapi.yaml): 1/2 operations, 1/3 statuses, 1 violation; "
        "not reached: POST /items"
    ) in text, text

    # runs diff: the coverage moved, and what it gained and lost
    [moved] = diff.contracts
    assert (moved.contract, moved.base_covered, moved.head_covered, moved.operations) == ("items", 1, 2, 2)
    assert (moved.newly_covered, moved.no_longer_covered) == (["POST /items"], [])
    assert (moved.base_violations, moved.head_violations) == (1, 0)
    assert diff.summary.endswith("; coverage items 1→2/2 operations"), diff.summary
