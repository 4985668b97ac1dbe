"""One redaction policy in every output: `run --json`, report.json, cases/*.json, junit.xml, events,
MCP replies and `mock_requests`, through the real console scripts (a mocks-only project: no Docker)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = Path(sys.executable).parent
# Every secret the suite sends or the mock answers; none may appear in any output.
SECRETS = (
    "hdr-custom-auth",
    "hdr-access-key",
    "q-api-key",
    "q-token",
    "body-pw",
    "url-pw",
    "extra-pin",
    "answer-token",
    "db-pw",
)

CONFIG = """\
project: {name: redaction}
redact: [pin]
mocks:
  vault:
    port: 0
    routes:
      - path: /login
        method: POST
        response:
          status: 200
          headers: {X-Session-Id: answer-token}
          body: {accessToken: answer-token, user: alice}
tests:
  suites:
    - {id: secrets, file: tests/secrets.yaml}
"""

SUITE = """\
name: secrets
cases:
  - name: login leaks nothing
    request:
      method: POST
      url: "http://alice:url-pw@127.0.0.1:{{mocks.vault.port}}/login?api_key=q-api-key&token=q-token&page=2"
      headers: {X-Custom-Auth: hdr-custom-auth, X-Access-Key: hdr-access-key, X-Db-Password: db-pw}
      json: {user: alice, password: body-pw, pin: extra-pin}
    expect:
      status: 201
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "tests" / "secrets.yaml").write_text(SUITE, encoding="utf-8")
    return root


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_run_json_and_every_run_file_hide_the_secrets(project: Path) -> None:
    done = subprocess.run(
        [str(BIN / "preflight"), "run", "--json", "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert done.returncode == 1, done.stderr[-2000:]
    envelope = json.loads(done.stdout)
    [case] = envelope["data"]["suites"][0]["cases"]
    request = case["failure"]["request"]
    assert request["headers"]["X-Custom-Auth"] == "[redacted]"
    assert "alice:***@" in request["url"] and "page=2" in request["url"]
    assert request["body"]["user"] == "alice" and request["body"]["pin"] == "[redacted]"
    assert _leaks(done.stdout) == []
    [folder] = (project / ".preflight" / "runs").iterdir()
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"report.json", "junit.xml", "events.ndjson"}
    assert any(p.parent.name == "cases" for p in files)
    for path in files:
        assert _leaks(path.read_text(encoding="utf-8")) == [], path.name


@pytest.mark.anyio
async def test_mcp_replies_and_mock_requests_hide_the_secrets(project: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(project)],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(90), (tmp_path / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            setup = await client.call_tool("preflight_setup", {})
            assert setup.structured_content and setup.structured_content["success"], setup.structured_content
            run = await client.call_tool("preflight_run", {})
            journal = await client.call_tool("preflight_mock_requests", {})
            await client.call_tool("preflight_clean", {})
    for reply in (run, journal):
        assert reply.structured_content is not None
        text = reply.content[0].text  # type: ignore[union-attr]
        assert _leaks(text) == [] and _leaks(json.dumps(reply.structured_content)) == []
    [entry] = journal.structured_content["data"]["mocks"][0]["requests"]  # type: ignore[index]
    assert entry["headers"]["x-db-password"] == "[redacted]"
    assert entry["query"] == {"api_key": "[redacted]", "token": "[redacted]", "page": "2"}
    assert entry["body"]["password"] == "[redacted]"
