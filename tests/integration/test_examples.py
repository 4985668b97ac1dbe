"""The bundled examples through the Python API, with real Docker: what a run reports, field by field.

`shop` must build, set up, pass all its suites (YAML, pytest, shell) and clean up; its payments
mock must have played the "busy, then accepts" sequence exactly. `shop-broken` has two defects
left in on purpose, and its report must show each one completely: the request as sent, the
response, every assertion, the service's log line, the mock request and a fix.

The examples are copied to a temporary directory first, so nothing is written into the repository.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import junitparser
import msgspec
import pytest
from support.docker import force_clean, labelled

from preflight_sdk import Project
from preflight_sdk.core.results.run import RunResult

pytestmark = [pytest.mark.anyio, pytest.mark.docker]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _copy(tmp_path: Path, *names: str) -> dict[str, Path]:
    copies = {}
    for name in names:
        copies[name] = tmp_path / name
        shutil.copytree(EXAMPLES / name, copies[name], ignore=shutil.ignore_patterns(".preflight"))
    return copies


def _wire(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


async def test_the_shop_example_builds_runs_green_and_plays_the_mock_sequence(tmp_path: Path) -> None:
    shop = _copy(tmp_path, "shop")["shop"]
    project = Project.open(shop)
    try:
        await project.build()
        await project.setup()
        result = await project.run()
        charges = await project.mock_requests("payments")
        cleaned = await project.clean()
    finally:
        force_clean(shop)
    assert [(c.id, c.failure.summary if c.failure else "") for c in result.failures()] == []
    assert result.ok and result.totals.total == 11 and result.totals.passed == 11
    assert [(s.id, s.runner, s.status, len(s.cases)) for s in result.suites] == [
        ("orders", "yaml", "passed", 8),
        ("contract", "pytest", "passed", 2),
        ("smoke", "shell", "passed", 1),
    ]
    assert cleaned is not None
    assert labelled(shop) == ([], [])

    [payments] = charges.mocks
    posted = [r for r in payments.requests if r.method == "POST" and r.path == "/charges"]
    assert [(r.status, r.body, r.matched_route) for r in posted] == [
        (503, {"amount": 25, "sku": "book"}, "charge"),  # busy once...
        (201, {"amount": 25, "sku": "book"}, "charge"),  # ...then accepts
        (402, {"amount": 1998, "sku": "lamp"}, "decline-large"),
    ]
    refunds = [r for r in payments.requests if r.path == "/refunds"]
    assert [(r.status, r.matched_route) for r in refunds] == [(201, "refund")]
    # the counter of the charge route numbered both calls: the accepted one was the second
    assert refunds[0].body == {"charge": "ch_2", "amount": 25}


async def test_the_shop_db_example_migrates_seeds_and_runs_green_from_fresh(tmp_path: Path) -> None:
    shop_db = _copy(tmp_path, "shop-db")["shop-db"]
    project = Project.open(shop_db)
    try:
        result = await project.run(keep=True)
        status = await project.status()
        orders = next(s for s in status.services if s.name == "orders")
        assert orders.url is not None
        async with httpx.AsyncClient(base_url=orders.url, timeout=10) as client:
            summary = (await client.get("/orders/summary")).json()
        cleaned = await project.clean()
    finally:
        force_clean(shop_db)
    assert [(c.id, c.failure.summary if c.failure else "") for c in result.failures()] == []
    assert result.ok and result.totals.passed == 4
    # The migration and the seed ran in order before the API started, each once.
    actions = {s.name: s.action for s in result.setup.services} if result.setup else {}
    assert set(actions) == {"db", "migrate", "seed", "orders"}
    # The suite wrote to the database: the row it added is still there until the next run on the
    # kept environment resets the db (the seed's SQL runs again in it).
    assert summary == {"orders": 3, "items": 6}
    assert cleaned is not None and labelled(shop_db) == ([], [])


async def test_the_shop_broken_report_shows_each_defect_completely(tmp_path: Path) -> None:
    copies = _copy(tmp_path, "shop", "shop-broken")  # shop-broken builds from ../shop
    broken = copies["shop-broken"]
    project = Project.open(broken)
    try:
        await project.build()
        await project.setup()
        result: RunResult = await project.run()
        await project.clean()
    finally:
        force_clean(broken)
    assert labelled(broken) == ([], [])
    assert result.status == "failed"
    assert (result.totals.passed, result.totals.failed, result.totals.skipped) == (1, 2, 0)
    price, refund = (_wire(c) for c in result.failures())

    # 1. an order without a price crashes the orders service
    assert price["id"] == "orders.an-order-without-a-price-is-rejected-with-400"
    failure = price["failure"]
    request = failure["request"]
    assert request["method"] == "POST"
    assert request["url"].startswith("http://127.0.0.1:") and request["url"].endswith("/orders")
    # the case's W3C trace context goes with every request (see docs/runs.md)
    assert request["headers"].pop("traceparent").startswith(f"00-{result.trace_id}-")
    assert request["headers"] == {"Authorization": "[redacted]", "Content-Type": "application/json"}
    assert request["body"] == {"sku": "book", "qty": 1}
    assert "not-for-reports" not in json.dumps(_wire(result))
    assert failure["response"]["status"] == 500
    assert failure["response"]["body"] == {"error": "internal error"}
    assert [
        (a["path"], a["operator"], a["expected"], a["actual"], a["passed"]) for a in failure["assertions"]
    ] == [
        ("status", "equals", 400, 500, False),
        ("body.error", "contains", "price", "internal error", False),
    ]
    orders_logs = next(c for c in failure["diagnostics"]["containerLogs"] if c["containerName"] == "orders")
    assert "stderr: KeyError: 'price'" in orders_logs["lines"]
    assert (
        failure["summary"] == "POST /orders returned 500, expected 400; orders logged \"KeyError: 'price'\""
    )
    assert failure["suggestedFix"] == (
        "`orders` failed while handling the request (KeyError: 'price'): fix that code path, then run the suite again"
    )
    health = {h["containerName"]: h["status"] for h in failure["diagnostics"]["containerHealth"]}
    assert health == {"inventory": "running", "seed": "exited", "orders": "running"}

    # 2. the payments mock has no /refunds route
    assert refund["id"] == "orders.a-refund-is-confirmed-by-the-provider"
    failure = refund["failure"]
    assert failure["request"]["method"] == "POST"
    assert failure["request"]["url"].endswith("/refund") and "/orders/" in failure["request"]["url"]
    assert failure["response"]["status"] == 502
    assert failure["response"]["body"]["error"] == "refund failed"
    assert failure["response"]["body"]["payments"]["error"] == "no route matched"
    assert [(a["path"], a["expected"], a["actual"], a["passed"]) for a in failure["assertions"]] == [
        ("status", 200, 502, False),
        ("body.status", "refunded", None, False),
        ("mock.payments.count", 1, 1, True),
    ]
    [traffic] = failure["diagnostics"]["mockRequests"]
    assert traffic["mockName"] == "payments"
    [sent] = traffic["requests"]
    assert (sent["method"], sent["path"], sent["status"]) == ("POST", "/refunds", 404)
    assert "matchedRoute" not in sent
    assert sent["body"] == {"charge": "ch_1", "amount": 20}
    path = failure["request"]["url"].split("127.0.0.1:", 1)[1].split("/", 1)[1]
    assert sent["closestRoutes"] == [
        {
            "route": "POST /charges",
            "index": 0,
            "name": "charge",
            "why": ["path segment 1 'refunds' != 'charges'"],
        }
    ]
    assert sent["url"].startswith("http://payments:") and sent["url"].endswith("/refunds")
    assert sent["headers"]["content-type"] == "application/json"
    assert failure["summary"] == (
        f"POST /{path} returned 502, expected 200; mock payments had no route for POST /refunds "
        "(closest: POST /charges, path segment 1 'refunds' != 'charges')"
    )
    assert failure["suggestedFix"] == (
        "mock `payments` had no route for POST /refunds (it answered 404): add or fix the route in "
        "mocks.payments.routes, or fix the request the service sends; the closest route, `charge` "
        "(POST /charges, mocks.payments.routes[0]), did not match: path segment 1 'refunds' != 'charges'"
    )

    # the JUnit report says the same
    junit = next(a.path for a in result.artifacts if a.name == "junit.xml")
    xml = junitparser.JUnitXml.fromfile(junit)
    [suite] = list(xml)
    assert (suite.name, suite.tests, suite.failures, suite.skipped) == ("orders", 3, 2, 0)
    messages = {c.name: c.result[0].message for c in suite if c.result}
    assert messages == {
        "an order without a price is rejected with 400": price["failure"]["summary"],
        "a refund is confirmed by the provider": refund["failure"]["summary"],
    }
