"""Recording as each face sees it, and what goes wrong: real `preflight` and `preflight-mcp` processes.

A project of mocks and YAML suites only (no Docker): its suites call the mocks from the host.
The upstream is `tests/support/json_upstream.py` in a process of its own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN
from support.upstreams import upstream

pytestmark = pytest.mark.slow

CONFIG = """\
project: {name: recfaces}
mocks:
  payments: {port: 0}
  github: {port: 0}
  mail:
    port: 0
    routes:
      - {path: /v1/ping, response: {body: {pong: true}}}
tests:
  suites:
    - {id: api, file: tests/api.yaml}
    - {id: slow, runner: shell, command: ["sh", "-c", "sleep 60"], timeout: 90s}
"""

SUITE = """\
name: API
cases:
  - name: a charge
    request:
      method: POST
      url: "{{mocks.payments.url}}/v1/charges"
      headers: {Authorization: "Bearer sk_test_faces_71cc0e"}
      json: {amount: 25, sku: book}
    expect: {status: 201, body: {id: ch_1}}
  - name: the mail mock answers from its own route
    request: {method: GET, url: "{{mocks.mail.url}}/v1/ping"}
    expect: {status: 200, body: {pong: true}}
"""

PREVIOUS = """\
mock: payments
routes:
- method: GET
  path: /v1/old
  response: {status: 200, body: {old: true}}
  recorded: {at: '2026-01-01T00:00:00Z', calls: 1}
"""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again at once: nothing listens there


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "recfaces"
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "tests" / "api.yaml").write_text(SUITE, encoding="utf-8")
    return root


def run_cli(root: Path, *args: str, timeout: float = 120) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_recording_an_unknown_mock_is_mock_not_found_and_nothing_starts(project: Path) -> None:
    code, reply = run_cli(project, "run", "--record", "payment", "--filter", "api")
    assert (code, reply["success"], reply["error"]["code"]) == (2, False, "MOCK_NOT_FOUND")
    assert "payments" in reply["error"]["hint"]
    assert not (project / ".preflight" / "runs").exists()


def test_recording_a_mock_without_upstream_is_invalid_input_saying_how_to_give_one(project: Path) -> None:
    code, reply = run_cli(project, "run", "--record", "github", "--filter", "api")
    assert (code, reply["error"]["code"]) == (2, "INVALID_INPUT")
    assert "--upstream" in reply["error"]["hint"] and "mocks.github.proxy" in reply["error"]["hint"]


def test_an_unreachable_upstream_is_a_coded_error_naming_it_and_other_mocks_answer_as_always(
    project: Path,
) -> None:
    dead = f"http://127.0.0.1:{closed_port()}"
    code, reply = run_cli(project, "run", "--record", "payments", "--upstream", dead, "--filter", "api")
    assert reply["success"] and code == 1  # the verdict is data: a failed case
    data = reply["data"]
    cases = {c["name"]: c["status"] for s in data["suites"] for c in s["cases"]}
    assert cases == {"a charge": "failed", "the mail mock answers from its own route": "passed"}
    (recording,) = [r for r in data["recordings"] if r["mode"] == "recorded"]
    assert recording["error"]["code"] == "MOCK_UPSTREAM_UNREACHABLE"
    assert dead in recording["error"]["message"] and recording.get("written", False) is False
    assert any("MOCK_UPSTREAM_UNREACHABLE" in w or dead in w for w in data["warnings"])
    assert not (project / "e2e.recorded" / "payments.yaml").exists()


def test_a_run_cancelled_while_recording_leaves_the_previous_route_file_whole(project: Path) -> None:
    folder = project / "e2e.recorded"
    folder.mkdir()
    (folder / "payments.yaml").write_text(PREVIOUS, encoding="utf-8")
    before = (folder / "payments.yaml").read_bytes()
    with upstream() as real:
        process = subprocess.Popen(
            [
                str(BIN / "preflight"),
                "run",
                "--record",
                "payments",
                "--upstream",
                real.url,
                "-C",
                str(project),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert process.stdout is not None
            deadline = time.monotonic() + 90
            seen = ""
            while "slow" not in seen and time.monotonic() < deadline:  # the API suite has run, slow began
                seen = process.stdout.readline()
                assert seen or process.poll() is None, "preflight ended before the slow suite"
            os.kill(process.pid, signal.SIGINT)
            process.wait(60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
    assert process.returncode != 0
    assert (folder / "payments.yaml").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["payments.yaml"]  # no temporary file left


@pytest.mark.anyio
async def test_an_agent_records_replays_and_checks_a_mock_over_mcp(project: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(project)],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(240), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "record" in tools["preflight_run"].input_schema["properties"]

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                reply = await client.call_tool(f"preflight_{name}", arguments)
                envelope = reply.structured_content
                assert envelope is not None
                jsonschema.Draft202012Validator(tools[f"preflight_{name}"].output_schema or {}).validate(
                    envelope
                )
                assert reply.is_error is (not envelope["success"])
                return envelope

            with upstream() as real:
                recorded = await call(
                    "run", {"filter": "api", "record": f"payments={real.url}", "wait": "120s"}
                )
                assert recorded["data"]["status"] == "passed", recorded
                (mine,) = [r for r in recorded["data"]["recordings"] if r["mock"] == "payments"]
                assert mine["mode"] == "recorded" and mine["written"] and mine["exchanges"] == 1
                checked = await call(
                    "check_mock",
                    {"mockName": "payments", "headers": ["Authorization: Bearer sk_test_faces_71cc0e"]},
                )
                assert checked["success"] and checked["data"]["status"] == "ok", checked
                assert "sk_test_faces_71cc0e" not in json.dumps(checked)
            replayed = await call("run", {"filter": "api", "wait": "120s"})
            assert replayed["data"]["status"] == "passed", replayed
            assert {(r["mock"], r["mode"]) for r in replayed["data"]["recordings"]} == {
                ("payments", "replayed")
            }
            bad = await call("run", {"filter": "api", "record": "github"})
            assert not bad["success"] and bad["error"]["code"] == "INVALID_INPUT"
    text = (project / "e2e.recorded" / "payments.yaml").read_text()
    assert "sk_test_faces_71cc0e" not in text


@pytest.mark.anyio
async def test_a_recording_setup_began_is_written_when_clean_stops_the_mocks_and_checks_from_python(project: Path) -> None:
    import httpx

    from preflight_sdk import Project

    folder = project / "e2e.recorded"
    with upstream() as real:
        sdk = Project.open(project)
        started = await sdk.setup(record=f"payments={real.url}")
        (payments,) = [m for m in started.mocks if m.name == "payments"]
        async with httpx.AsyncClient(trust_env=False) as client:
            answer = await client.get(
                f"{payments.url}/v1/balance", headers={"Authorization": "Bearer sk_test_up_91b2"}
            )
        assert answer.status_code == 200 and answer.json()["calls"] == 1
        assert not folder.exists()  # nothing is written while the environment is up
        cleaned = await sdk.clean()
        # The route file names its upstream: the check needs no other address.
        checked = await sdk.check_mock("payments", headers=["Authorization: Bearer sk_test_up_91b2"])
        assert (checked.status, checked.checked, checked.upstream) == ("ok", 1, real.url), checked
    (recording,) = cleaned.recordings
    assert (recording.mock, recording.mode, recording.written, recording.exchanges) == (
        "payments",
        "recorded",
        True,
        1,
    )
    assert recording.added == ["GET /v1/balance"]
    text = (folder / "payments.yaml").read_text()
    assert "/v1/balance" in text and "sk_test_up_91b2" not in text


def test_up_records_until_it_is_stopped_then_writes_the_routes(project: Path) -> None:
    import httpx

    with upstream() as real:
        process = subprocess.Popen(
            [str(BIN / "preflight"), "up", "--record", f"payments={real.url}", "-C", str(project)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert process.stdout is not None
            deadline = time.monotonic() + 90
            url = ""
            while not url and time.monotonic() < deadline:
                line = process.stdout.readline()
                assert line or process.poll() is None, "preflight up ended before the environment was up"
                if line.strip().startswith("payments: http://"):
                    url = line.split(": ", 1)[1].strip()
            answer = httpx.get(
                f"{url}/v1/balance", headers={"Authorization": "Bearer sk_test_up_5e7a1c"}, trust_env=False
            )
            assert answer.status_code == 200 and answer.json()["calls"] == 1
            assert not (project / "e2e.recorded").exists()  # nothing is written while it is up
            os.kill(process.pid, signal.SIGINT)
            rest, _ = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert f"mock payments: recorded 1 call from {real.url}" in rest, rest
    text = (project / "e2e.recorded" / "payments.yaml").read_text()
    assert "/v1/balance" in text and "sk_test_up_5e7a1c" not in text


def test_a_replayed_route_in_a_failures_evidence_says_it_was_recorded_and_when(project: Path) -> None:
    with upstream() as real:
        code, recorded = run_cli(project, "run", "--record", f"payments={real.url}", "--filter", "api")
    assert code == 0 and recorded["data"]["status"] == "passed", recorded
    # The suite now expects a charge id the upstream never handed out: the replay fails.
    suite = project / "tests" / "api.yaml"
    suite.write_text(SUITE.replace("id: ch_1}", "id: ch_9}"), encoding="utf-8")
    code, replay = run_cli(project, "run", "--filter", "api")
    assert code == 1 and replay["success"] and replay["data"]["status"] == "failed", replay
    assert [(r["mock"], r["mode"], r["routes"]) for r in replay["data"]["recordings"]] == [
        ("payments", "replayed", 1)
    ]
    (case,) = [c for s in replay["data"]["suites"] for c in s["cases"] if c["name"] == "a charge"]
    (traffic,) = [t for t in case["failure"]["diagnostics"]["mockRequests"] if t["mockName"] == "payments"]
    (request,) = traffic["requests"]
    assert request["matchedRoute"].startswith("POST /v1/charges"), request
    when = datetime.fromisoformat(request["routeRecorded"].replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - when).total_seconds()) < 600  # recorded by this test's first run

    page = (project / ".preflight" / "runs" / replay["data"]["runId"] / "report.html").read_text("utf-8")
    assert "replayed 1 recorded route(s)" in page
    assert f'pfr-recorded">recorded {request["routeRecorded"][:16].replace("T", " ")}' in page
