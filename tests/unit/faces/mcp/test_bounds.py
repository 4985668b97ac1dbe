"""One MCP reply stays readable however many cases fail; the SDK still returns the whole result."""

from __future__ import annotations

import json

import msgspec
import pytest
from mcp import Client, types

from preflight_sdk.core.operations import operation
from preflight_sdk.core.results.run import (
    Artifact,
    CaseResult,
    Failure,
    ResponseInfo,
    RunResult,
    SuiteResult,
    Totals,
)
from preflight_sdk.faces.mcp.bounds import BUDGET_CHARS
from preflight_sdk.faces.mcp.server import PreflightMcp
from preflight_sdk.faces.reflection.registry import reflect

pytestmark = pytest.mark.anyio

FAILURES = 60


def _big_run() -> RunResult:
    cases = [
        CaseResult(
            id=f"many.case-{i}",
            name=f"case {i}",
            suite="many",
            status="failed",
            duration=3,
            timestamp=0,
            # sixty different causes (each its own status), so none is told once for another
            failure=Failure(
                error=f"expected status 201, got {300 + i}",
                summary=f"GET /big returned {300 + i}, expected 201",
                response=ResponseInfo(status=300 + i, body={"blob": "x" * 1500, "n": i}),
                artifact=f"cases/many.case-{i}.json",
            ),
        )
        for i in range(FAILURES)
    ]
    suite = SuiteResult(
        id="many",
        name="Many",
        runner="yaml",
        status="failed",
        duration=9,
        passed=0,
        failed=60,
        skipped=0,
        cases=cases,
    )
    artifacts = [
        Artifact(name=c.failure.artifact or "", path="/x", sha256="0" * 64, size=1)
        for c in cases
        if c.failure
    ]
    return RunResult(
        run_id="r-big",
        status="failed",
        summary="failed: 1 suite(s), 60 case(s): 0 passed, 60 failed",
        totals=Totals(passed=0, failed=FAILURES, skipped=0, total=FAILURES),
        duration=9,
        suites=[suite],
        started_at="2026-01-01T00:00:00.000Z",
        artifacts=artifacts,
    )


class ManyFailures:
    """A project whose run fails sixty cases with large responses."""

    def __init__(self, path: str, config_file: str | None = None) -> None:
        self.path = path

    @operation(title="Run test suites")
    async def run(self) -> RunResult:
        """Run the suites."""
        return _big_run()


async def test_the_sdk_result_is_whole_and_the_mcp_reply_is_bounded_with_later_failures_minimal() -> None:
    whole = await ManyFailures("/p").run()
    assert len(msgspec.json.encode(whole)) > BUDGET_CHARS and whole.truncated is False

    app = PreflightMcp(reflect(ManyFailures), factory=ManyFailures, default_project="/p")
    async with Client(app.server) as client:
        reply = await client.call_tool("preflight_run", {})
    first = reply.content[0]
    assert isinstance(first, types.TextContent)
    assert len(first.text) < BUDGET_CHARS + 1_000  # the envelope around the bounded result
    envelope = json.loads(first.text)
    data = envelope["data"]
    assert (reply.is_error, envelope["success"], data["truncated"]) == (False, True, True)
    failures = [c["failure"] for c in data["suites"][0]["cases"]]
    assert len(failures) == FAILURES  # every failure is still named, with its summary and artifact
    assert "response" in failures[0] and "response" not in failures[-1]
    assert all(f["artifact"] == f"cases/many.case-{i}.json" for i, f in enumerate(failures))
    assert len(data["artifacts"]) == FAILURES


def test_a_group_of_thousands_names_as_many_members_as_fit_and_counts_them_all() -> None:
    from preflight_sdk.faces.mcp.bounds import bound_reply

    many = 5_000
    cases = [
        CaseResult(
            id=f"crash.order-{i}-without-a-price",
            name=f"order {i} without a price",
            suite="crash",
            status="failed",
            duration=1,
            timestamp=0,
            failure=Failure(error="expected status 400, got 500", summary="POST /orders returned 500"),
        )
        for i in range(many)
    ]
    suite = SuiteResult(
        id="crash", name="Crash", runner="yaml", status="failed", duration=1, passed=0, failed=many, skipped=0,
        cases=cases,
    )  # fmt: skip
    result = RunResult(
        run_id="r-many", status="failed", summary="failed", duration=1, suites=[suite],
        totals=Totals(passed=0, failed=many, skipped=0, total=many), started_at="2026-01-01T00:00:00.000Z",
    )  # fmt: skip
    reply = bound_reply(result)
    assert len(msgspec.json.encode(reply)) <= BUDGET_CHARS and reply.truncated
    [head] = reply.suites[0].cases
    same = head.failure.same_cause if head.failure else None
    assert same is not None and same.count == many
    assert 20 <= len(same.cases) < many - 1 and len(same.names) == len(same.cases)
    assert [f"order {i} without a price" for i in range(1, len(same.cases) + 1)] == same.names
    assert same.cases[0] == "crash.order-1-without-a-price"
