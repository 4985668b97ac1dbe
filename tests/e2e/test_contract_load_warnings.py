"""A mock route its contract forbids, in a suite that makes violations warnings, on every face.

The project has one mock (preflight's own, served for real) whose route answers what the mock's
contract forbids, and one suite whose `contract: warn` turns violations into warnings. Loading it
is no error: the CLI (`preflight setup`, `preflight run`, as text), an agent over MCP
(`preflight_setup`, `preflight_run`), the SDK and the notebook's view of the result each show the
same warning, with the route's line in e2e.yaml. No Docker: the project has no service.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN

from preflight_sdk import Project

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CONTRACT = {
    "openapi": "3.1.0",
    "info": {"title": "Payments", "version": "1"},
    "paths": {
        "/charges": {
            "post": {
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
                }
            }
        }
    },
}

E2E = """\
version: "1"
project: {name: contract-warnings}
mocks:
  payments:
    port: 0
    contract: payments.json
    routes:
      - name: wrong
        method: POST
        path: /charges
        response: {status: 201, body: {id: 7}}
tests:
  suites:
    - {id: charges, file: tests/charges.yaml, contract: warn}
"""

CASES = """\
name: Charges
cases:
  - name: a charge
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
    expect: {status: 201}
"""

WARNING = (
    "e2e.yaml:11: route `wrong` answers what the contract of mock `payments` forbids: "
    "body.id: 7 is not of type 'string' (payments.json:"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "warned"
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(E2E)
    (root / "payments.json").write_text(json.dumps(CONTRACT, indent=2))
    (root / "tests" / "charges.yaml").write_text(CASES)
    assert "response: {status: 201" in E2E.splitlines()[10]  # line 11: the route's answer
    return root


def _warned(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(WARNING)]


def _cli(root: Path, *args: str) -> list[str]:
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [
        line.removeprefix("warning: ") for line in done.stdout.splitlines() if line.startswith("warning: ")
    ]


async def test_every_face_shows_the_forbidden_route_as_a_load_warning_with_its_line(
    project: Path, tmp_path: Path
) -> None:
    # The CLI, as text: setup, then a run on the kept environment, then clean.
    assert len(_warned(_cli(project, "setup"))) == 1
    assert len(_warned(_cli(project, "run", "--keep"))) == 1
    _cli(project, "clean")

    # An agent over MCP: the setup result and the run's.
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(project)],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(180), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            setup = await client.call_tool("preflight_setup", {})
            run = await client.call_tool("preflight_run", {"keep": True})
            await client.call_tool("preflight_clean", {})
    assert setup.structured_content is not None and setup.structured_content["success"], setup
    assert len(_warned(setup.structured_content["data"]["warnings"])) == 1
    assert run.structured_content is not None and run.structured_content["success"], run
    data = run.structured_content["data"]
    assert data["status"] == "passed" and len(_warned(data["setup"]["warnings"])) == 1

    # The SDK, and the notebook's rendering of its result.
    async with Project.open(project) as sdk:
        result = await sdk.setup()
        [warning] = _warned(result.warnings)
        text = result._repr_mimebundle_()["text/plain"]  # type: ignore[attr-defined]
        assert f"warning: {warning}" in text
        ran = await sdk.run(keep=True)
    assert ran.setup is not None and _warned(ran.setup.warnings) == [warning]
