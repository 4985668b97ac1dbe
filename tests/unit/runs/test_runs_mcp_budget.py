"""The MCP face's call budget and trace context, in memory through the official client: a run
that outlasts the budget answers with its runId; get_run answers at once unless asked to wait,
and never waits past the budget; `_meta.traceparent` becomes the run's trace."""

from __future__ import annotations

import time

import pytest
from mcp import Client
from support.stub import MakeProject

from preflight_sdk.faces.mcp.server import PreflightMcp

pytestmark = pytest.mark.anyio


def _slow(n: int, ms: int) -> str:
    cases = "".join(
        f"  - name: slow {i}\n    request: {{method: GET, url: '{{{{env.STUB}}}}/slow?ms={ms}'}}\n"
        "    expect: {status: 200}\n"
        for i in range(n)
    )
    return f"name: slow\ncases:\n{cases}"


async def test_long_runs_answer_within_the_budget_and_are_followed_with_get_run(
    make_project: MakeProject,
) -> None:
    root = make_project([("slow", _slow(6, 300))])
    app = PreflightMcp(default_project=str(root), call_budget=0.5)
    async with Client(app.server) as client:
        # The client's first validation of a structured reply imports its format checkers (seconds,
        # on this loop): pay that before timing anything.
        await client.call_tool("preflight_list_runs", {})
        began = time.monotonic()
        reply = await client.call_tool("preflight_run", {})
        assert time.monotonic() - began < 1.5
        started = reply.structured_content
        assert started is not None and started["success"] is True and reply.is_error is False
        assert started["data"]["status"] in ("queued", "running") and started["runId"]
        run_id = started["data"]["runId"]

        began = time.monotonic()
        at_once = (await client.call_tool("preflight_get_run", {"runId": run_id})).structured_content
        assert at_once is not None and time.monotonic() - began < 0.4
        assert at_once["data"]["status"] == "running"

        began = time.monotonic()
        capped = (
            await client.call_tool("preflight_get_run", {"runId": run_id, "wait": "1h"})
        ).structured_content
        assert capped is not None and 0.4 < time.monotonic() - began < 1.5  # cut to the 0.5 s budget

        status = "running"
        for _ in range(20):
            data = (
                await client.call_tool("preflight_get_run", {"runId": run_id, "wait": "1s"})
            ).structured_content
            assert data is not None
            status = data["data"]["status"]
            if status != "running":
                break
        assert status == "passed"
        await app.shutdown()


async def test_a_traceparent_in_meta_becomes_the_run_trace(make_project: MakeProject) -> None:
    root = make_project([("quick", _slow(1, 1))])
    app = PreflightMcp(default_project=str(root))
    trace = "0af7651916cd43dd8448eb211c80319c"
    async with Client(app.server) as client:
        reply = await client.call_tool(
            "preflight_run", {}, meta={"traceparent": f"00-{trace}-b7ad6b7169203331-01"}
        )
        envelope = reply.structured_content
        assert envelope is not None and envelope["data"]["traceId"] == trace
        plain = (await client.call_tool("preflight_run", {})).structured_content
        assert plain is not None and plain["data"]["traceId"] != trace
        await app.shutdown()
