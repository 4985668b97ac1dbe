"""Contracts through the faces, on real Docker: the CLI and the MCP server as real processes.

A fixture service (preflight-base/python, plain http.server) answers against its OpenAPI document
in three wrong ways, a wrong type, a missing required field and an undocumented status: each
fails its own case, naming the JSON path, the schema rule and the document's line, through the
CLI and through MCP. The shop example runs with its contracts on, and the starter cases
`preflight generate cases` writes from the orders document pass as generated.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN, preflight_json
from support.docker import force_clean

pytestmark = [pytest.mark.anyio, pytest.mark.docker, pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

CONTRACT = """\
openapi: 3.0.3
info: {title: Items, version: "1"}
paths:
  /items/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: The item.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Item"}
        "404":
          description: No such item.
components:
  schemas:
    Item:
      type: object
      required: [id, name]
      properties:
        id: {type: integer}
        name: {type: string}
"""

APP = """\
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWERS = {
    "/items/1": (200, {"id": 1, "name": "lamp"}),
    "/items/2": (200, {"id": "2", "name": "chair"}),
    "/items/3": (200, {"id": 3}),
    "/items/4": (500, {"error": "boom"}),
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        status, body = ANSWERS.get(self.path, (404, {"error": "no such item"}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
"""

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
  - name: a missing field
    request: {path: /items/3}
    expect: {status: 200}
  - name: an undocumented status
    request: {path: /items/4}
"""

# Where each way is stated in CONTRACT: Item.id's `type`, Item's `required`, the `responses` key.
EXPECTED = {
    "a wrong type": ("body.id", "type", "openapi.yaml:22"),
    "a missing field": ("body", "required", "openapi.yaml:20"),
    "an undocumented status": ("status", "status", "openapi.yaml:8"),
}


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("contracts") / "items"
    root.mkdir()
    files = {
        "openapi.yaml": CONTRACT,
        "app/app.py": APP,
        "app/Dockerfile": 'FROM preflight-base/python\nCOPY app.py /app.py\nCMD ["python3", "/app.py"]\n',
        "tests/items.yaml": CASES,
        "e2e.yaml": textwrap.dedent("""\
            version: "1"
            project: {name: contract-faces}
            services:
              items:
                build: {image: "preflight-test/contract-items:latest", dockerfile: app/Dockerfile, context: app}
                container: {ports: ["0:8000"], healthcheck: {path: /items/1}}
                contract: openapi.yaml
            tests:
              suites:
                - {id: items, file: tests/items.yaml}
            """),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    try:
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=180)
        force_clean(root)


class Faced:
    """One run of the items project through a face, and a `check_response` of a held answer."""

    def __init__(self, run: dict[str, Any], checked: dict[str, Any]) -> None:
        self.cases = {c["name"]: c for c in run["suites"][0]["cases"]}
        self.contracts = run["contracts"]
        self.checked = checked


@pytest.fixture(scope="module")
def through_cli(items: Path) -> Faced:
    reply = preflight_json(items, "run", timeout=600)
    assert reply["success"] is True, reply
    checked = subprocess.run(
        [str(BIN / "preflight"), "check-response", "items", "--method", "GET", "--path", "/items/2",
         "--status", "200", "--body", '{"id": "2", "name": "chair"}', "-C", str(items), "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert checked.returncode == 1, checked.stderr  # a violation is a failing verdict
    return Faced(reply["data"], json.loads(checked.stdout)["data"])


@pytest.fixture(scope="module")
def through_mcp(items: Path, tmp_path_factory: pytest.TempPathFactory) -> Faced:
    folder = tmp_path_factory.mktemp("mcp")
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        # `contracts` is an opt-in group: named here, its tools are served beside the default ones.
        args=["--project", str(items), "--call-budget", "300", "--tools", "environment,runs,contracts"],
        env=dict(os.environ),
        cwd=folder,
    )

    async def call() -> Faced:
        with anyio.fail_after(600), (folder / "server.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
                reply = await client.call_tool("preflight_run", {}, read_timeout_seconds=500)
                envelope = json.loads(reply.content[0].text)  # type: ignore[union-attr]
                assert envelope["success"] is True, envelope
                checked = await client.call_tool(
                    "preflight_check_response",
                    {"service": "items", "method": "GET", "path": "/items/4", "status": 500},
                )
                text = checked.content[0].text  # type: ignore[union-attr]
                return Faced(envelope["data"], json.loads(text)["data"])

    return anyio.run(call)


FACES = ["through_cli", "through_mcp"]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("way", list(EXPECTED))
def test_each_way_an_answer_breaks_its_contract_fails_its_case_naming_path_rule_and_line(
    face: str, way: str, request: pytest.FixtureRequest
) -> None:
    faced: Faced = request.getfixturevalue(face)
    assert faced.cases[way]["status"] == "failed", faced.cases[way]
    [broken] = [a for a in faced.cases[way]["failure"]["assertions"] if not a["passed"]]
    path, rule, document = EXPECTED[way]
    assert (broken["operator"], broken["path"], broken["rule"], broken["document"]) == (
        "contract",
        path,
        rule,
        document,
    ), broken


@pytest.mark.parametrize("face", FACES)
def test_a_conforming_answer_passes_and_the_coverage_counts_the_three_violations(
    face: str, request: pytest.FixtureRequest
) -> None:
    faced: Faced = request.getfixturevalue(face)
    assert faced.cases["a good item"]["status"] == "passed"
    assert len(faced.cases) == 4
    [coverage] = faced.contracts
    assert (coverage["contract"], coverage["covered"], coverage["violations"]) == ("items", 1, 3)


def test_check_response_checks_a_held_answer_through_the_cli(through_cli: Faced) -> None:
    [violation] = through_cli.checked["violations"]
    assert (violation["path"], violation["rule"], violation["line"]) == ("body.id", "type", 22)


def test_check_response_checks_a_held_answer_through_mcp(through_mcp: Faced) -> None:
    assert [(v["path"], v["rule"], v["line"]) for v in through_mcp.checked["violations"]] == [
        ("status", "status", 8)
    ]


@pytest.fixture
def shop(tmp_path: Path) -> Any:
    root = tmp_path / "shop"
    # Without what a run of the example in place may have left (its .preflight/ state and runs).
    shutil.copytree(
        REPO / "docs" / "examples" / "shop", root, ignore=shutil.ignore_patterns(".preflight", "generated")
    )
    try:
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=180)
        force_clean(root)


def test_the_shop_passes_with_contracts_on_and_its_generated_cases_pass_as_generated(shop: Path) -> None:
    generated = preflight_json(shop, "generate", "cases", "--service", "orders")
    assert generated["success"] is True, generated
    data = generated["data"]
    assert data["file"] == "tests/generated/orders.yaml"
    assert [c["operation"] for c in data["cases"]] == [
        "GET /health", "POST /orders", "GET /orders/{id}", "POST /orders/{id}/refund"
    ]  # fmt: skip
    again = preflight_json(shop, "generate", "cases", "--service", "orders")
    assert again["success"] is False and again["error"]["code"] == "INVALID_INPUT"
    assert "never write over a file" in again["error"]["message"]

    config = yaml.safe_load((shop / "e2e.yaml").read_text())
    config["tests"]["suites"].append({"id": "orders-generated", "file": data["file"]})
    (shop / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    reply = preflight_json(shop, "run", timeout=900)
    assert reply["success"] is True, reply
    result = reply["data"]
    assert result["status"] == "passed", result["summary"]
    suites = {s["id"]: s for s in result["suites"]}
    assert suites["orders-generated"]["passed"] == 4
    coverage = {c["contract"]: c for c in result["contracts"]}
    assert coverage["orders"]["covered"] == coverage["orders"]["operations"] == 4
    assert coverage["orders"].get("violations", 0) == 0  # a zero is left out of the wire form
    assert coverage["payments"]["kind"] == "mock" and coverage["payments"].get("violations", 0) == 0


PLUGIN_TESTS = """\
import httpx


def test_a_good_item(preflight_env, preflight_contract):
    preflight_contract("items", httpx.get(preflight_env.url("items") + "/items/1"))


def test_a_wrong_type(preflight_env, preflight_contract):
    preflight_contract("items", httpx.get(preflight_env.url("items") + "/items/2"))
"""


def test_the_pytest_fixture_fails_a_test_whose_response_breaks_the_contract(items: Path) -> None:
    (items / "pytests").mkdir()
    (items / "pytests" / "test_items.py").write_text(PLUGIN_TESTS)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    done = subprocess.run(
        [str(BIN / "python"), "-m", "pytest", "-p", "no:cacheprovider", "--preflight=.", "pytests", "-q"],
        cwd=items, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "1 failed, 1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert (
        "GET /items/{id} → 200 breaks items's contract: body.id: '2' is not of type 'integer'" in done.stdout
    )
    assert "openapi.yaml:22" in done.stdout
