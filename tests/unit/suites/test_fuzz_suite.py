"""`runner: fuzz`: Schemathesis finds a planted bug from the contract, and reports it as a case.

The service is a real HTTP server on loopback that the fake engine's container publishes. Its
handler crashes on an empty name, a request no case of ours thought of; the contract allows it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from support.fake_engine import FakeEngine
from support.stub import environment, serve_in_thread, wire, write_project

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

    return Starlette(routes=[Route("/greet", greet, methods=["POST"]), Route("/health", health)])


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
