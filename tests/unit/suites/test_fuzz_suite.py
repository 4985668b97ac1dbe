"""`runner: fuzz`: Schemathesis finds a planted bug from the contract, and reports it as a case.

The service is a real HTTP server on loopback that the fake engine's container publishes. Its
handler crashes on an empty name, a request no case of ours thought of; the contract allows it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from support.fake_engine import FakeEngine
from support.stub import environment, serve_in_thread, wire, write_project

from preflight_sdk.core.results.grouping import group_failures
from preflight_sdk.core.results.run import RunResult

pytestmark = pytest.mark.anyio

CONTRACT = """\
openapi: 3.1.0
info: {title: Greeter, version: "1"}
paths:
  /greet:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, maxLength: 20}
      responses:
        "200":
          description: A greeting.
          content:
            application/json:
              schema: {type: object, required: [greeting], properties: {greeting: {type: string}}}
        "400":
          description: Not a greeting request.
  /health:
    get:
      responses:
        "200":
          description: Up.
          content:
            application/json:
              schema: {type: object, properties: {ok: {type: boolean}}}
"""


def app(*, fixed: bool) -> Starlette:
    async def greet(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return Response(status_code=400)
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            return Response(status_code=400)
        name = body["name"]
        if not fixed:
            first = name[0]  # the planted bug: an empty name raises IndexError (a 500)
            return JSONResponse({"greeting": f"hello, {first}{name[1:]}"})
        return JSONResponse({"greeting": f"hello, {name or 'stranger'}"})

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def document(request: Request) -> Response:
        return JSONResponse(yaml.safe_load(CONTRACT))

    return Starlette(
        routes=[
            Route("/greet", greet, methods=["POST"]),
            Route("/health", health),
            Route("/openapi.json", document),  # for a contract the service serves itself
        ]
    )


@pytest.fixture(scope="module")
def buggy() -> Iterator[int]:
    with serve_in_thread(app(fixed=False)) as url:
        yield int(url.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def fixed() -> Iterator[int]:
    with serve_in_thread(app(fixed=True)) as url:
        yield int(url.rsplit(":", 1)[1])


def project(root: Path, **suite: Any) -> Path:
    document = {
        "project": {"name": "fuzzed"},
        "services": {
            "greeter": {
                "build": {"image": "greeter:test"},
                "container": {"ports": ["0:8000"]},
                "contract": "openapi.yaml",
            }
        },
        "tests": {
            "suites": [
                {
                    "id": "fuzz",
                    "runner": "fuzz",
                    "service": "greeter",
                    "maxExamples": 60,
                    "timeout": "60s",
                    **suite,
                }
            ]
        },
    }
    return write_project(root, document, files={"openapi.yaml": CONTRACT})


async def run_on(root: Path, port: int) -> RunResult:
    async with (
        FakeEngine(images=["greeter:test"], first_port=port) as engine,
        environment(root, engine) as opened,
    ):
        return await opened.run()


async def test_fuzzing_finds_the_crash_on_an_empty_string_and_reports_the_minimal_request(
    tmp_path: Path, buggy: int
) -> None:
    result = await run_on(project(tmp_path / "p"), buggy)
    [suite] = result.suites
    assert (suite.runner, suite.status) == ("fuzz", "failed"), wire(result)
    by_operation = {c.name.split(" (")[0]: c for c in suite.cases}
    assert set(by_operation) == {"POST /greet", "GET /health"}
    assert by_operation["GET /health"].status == "passed"
    crash = by_operation["POST /greet"]
    assert crash.status == "failed" and crash.failure is not None
    failure = crash.failure
    assert failure.request is not None and failure.request.body in (
        {"name": ""},
        '{"name": ""}',
        '{"name":""}',
    ), failure.request
    assert failure.response is not None and failure.response.status == 500
    assert "Server error" in failure.error or "server error" in failure.error.lower(), failure.error
    assert failure.output is not None and "curl -X POST" in failure.output and "/greet" in failure.output
    assert failure.summary.startswith("fuzzing POST /greet: POST /greet failed")


async def test_the_fixed_service_passes_the_same_fuzz_suite(tmp_path: Path, fixed: int) -> None:
    result = await run_on(project(tmp_path / "p"), fixed)
    assert result.status == "passed", wire(result)
    assert [c.status for c in result.suites[0].cases] == ["passed", "passed"]


async def test_max_examples_bounds_how_many_requests_each_operation_gets(tmp_path: Path, fixed: int) -> None:
    result = await run_on(project(tmp_path / "p", maxExamples=7), fixed)
    assert result.status == "passed", wire(result)
    counts = [int(c.name.split(" (")[1].split()[0]) for c in result.suites[0].cases]
    assert len(counts) == 2 and all(1 <= n <= 7 for n in counts), [c.name for c in result.suites[0].cases]


async def test_a_contract_the_service_serves_drives_the_fuzzing_too(tmp_path: Path, buggy: int) -> None:
    root = project(tmp_path / "p")
    document = json.loads((root / "e2e.yaml").read_text())
    document["services"]["greeter"]["contract"] = {"served": "/openapi.json"}
    (root / "e2e.yaml").write_text(json.dumps(document))
    result = await run_on(root, buggy)
    [suite] = result.suites
    assert {c.name.split(" (")[0]: c.status for c in suite.cases} == {
        "POST /greet": "failed",
        "GET /health": "passed",
    }, wire(result)


async def test_without_the_extra_a_fuzz_suite_is_a_clear_error_naming_it(
    tmp_path: Path, fixed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "schemathesis", None)  # `import schemathesis` raises ImportError
    result = await run_on(project(tmp_path / "p"), fixed)
    [suite] = result.suites
    assert suite.status == "failed" and suite.cases == []
    assert suite.error is not None
    assert suite.error.startswith("[EXTRA_NOT_INSTALLED] suite `fuzz` (runner fuzz) needs Schemathesis")
    assert "preflight-sdk[contracts]" in suite.error


class Slow:
    """A greeter whose first answer takes `first` seconds and every later one `later`; it counts requests."""

    def __init__(self, first: float, later: float) -> None:
        self.first, self.later = first, later
        self.received = 0

    def app(self) -> Starlette:
        async def greet(request: Request) -> Response:
            self.received += 1
            await anyio.sleep(self.first if self.received == 1 else self.later)
            return JSONResponse({"greeting": "hello"})

        async def health(request: Request) -> Response:
            return JSONResponse({"ok": True})

        return Starlette(routes=[Route("/greet", greet, methods=["POST"]), Route("/health", health)])


@pytest.fixture
def slow() -> Iterator[tuple[Slow, int]]:
    service = Slow(first=0.5, later=8.0)
    with serve_in_thread(service.app()) as url:
        yield service, int(url.rsplit(":", 1)[1])


async def test_a_suite_whose_budget_runs_out_stops_within_it_says_so_and_leaves_nothing_running(
    tmp_path: Path, slow: tuple[Slow, int]
) -> None:
    service, port = slow
    result = await run_on(project(tmp_path / "p", timeout="3s"), port)
    [suite] = result.suites
    # The second answer would take 8s: the 3s budget gives up that request rather than wait for it.
    assert suite.error is None and suite.status == "passed", wire(result)
    assert suite.duration < 5_000, (suite.duration, wire(result))
    by_operation = {c.name.split(" (")[0]: c for c in suite.cases}
    assert set(by_operation) == {"POST /greet", "GET /health"}, wire(result)
    greet, health = by_operation["POST /greet"], by_operation["GET /health"]
    assert (greet.status, greet.name) == ("passed", "POST /greet (1 example, stopped by the time budget)")
    assert (health.status, health.skip_reason) == (
        "skipped",
        "not fuzzed: the suite's time budget (3s) ran out first",
    )
    assert suite.warnings == [
        "the suite's time budget (3s) ran out while fuzzing POST /greet: "
        "0 of 2 operations fuzzed to the end, 1 not fuzzed"
    ]
    # Nothing is left sending requests: the one in flight was given up, and no other follows it.
    assert service.received == 2
    await anyio.sleep(1.5)
    assert service.received == 2


async def test_a_budget_spent_before_any_answer_fails_the_suite_saying_why(
    tmp_path: Path, slow: tuple[Slow, int]
) -> None:
    service, port = slow
    service.first = 8.0
    result = await run_on(project(tmp_path / "p", timeout="1s"), port)
    [suite] = result.suites
    assert suite.status == "failed" and suite.duration < 3_000, wire(result)
    assert suite.error == (
        "the suite's time budget (1s) ran out before `greeter` answered any request: "
        "give the suite a longer `timeout`"
    )
    assert [c.skip_reason for c in suite.cases] == [
        "stopped by the suite's time budget (1s) before the service answered",
        "not fuzzed: the suite's time budget (1s) ran out first",
    ]
    assert service.received == 1


async def test_a_cancelled_run_stops_fuzzing_before_its_next_request(tmp_path: Path) -> None:
    counted = Slow(first=0.2, later=0.2)
    with serve_in_thread(counted.app()) as url:
        root = project(tmp_path / "p", timeout="60s", maxExamples=1000)
        async with (
            FakeEngine(images=["greeter:test"], first_port=int(url.rsplit(":", 1)[1])) as engine,
            environment(root, engine) as opened,
        ):
            with anyio.move_on_after(2.5):
                await opened.run()
            sent = counted.received
            assert sent >= 2  # it was fuzzing when the run was cancelled
            await anyio.sleep(1.5)
            assert counted.received <= sent + 1  # at most the request in flight when it was cancelled


TWO_CRASHES = """\
openapi: 3.1.0
info: {title: Greeter, version: "1"}
paths:
  /greet:
    post: &named
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string, maxLength: 20}}}
      responses:
        "200": {description: Done.}
        "400": {description: Not a named request.}
  /wave:
    post: *named
"""


class Crashing:
    """Two handlers that share the planted bug and log the same traceback line in their container."""

    def __init__(self) -> None:
        self.engine: FakeEngine | None = None

    def app(self) -> Starlette:
        async def named(request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                return Response(status_code=400)
            if not isinstance(body, dict) or not isinstance(body.get("name"), str):
                return Response(status_code=400)
            if body["name"] == "" and self.engine is not None:
                for ref in list(self.engine.containers):  # the one container: the greeter's
                    self.engine.write_log(ref, "IndexError: string index out of range", stream="stderr")
            return JSONResponse({"first": body["name"][0]})

        return Starlette(
            routes=[Route("/greet", named, methods=["POST"]), Route("/wave", named, methods=["POST"])]
        )


async def test_identical_failures_are_one_group_each_with_the_services_log_lines_of_its_moment(
    tmp_path: Path,
) -> None:
    crashing = Crashing()
    root = write_project(
        tmp_path / "p",
        {
            "project": {"name": "fuzzed"},
            "services": {
                "greeter": {
                    "build": {"image": "greeter:test"},
                    "container": {"ports": ["0:8000"]},
                    "contract": "openapi.yaml",
                }
            },
            "tests": {"suites": [{"id": "fuzz", "runner": "fuzz", "service": "greeter", "maxExamples": 40}]},
        },
        files={"openapi.yaml": TWO_CRASHES},
    )
    with serve_in_thread(crashing.app()) as url:
        async with (
            FakeEngine(images=["greeter:test"], first_port=int(url.rsplit(":", 1)[1])) as engine,
            environment(root, engine) as opened,
        ):
            crashing.engine = engine
            result = await opened.run()
    [suite] = result.suites
    assert [(c.name.split(" (")[0], c.status) for c in suite.cases] == [
        ("POST /greet", "failed"),
        ("POST /wave", "failed"),
    ], wire(result)
    for failed in suite.cases:
        assert failed.failure is not None and failed.failure.diagnostics is not None
        logs = [line for log in failed.failure.diagnostics.container_logs for line in log.lines]
        assert any("IndexError: string index out of range" in line for line in logs), logs
    # As every face shows the run: one failure, told once, that names the other case of its cause.
    [shown] = group_failures(result).suites
    [head] = shown.cases
    assert head.failure is not None and head.failure.same_cause is not None
    assert (head.failure.same_cause.count, head.failure.same_cause.cases) == (2, [suite.cases[1].id])
