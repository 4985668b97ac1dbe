"""A contract the running service serves itself (`contract: {served: /openapi.json}`).

The service is a real HTTP server on loopback (starlette on uvicorn, in a thread) that the fake
engine's container publishes; it serves its own OpenAPI document, which can be made to go missing
or to be broken. The run fetches it after setup and checks every answer with it; `check_response`
and `generate_cases` fetch it from the running environment.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from support.fake_engine import FakeEngine
from support.stub import case, environment, serve_in_thread, wire, write_project

from preflight_sdk import PreflightError, Project

pytestmark = pytest.mark.anyio

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Items", "version": "1"},
    "paths": {
        "/items/{id}": {
            "get": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "The item.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id", "name"],
                                    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                                }
                            }
                        },
                    },
                    "404": {"description": "No such item."},
                },
            }
        }
    },
}


class Items:
    """The service: items 1 (good) and 2 (a wrong type), and its document, as `serving` says."""

    def __init__(self) -> None:
        self.serving = "document"  # or "missing" (404), "broken" (not OpenAPI), "swagger"
        self.fetched = 0

    def app(self) -> Starlette:
        async def item(request: Request) -> Response:
            answers = {"1": {"id": 1, "name": "lamp"}, "2": {"id": "2", "name": "chair"}}
            found = answers.get(request.path_params["id"])
            return JSONResponse(found) if found else Response(status_code=404)

        async def document(request: Request) -> Response:
            self.fetched += 1
            if self.serving == "missing":
                return PlainTextResponse("not here", status_code=404)
            if self.serving == "broken":
                return PlainTextResponse(
                    "openapi: 3.1.0\ninfo: {title: Items\npaths: [", media_type="application/yaml"
                )
            if self.serving == "swagger":
                return JSONResponse(
                    {"swagger": "2.0", "info": {"title": "Items", "version": "1"}, "paths": {}}
                )
            return JSONResponse(DOCUMENT)

        return Starlette(routes=[Route("/items/{id}", item), Route("/openapi.json", document)])


@pytest.fixture
def items() -> Iterator[tuple[Items, int]]:
    service = Items()
    with serve_in_thread(service.app()) as url:
        yield service, int(url.rsplit(":", 1)[1])


CASES = """\
name: Items
service: items
cases:
  - name: a good item
    request: {path: /items/1}
    expect: {status: 200}
  - name: a wrong type
    request: {path: /items/2}
    expect: {status: 200}
"""


def project(root: Path, **tests: Any) -> Path:
    document = {
        "project": {"name": "served"},
        "services": {
            "items": {
                "build": {"image": "items:test"},
                "container": {"ports": ["0:8000"]},
                "contract": {"served": "/openapi.json"},
            }
        },
        "tests": {"suites": [{"id": "s", "file": "tests/s.yaml"}], **tests},
    }
    return write_project(root, document, files={"tests/s.yaml": CASES})


async def test_a_served_contract_is_fetched_after_setup_and_checks_every_answer(
    tmp_path: Path, items: tuple[Items, int]
) -> None:
    service, port = items
    async with (
        FakeEngine(images=["items:test"], first_port=port) as engine,
        environment(project(tmp_path / "p"), engine) as opened,
    ):
        result = await opened.run()
    assert [c.status for c in result.suites[0].cases] == ["passed", "failed"], wire(result)
    failure = case(result, "a wrong type").failure
    assert failure is not None
    [broken] = [a for a in failure.assertions if not a.passed]
    assert (broken.operator, broken.path, broken.rule) == ("contract", "body.id", "type")
    url = f"http://127.0.0.1:{port}/openapi.json"
    assert broken.document is not None and broken.document.startswith(f"{url}:")
    [coverage] = result.contracts or []
    assert (coverage.contract, coverage.kind, coverage.file) == ("items", "service", url)
    assert (coverage.operations, coverage.covered, coverage.violations) == (1, 1, 1)
    assert service.fetched == 1  # once per run, whatever the number of answers


@pytest.mark.parametrize(
    ("serving", "why"),
    [
        ("missing", "cannot fetch the contract service `items` serves at {url}: GET answered 404 Not Found"),
        (
            "broken",
            "the contract service `items` serves at {url} does not load: {url}:3:6: $: YAML syntax error",
        ),
        (
            "swagger",
            "the contract service `items` serves at {url} does not load: {url}:1:12: $.swagger: "
            "this is a Swagger 2.0 document",
        ),
    ],
)
async def test_a_served_contract_that_cannot_be_fetched_or_loaded_is_a_coded_error_naming_the_url(
    tmp_path: Path, items: tuple[Items, int], serving: str, why: str
) -> None:
    service, port = items
    service.serving = serving
    url = f"http://127.0.0.1:{port}/openapi.json"
    async with (
        FakeEngine(images=["items:test"], first_port=port) as engine,
        environment(project(tmp_path / "p"), engine) as opened,
    ):
        with pytest.raises(PreflightError) as caught:
            await opened.run()
        assert caught.value.code == "CONTRACT_UNAVAILABLE"
        assert caught.value.message.startswith(why.format(url=url)), caught.value.message
        assert caught.value.hint is not None and "`contract:`" in caught.value.hint
        [run] = [r for r in (await opened.list_runs()).runs if r.kind == "test"]
        assert run.status == "error"

        # In warn mode the run goes on without it and says so.
        warned = project(tmp_path / "w", contract="warn")
    async with (
        FakeEngine(images=["items:test"], first_port=port) as engine,
        environment(warned, engine) as opened,
    ):
        result = await opened.run()
    assert result.status == "passed", wire(result)
    [warning] = result.warnings
    assert warning.startswith("contract of items not checked: ") and url in warning


async def test_check_response_and_generate_cases_fetch_a_served_contract_from_the_running_environment(
    tmp_path: Path, items: tuple[Items, int]
) -> None:
    service, port = items
    root = project(tmp_path / "p")
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).check_response("items", "GET", "/items/2", 200, body='{"id": "2"}')
    assert caught.value.code == "NOT_RUNNING"
    assert "serves its contract at /openapi.json" in caught.value.message
    assert caught.value.hint is not None and "setup" in caught.value.hint

    async with (
        FakeEngine(images=["items:test"], first_port=port) as engine,
        environment(root, engine) as opened,
    ):
        checked = await opened.check_response(
            "items", "GET", "/items/2", 200, body='{"id": "2", "name": "chair"}'
        )
        assert [(v.path, v.rule) for v in checked.violations] == [("body.id", "type")], wire(checked)
        assert checked.file == f"http://127.0.0.1:{port}/openapi.json"
        again = await opened.check_response("items", "GET", "/items/1", 200, body='{"id": 1, "name": "lamp"}')
        assert again.violations == [] and service.fetched == 1  # one fetch serves the same container

        generated = await opened.generate_cases("items")
        written = yaml.safe_load((root / generated.file).read_text())
        assert [c["request"]["path"] for c in written["cases"]] == ["/items/1"]

    with pytest.raises(PreflightError) as caught:  # cleaned: nothing serves it any more
        await Project.open(root).generate_cases("items", output="tests/more.yaml")
    assert caught.value.code == "NOT_RUNNING"
