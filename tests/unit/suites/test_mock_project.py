"""Projects with mocks and no services: no Docker anywhere, mocks served for real over HTTP.

Every project here is opened with an engine whose daemon is down, so any Docker call would fail
the test: setting up, running and cleaning a project of mocks and tests must not need one.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from support.fake_engine import FakeEngine
from support.stub import case, wire

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.results.run import RunResult

pytestmark = pytest.mark.anyio

PAYMENTS: dict[str, Any] = {
    "port": 0,
    "routes": [
        {
            "name": "charge",
            "method": "POST",
            "path": "/charges",
            "when": {"body": {"amount": {"gt": 0}}},
            "response": {
                "status": 201,
                "body": {"id": "ch_{{counter}}", "amount": "{{request.body.amount}}"},
            },
        },
        {"method": "GET", "path": "/charges/:id", "response": {"body": {"id": "{{request.params.id}}"}}},
        {"method": "GET", "path": "/broken", "response": {"fault": "reset"}},
        {"method": "GET", "path": "/hang", "response": {"fault": "timeout"}},
    ],
}
GATEWAY: dict[str, Any] = {"port": 0, "routes": [{"path": "/ping", "response": {"body": "pong"}}]}


def write_project(
    root: Path,
    suites: list[dict[str, Any]],
    *,
    files: dict[str, str] | None = None,
    mocks: dict[str, Any] | None = None,
    services: dict[str, Any] | None = None,
) -> Path:
    """Write an e2e.yaml with `mocks` (default: payments and pay-gateway), `suites` and `files`."""
    root.mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "version": "1",
        "project": {"name": "mocked"},
        "mocks": {"payments": PAYMENTS, "pay-gateway": GATEWAY} if mocks is None else mocks,
        "tests": {"suites": suites},
    }
    if services:
        document["services"] = services
    (root / "e2e.yaml").write_text(json.dumps(document, indent=2))  # JSON is YAML
    for relative, text in (files or {}).items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


def yaml_suite(suite_id: str, text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A YAML suite entry and its file."""
    return {"id": suite_id, "file": f"tests/{suite_id}.yaml"}, {f"tests/{suite_id}.yaml": text}


def no_docker() -> FakeEngine:
    """An engine whose every call fails as if the Docker daemon were down."""
    return FakeEngine(daemon_up=False)


@asynccontextmanager
async def set_up(root: Path) -> AsyncIterator[Project]:
    """Set up the project at `root` (its mocks start), clean it afterwards."""
    project = Project.open(root, engine=no_docker())
    await project.setup()
    try:
        yield project
    finally:
        await project.clean()


async def run_yaml(tmp_path: Path, text: str) -> tuple[RunResult, Project, dict[str, int]]:
    """Set up a one-suite project, run it, and return the result and the mocks' ports (cleaned)."""
    entry, files = yaml_suite("s", text)
    root = write_project(tmp_path / "p", [entry], files=files)
    async with set_up(root) as project:
        result = await project.run()
        ports = {m.name: m.port for m in (await project.mock_requests()).mocks}
    return result, project, ports


# -- mock URLs in YAML steps and in process suites ---------------------------------------------


async def test_mocks_url_resolves_to_the_running_mock_in_a_yaml_step(tmp_path: Path) -> None:
    entry, files = yaml_suite(
        "s",
        """
        name: Payments
        cases:
          - name: charge
            request:
              method: POST
              url: "{{mocks.payments.url}}/charges"
              json: {amount: 5}
            expect:
              status: 201
              body: {id: ch_1, amount: 5}
        """,
    )
    root = write_project(tmp_path / "p", [entry], files=files)
    async with set_up(root) as project:
        result = await project.run()
        [traffic] = (await project.mock_requests("payments")).mocks
    assert result.status == "passed", wire(result)
    [sent] = traffic.requests
    assert sent.url == f"http://127.0.0.1:{traffic.port}/charges"
    assert (sent.matched_route, sent.status, sent.body) == ("charge", 201, {"amount": 5})


async def test_mock_urls_reach_pytest_and_shell_suites_as_environment_variables(tmp_path: Path) -> None:
    test_file = """
    import os
    import urllib.request


    def test_the_mock_answers_at_its_url():
        with urllib.request.urlopen(os.environ["PREFLIGHT_PAY_GATEWAY_URL"] + "/ping", timeout=5) as reply:
            assert reply.read() == b"pong"
    """
    caller = (
        "import os, urllib.request; "
        "urllib.request.urlopen(os.environ['PREFLIGHT_PAYMENTS_URL'] + '/charges/from-shell', timeout=5)"
    )
    suites = [
        {"id": "py", "runner": "pytest", "file": "tests/test_mock.py"},
        {"id": "sh", "runner": "shell", "command": ["python3", "-c", caller]},
    ]
    root = write_project(tmp_path / "p", suites, files={"tests/test_mock.py": test_file})
    async with set_up(root) as project:
        result = await project.run()
        payments, gateway = (await project.mock_requests()).mocks
    assert result.status == "passed", wire(result)
    assert [(r.url, r.status) for r in gateway.requests] == [(f"http://127.0.0.1:{gateway.port}/ping", 200)]
    assert [(r.url, r.status) for r in payments.requests] == [
        (f"http://127.0.0.1:{payments.port}/charges/from-shell", 200)
    ]


# -- expect.mock through the runner -------------------------------------------------------------


async def test_expect_mock_passes_and_fails_with_its_case_suite_and_run_windows(tmp_path: Path) -> None:
    first, first_file = yaml_suite(
        "first",
        """
        name: First
        sequential: false
        cases:
          - name: a charge is sent
            request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
            expect:
              status: 201
              mock: {name: payments, method: POST, path: /charges, count: 1, body: {amount: 5}}
          - name: no charge in this case
            request: {url: "{{mocks.payments.url}}/charges/ch_1"}
            expect:
              mock: {name: payments, method: POST, path: /charges, count: 1}
          - name: the charge is seen from the suite
            request: {url: "{{mocks.payments.url}}/charges/ch_1"}
            expect:
              mock:
                - {name: payments, method: POST, path: /charges, count: 1, since: suite}
                - {name: payments, method: GET, path: "/charges/:id", count: 2, since: suite}
          - name: a wrong amount
            request: {url: "{{mocks.payments.url}}/charges/ch_1"}
            expect:
              mock: {name: payments, method: POST, path: /charges, since: suite, body: {amount: 6}}
        """,
    )
    second, second_file = yaml_suite(
        "second",
        """
        name: Second
        sequential: false
        cases:
          - name: the run saw one charge
            request: {url: "{{mocks.pay-gateway.url}}/ping"}
            expect:
              mock:
                - {name: payments, method: POST, path: /charges, count: 1, since: run}
                - {name: payments, method: POST, path: /charges, count: 0, since: suite}
                - {name: payments, count: 4, since: run}
        """,
    )
    typo, typo_file = yaml_suite(
        "typo",
        """
        name: Typo
        cases:
          - name: an unknown mock
            request: {url: "{{mocks.payments.url}}/charges/ch_1"}
            expect:
              mock: {name: paymnts, count: 0}
        """,
    )
    root = write_project(
        tmp_path / "p", [first, second, typo], files={**first_file, **second_file, **typo_file}
    )
    async with set_up(root) as project:
        result = await project.run()

    assert case(result, "a charge is sent").status == "passed"
    assert case(result, "the charge is seen from the suite").status == "passed"
    assert case(result, "the run saw one charge").status == "passed"

    failure = case(result, "no charge in this case").failure
    assert failure is not None
    [count] = [a for a in failure.assertions if not a.passed]
    assert (count.path, count.expected, count.actual) == ("mock.payments.count", 1, 0)
    assert count.message == (
        "mock.payments.count: expected 1 POST /charges request(s), got 0; received: GET /charges/ch_1 → 200"
    )
    assert failure.summary == (
        "GET /charges/ch_1 returned 200, mock.payments.count: expected 1 POST /charges request(s), got 0"
    )

    failure = case(result, "a wrong amount").failure
    assert failure is not None
    [body] = [a for a in failure.assertions if not a.passed]
    assert (body.path, body.expected, body.actual) == ("mock.payments.body.amount", 6, 5)

    # A mock name that does not exist stops its suite before any request is sent.
    [typo_suite] = [s for s in result.suites if s.id == "typo"]
    assert typo_suite.status == "failed" and typo_suite.cases == []
    assert (
        typo_suite.error is not None
        and "MOCK_NOT_FOUND" in typo_suite.error
        and "paymnts" in typo_suite.error
    )


# -- failures involving a mock: what the report says --------------------------------------------


async def test_a_mock_404_names_the_closest_route_and_why_in_summary_and_fix(tmp_path: Path) -> None:
    result, _, ports = await run_yaml(
        tmp_path,
        """
        name: Refunds
        cases:
          - name: refund
            request:
              method: POST
              url: "{{mocks.payments.url}}/refunds?reason=dup"
              headers: {Authorization: "Bearer s3cr3t-token", X-Trace: t-1}
              json: {charge: ch_1, amount: 20}
            expect: {status: 201}
        """,
    )
    failure = case(result, "refund").failure
    assert failure is not None
    assert failure.summary == (
        "POST /refunds returned 404, expected 201; mock payments had no route for POST /refunds "
        "(closest: POST /charges, path segment 1 'refunds' != 'charges')"
    )
    assert failure.suggested_fix == (
        "mock `payments` had no route for POST /refunds (it answered 404): add or fix the route in "
        "mocks.payments.routes, or fix the request the service sends; the closest route, `charge` "
        "(POST /charges, mocks.payments.routes[0]), did not match: path segment 1 'refunds' != 'charges'"
    )
    data = wire(failure)
    [traffic] = data["diagnostics"]["mockRequests"]
    [sent] = traffic["requests"]
    assert sent["url"] == f"http://127.0.0.1:{ports['payments']}/refunds?reason=dup"
    assert sent["path"] == "/refunds"
    assert sent["status"] == 404
    assert sent["headers"]["authorization"] == "[redacted]"
    assert sent["headers"]["x-trace"] == "t-1"
    assert sent["body"] == {"charge": "ch_1", "amount": 20}
    # Closest first: fewest reasons, then file order.
    assert sent["closestRoutes"] == [
        {
            "route": "POST /charges",
            "index": 0,
            "name": "charge",
            "why": ["path segment 1 'refunds' != 'charges'"],
        },
        {
            "route": "GET /broken",
            "index": 2,
            "why": ["method POST != GET", "path segment 1 'refunds' != 'broken'"],
        },
        {
            "route": "GET /hang",
            "index": 3,
            "why": ["method POST != GET", "path segment 1 'refunds' != 'hang'"],
        },
    ]
    assert "matchedRoute" not in sent and "fault" not in sent
    assert "s3cr3t-token" not in json.dumps(wire(result))


async def test_a_failed_condition_is_quoted_as_the_reason(tmp_path: Path) -> None:
    result, _, _ = await run_yaml(
        tmp_path,
        """
        name: Charges
        cases:
          - name: zero amount
            request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 0}}
            expect: {status: 201}
        """,
    )
    failure = case(result, "zero amount").failure
    assert failure is not None
    assert failure.summary == (
        "POST /charges returned 404, expected 201; mock payments had no route for POST /charges "
        "(closest: POST /charges, body.amount: expected to be > 0, got 0)"
    )
    assert failure.suggested_fix is not None
    assert failure.suggested_fix.endswith(
        "the closest route, `charge` (POST /charges, mocks.payments.routes[0]), did not match: "
        "body.amount: expected to be > 0, got 0"
    )


async def test_a_mock_without_routes_says_so_in_the_fix(tmp_path: Path) -> None:
    entry, files = yaml_suite(
        "s",
        """
        name: Empty
        cases:
          - name: anything
            request: {url: "{{mocks.empty.url}}/x"}
            expect: {status: 200}
        """,
    )
    root = write_project(tmp_path / "p", [entry], files=files, mocks={"empty": {"port": 0}})
    async with set_up(root) as project:
        result = await project.run()
    failure = case(result, "anything").failure
    assert failure is not None
    assert failure.summary == "GET /x returned 404, expected 200; mock empty had no route for GET /x"
    assert failure.suggested_fix == (
        "mock `empty` had no route for GET /x (it answered 404) and declares no routes: "
        "add one under mocks.empty.routes"
    )


async def test_a_fault_shows_in_the_mock_request_record_not_a_bare_status_0(tmp_path: Path) -> None:
    result, _, _ = await run_yaml(
        tmp_path,
        """
        name: Faults
        cases:
          - name: reset
            request: {url: "{{mocks.payments.url}}/broken"}
            expect: {status: 200}
          - name: timeout
            request: {url: "{{mocks.payments.url}}/hang", timeout: 300ms}
            expect: {status: 200}
        """,
    )
    for name, fault in (("reset", "reset"), ("timeout", "timeout")):
        failure = case(result, name).failure
        assert failure is not None and failure.diagnostics is not None
        [traffic] = failure.diagnostics.mock_requests
        records = traffic.requests
        assert records and all(r.fault == fault for r in records), records
        assert all(
            r.status == 0 and r.matched_route == f"GET /{'broken' if fault == 'reset' else 'hang'}"
            for r in records
        )
        assert all(r.closest_routes is None for r in records)
        assert wire(records[0])["fault"] == fault


# -- errors: not running, unknown mock ------------------------------------------------------------


async def test_run_without_setup_sets_up_first_and_says_when_docker_is_missing(tmp_path: Path) -> None:
    entry, files = yaml_suite(
        "s", "name: S\ncases:\n  - name: c\n    request: {url: 'http://127.0.0.1:9/'}\n"
    )
    with_services = write_project(
        tmp_path / "services",
        [entry],
        files=files,
        mocks={},
        services={"api": {"build": {"image": "busybox:test"}, "container": {"ports": ["0:8080"]}}},
    )
    mocks_only = write_project(tmp_path / "mocks", [entry], files=files)
    with pytest.raises(PreflightError) as caught:
        await Project.open(with_services, engine=no_docker()).run()
    assert caught.value.code == "DOCKER_ERROR", caught.value
    # A project of mocks and tests only needs no Docker: run starts its mocks, runs, and keeps them.
    project = Project.open(mocks_only, engine=no_docker())
    try:
        result = await project.run()
        assert result.totals.total == 1
        assert (await project.status()).state == "running"
    finally:
        await project.clean()


async def test_mock_requests_errors_name_the_valid_mocks_and_the_missing_setup(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", [])
    project = Project.open(root, engine=no_docker())
    with pytest.raises(PreflightError) as caught:
        await project.mock_requests()
    assert caught.value.code == "MOCKS_NOT_RUNNING"
    assert caught.value.hint is not None and "setup" in caught.value.hint

    async with set_up(root) as running:
        with pytest.raises(PreflightError) as caught:
            await running.mock_requests("paymnts")
        assert caught.value.code == "MOCK_NOT_FOUND"
        assert caught.value.hint == "valid mocks: payments, pay-gateway"
        assert caught.value.details == {"mock": "paymnts", "valid": ["payments", "pay-gateway"]}
        assert [m.name for m in (await running.mock_requests()).mocks] == ["payments", "pay-gateway"]

    with pytest.raises(PreflightError) as caught:
        await running.mock_requests("payments")
    assert caught.value.code == "MOCKS_NOT_RUNNING"

    bare = write_project(tmp_path / "bare", [], mocks={})
    with pytest.raises(PreflightError) as caught:
        await Project.open(bare, engine=no_docker()).mock_requests("payments")
    assert caught.value.code == "MOCK_NOT_FOUND"
    assert caught.value.message == "this project declares no mocks"
