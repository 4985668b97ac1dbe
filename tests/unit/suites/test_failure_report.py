"""What an agent gets from a failed HTTP case, field by field, and how the report stays bounded."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import msgspec
import pytest
from support.fake_engine import Behaviour, FakeEngine
from support.stub import MakeProject, Stub, case, environment, one_suite, run, wire, write_project

from preflight_sdk.core.results.run import ContainerLogInfo, DiagnosticReport, RequestInfo
from preflight_sdk.suites.explain import explain
from preflight_sdk.suites.outcome import StepOutcome
from preflight_sdk.suites.yaml.wire import CLOSED_WITHOUT_ANSWER

pytestmark = pytest.mark.anyio


async def test_a_failed_http_case_carries_request_response_assertions_summary(
    make_project: MakeProject, stub: Stub
) -> None:
    root = make_project(
        one_suite("""
        name: Orders
        cases:
          - name: create an order
            request:
              method: POST
              url: "{{env.STUB}}/status/500?from=test"
              headers: {Authorization: "Bearer top-secret", X-Api-Key: k-123, X-Trace: visible}
              json: {sku: book, qty: 2}
            expect:
              status: 201
              body: {error: {contains: price}, status: {type: integer}}
        """)
    )
    result = await run(root)
    failure = case(result, "create an order").failure
    assert failure is not None
    data = wire(failure)

    request = data["request"]
    assert request["method"] == "POST"
    assert request["url"] == f"{stub.url}/status/500?from=test"
    # the case's W3C trace context is sent too: the run's trace id, the case's own span
    traceparent = request["headers"].pop("traceparent")
    assert traceparent.startswith(f"00-{result.trace_id}-") and traceparent.endswith("-01")
    assert request["headers"] == {
        "Authorization": "[redacted]",
        "X-Api-Key": "[redacted]",
        "X-Trace": "visible",
        "Content-Type": "application/json",
    }
    assert request["body"] == {"sku": "book", "qty": 2}
    assert "top-secret" not in msgspec.json.encode(result).decode()

    response = data["response"]
    assert response["status"] == 500
    assert response["headers"]["content-type"] == "application/json"
    assert response["body"] == {"status": 500, "error": "boom"}
    assert isinstance(response["duration"], int)

    assert data["assertions"] == [
        {
            "path": "status",
            "operator": "equals",
            "expected": 201,
            "actual": 500,
            "passed": False,
            "message": "status: expected to equal 201, got 500",
        },
        {
            "path": "body.error",
            "operator": "contains",
            "expected": "price",
            "actual": "boom",
            "passed": False,
            "message": 'body.error: expected to contain "price", got "boom"',
        },
        {
            "path": "body.status",
            "operator": "type",
            "expected": "integer",
            "actual": 500,
            "passed": True,
            "message": "body.status: type is integer, expected integer",
        },
    ]
    assert data["summary"] == "POST /status/500 returned 500, expected 201"
    assert data["error"] == (
        'status: expected to equal 201, got 500; body.error: expected to contain "price", got "boom"'
    )
    assert data["artifact"] == "cases/s.create-an-order.json"
    assert result.summary == (
        "failed: 1 suite(s), 1 case(s): 0 passed, 1 failed. "
        "First failure s.create-an-order: POST /status/500 returned 500, expected 201"
    )


async def test_connection_refused_and_timeout_have_suggested_fixes(make_project: MakeProject) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
        root = make_project(
            one_suite(f"""
            name: Unreachable
            cases:
              - name: refused
                request: {{method: POST, url: "http://127.0.0.1:{closed}/orders", json: {{a: 1}}}}
                expect: {{status: 201}}
              - name: too slow
                request: {{url: "{{{{env.STUB}}}}/slow?ms=2000", timeout: 100ms}}
                expect: {{status: 200}}
            """)
        )
        result = await run(root)
    refused = case(result, "refused").failure
    assert refused is not None
    assert refused.error == f"POST http://127.0.0.1:{closed}/orders failed: connection refused"
    assert refused.summary == "POST /orders failed: connection refused"
    assert refused.suggested_fix is not None
    assert refused.suggested_fix.startswith(f"nothing accepts connections at 127.0.0.1:{closed}")
    assert "BASE_URL" in refused.suggested_fix
    assert refused.request is not None and refused.request.body == {"a": 1}
    assert refused.response is None and refused.assertions == []

    slow = case(result, "too slow").failure
    assert slow is not None
    assert slow.summary == "GET /slow timed out after 0.1s"
    assert slow.suggested_fix is not None and "request.timeout" in slow.suggested_fix


async def test_large_bodies_are_capped_in_the_result_and_kept_whole_in_the_artifact(
    make_project: MakeProject,
) -> None:
    root = make_project(
        one_suite("""
        name: Big
        variables:
          blob: "{{env.BLOB}}"
        cases:
          - name: big both ways
            request: {method: POST, url: "{{env.STUB}}/big?n=9000", json: {blob: "{{blob}}"}}
            expect: {status: 201}
        """),
        env={"BLOB": "y" * 5000},
    )
    result = await run(root)
    failure = case(result, "big both ways").failure
    assert failure is not None and failure.request is not None and failure.response is not None
    assert failure.request.body_truncated and isinstance(failure.request.body, str)
    assert failure.request.body.endswith("more characters]")
    assert len(failure.request.body) < 2_100
    assert failure.response.body_truncated and isinstance(failure.response.body, str)
    assert len(failure.response.body) < 4_100
    assert wire(failure)["response"]["bodyTruncated"] is True

    artifact = next(a for a in result.artifacts if a.name == "cases/s.big-both-ways.json")
    full = msgspec.json.decode(Path(artifact.path).read_bytes())
    assert full["response"]["body"] == {"blob": "x" * 9000, "n": 9000}
    assert "bodyTruncated" not in full["response"]
    assert full["summary"] == failure.summary


async def test_sixty_failures_come_back_whole_from_the_sdk_with_their_artifacts(
    make_project: MakeProject,
) -> None:
    # Reply budgets belong to the MCP face (faces/mcp/bounds.py): a notebook gets every failure in full.
    cases = "".join(
        f"""
  - name: failing case number {i}
    request: {{url: "{{{{env.STUB}}}}/big?n=1500"}}
    expect: {{status: 201, body: {{n: {i}}}}}
"""
        for i in range(60)
    )
    root = make_project(one_suite("name: Many\ncases:" + cases))
    result = await run(root)
    assert result.totals.failed == 60
    assert len(msgspec.json.encode(result)) > 80_000  # more than one MCP reply carries
    assert result.truncated is False
    failures = result.failures()
    assert len(failures) == 60
    names = {a.name for a in result.artifacts}
    for item in failures:
        assert item.failure is not None
        assert item.failure.summary == "GET /big returned 200, expected 201"
        assert item.failure.response is not None  # every failure in full
        assert item.failure.artifact == f"cases/{item.id}.json"
        assert item.failure.artifact in names
    report = next(a for a in result.artifacts if a.name == "report.json")
    assert len(msgspec.json.decode(Path(report.path).read_bytes())["suites"][0]["cases"]) == 60


async def test_a_run_prints_nothing_to_stdout(
    make_project: MakeProject, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(
        one_suite("""
        name: Quiet
        cases:
          - name: fails
            request: {url: "{{env.STUB}}/status/500"}
            expect: {status: 200}
          - name: passes
            request: {url: "{{env.STUB}}/status/200"}
        """)
    )
    capfd.readouterr()
    result = await run(root)
    out, err = capfd.readouterr()
    assert result.totals.total == 2
    assert out == ""
    assert err == ""


async def test_long_mock_bodies_and_log_lines_are_cut_in_the_result_and_kept_in_the_artifact(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path / "big-evidence",
        {
            "project": {"name": "evidence"},
            "services": {"api": {"build": {"image": "busybox:test"}, "container": {"ports": ["0:8080"]}}},
            "mocks": {
                "payments": {
                    "port": 0,
                    "routes": [{"path": "/charges", "method": "POST", "response": {"status": 200}}],
                }
            },
            "tests": {"suites": [{"id": "s", "file": "tests/s.yaml"}]},
        },
        files={
            "tests/s.yaml": """
name: Evidence
cases:
  - name: charge with a huge body
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {blob: "{{env.BLOB}}"}}
    expect: {status: 201}
""",
            ".env": "BLOB=" + "z" * 15_000 + "\n",
        },
    )
    long_line = "stderr: Traceback " + "L" * 5_000
    async with FakeEngine(images=["busybox:test"]) as engine:
        engine.behave("api", Behaviour(logs=["starting", long_line]))
        async with environment(root, engine) as project:
            result = await project.run()

    assert result.truncated is False
    failure = case(result, "charge with a huge body").failure
    assert failure is not None and failure.diagnostics is not None
    [traffic] = failure.diagnostics.mock_requests
    [request] = traffic.requests
    assert isinstance(request.body, str) and request.body_truncated
    assert request.body.startswith('{"blob":"zzz') and request.body.endswith("more characters]")
    assert len(request.body) < 400
    [logs] = failure.diagnostics.container_logs
    line = next(text for text in logs.lines if text.startswith("stderr: Traceback"))
    assert line == long_line[:300] + f"… [{len(long_line) - 300} more characters]"
    assert len(msgspec.json.encode(failure)) < 6_000

    record = next(a for a in result.artifacts if a.name == failure.artifact)
    full = msgspec.json.decode(Path(record.path).read_bytes())
    [full_request] = full["diagnostics"]["mockRequests"][0]["requests"]
    assert full_request["body"] == {"blob": "z" * 15_000}
    assert long_line in full["diagnostics"]["containerLogs"][0]["lines"]


async def test_a_server_that_closes_the_connection_without_answering_was_reached(
    make_project: MakeProject,
) -> None:
    # A server whose handler crashes: it reads the request, then drops the connection.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def crash() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.close()

    threading.Thread(target=crash, daemon=True).start()
    try:
        root = make_project(
            one_suite(f"""
            name: Pay
            cases:
              - name: pay
                request: {{method: POST, url: "http://127.0.0.1:{port}/pay", json: {{amount: 5}}}}
                expect: {{status: 201}}
            """)
        )
        result = await run(root)
    finally:
        listener.close()

    failure = case(result, "pay").failure
    assert failure is not None
    assert failure.summary == (
        "POST /pay failed: the server accepted the request and closed the connection without answering"
    )
    assert "deque" not in (failure.error or "")
    fix = failure.suggested_fix or ""
    assert fix.startswith(
        f"the server at 127.0.0.1:{port} was reached but closed the connection without answering"
    )
    assert "could not reach" not in fix and "log" in fix


def test_the_fix_for_a_service_that_crashed_on_the_request_points_at_its_log_lines() -> None:
    outcome = StepOutcome(
        kind="request",
        error=f"POST http://api:8000/pay failed: {CLOSED_WITHOUT_ANSWER}",
        error_kind="connection",
        request=RequestInfo(method="POST", url="http://api:8000/pay"),
    )
    logs = ContainerLogInfo(
        container_name="api",
        lines=["POST /pay", "Traceback (most recent call last):", "IndexError: pop from an empty deque"],
        line_count=3,
    )

    summary, fix = explain(
        outcome=outcome,
        assertions=[],
        error=None,
        diagnostics=DiagnosticReport(collected_at=0, container_logs=[logs]),
        target="api",
    )

    assert summary.startswith("POST /pay failed: the server accepted the request and closed the connection")
    assert fix is not None
    assert fix.startswith("service `api` was reached but closed the connection without answering")
    assert "IndexError: pop from an empty deque" in fix
    assert "diagnostics.containerLogs" in fix and "logs of `api`" in fix
