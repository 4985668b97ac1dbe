"""Drift, route by route: each route's request sent to a real HTTP upstream, the answers compared.

The upstream is a `MockHost` serving what "the real service" answers today; the routes checked
are what the mock says. Values never count, shapes, statuses and media types do.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from preflight_sdk.config.model import MockConfig, MockRoute
from preflight_sdk.core.redaction import DEFAULT
from preflight_sdk.mocks import MockHost
from preflight_sdk.mocks.record.check import CheckedRoute, check_routes, shape_differences

pytestmark = pytest.mark.anyio

TODAY = [
    {"path": "/v1/charges/ch_1", "response": {"body": {"id": "ch_1", "amount": "25", "fee": 0.3, "items": [{"sku": 1}]}}},
    {"path": "/v1/balance", "response": {"body": {"available": 5000, "calls": 7}}},
    {"path": "/v1/gone", "response": {"status": 404, "body": {"error": "gone"}}},
    {"path": "/v1/text", "response": {"body": "plain words", "headers": {"content-type": "text/plain"}}},
    {"path": "/v1/wide", "response": {"body": {f"f{i}": i for i in range(30)}}},
]  # fmt: skip


def route(spec: dict[str, Any]) -> MockRoute:
    return msgspec.convert(spec, MockRoute)


def entries(*specs: dict[str, Any], source: str = "hand-written") -> list[CheckedRoute]:
    return [CheckedRoute(index=i, route=route(s), source=source) for i, s in enumerate(specs)]  # type: ignore[arg-type]


@pytest.fixture
async def upstream() -> AsyncIterator[str]:
    host = MockHost({"real": MockConfig(port=0, routes=[route(r) for r in TODAY])})
    await host.start()
    try:
        yield host.url("real")
    finally:
        await host.stop()


async def check(upstream: str, *specs: dict[str, Any], **options: Any) -> Any:
    return await check_routes(
        "payments",
        entries(*specs, **options),
        upstream=upstream,
        headers={"Authorization": "Bearer sk_test_check_9f8e7d"},
        redactor=DEFAULT,
        timeout=5.0,
    )


async def test_a_route_that_still_agrees_is_ok_though_every_value_differs(upstream: str) -> None:
    result = await check(
        upstream, {"path": "/v1/balance", "response": {"body": {"available": 1, "calls": 2}}}
    )
    assert (result.status, result.checked, result.drifted) == ("ok", 1, 0)
    (only,) = result.routes
    assert (only.status, only.http_status, only.differences) == ("ok", 200, [])


async def test_fields_added_removed_and_of_another_type_are_named_by_their_path(upstream: str) -> None:
    recorded = {
        "path": "/v1/charges/:id",
        "response": {"body": {"id": "ch_1", "amount": 25, "status": "paid", "items": [{"sku": "A"}]}},
        "recorded": {"at": "2026-11-30T10:00:00Z", "example": "/v1/charges/ch_1"},
    }
    result = await check(upstream, recorded, source="recorded")
    assert result.status == "drift" and result.drifted == 1
    (only,) = result.routes
    assert only.source == "recorded" and only.request == "GET /v1/charges/ch_1"
    found = {(d.kind, d.path, d.expected, d.actual) for d in only.differences}
    assert found == {
        ("type", "$.amount", "number", "string"),
        ("removed", "$.status", "string", None),
        ("added", "$.fee", None, "number"),
        ("type", "$.items[].sku", "string", "number"),
    }


async def test_status_and_media_type_are_compared(upstream: str) -> None:
    result = await check(
        upstream,
        {"path": "/v1/gone", "response": {"status": 200, "body": {"error": "x"}}},
        {"path": "/v1/text", "response": {"body": {"words": "plain"}}},
    )
    gone, text = result.routes
    assert [(d.kind, d.expected, d.actual) for d in gone.differences] == [("status", 200, 404)]
    assert [(d.kind, d.expected, d.actual) for d in text.differences] == [
        ("contentType", "application/json", "text/plain")
    ]
    assert result.summary == f"payments: 2 of 2 checked route(s) differ from {upstream}"


async def test_a_sequence_is_compared_step_by_step_and_the_closest_step_counts(upstream: str) -> None:
    steps = {
        "path": "/v1/balance",
        "sequence": [{"status": 503, "body": {"error": "busy"}}, {"body": {"available": 1, "calls": 1}}],
    }
    assert (await check(upstream, steps)).status == "ok"


async def test_templates_stand_for_their_type_and_an_echo_for_anything(upstream: str) -> None:
    body = {"available": "{{counter}}", "calls": "{{request.query.n}}"}
    templated = {"path": "/v1/balance", "response": {"body": body}}
    assert (await check(upstream, templated)).status == "ok"
    assert shape_differences({"at": "{{timestamp}}"}, {"at": "2026-01-01"})[0].kind == "type"


async def test_routes_with_nothing_to_send_or_compare_are_skipped_saying_why(upstream: str) -> None:
    result = await check(
        upstream,
        {"path": "/v1/charges/:id", "response": {"body": {}}},
        {"path": "/v1/balance", "response": {"fault": "reset"}},
    )
    assert result.status == "ok" and (result.checked, result.skipped) == (0, 2)
    assert [r.status for r in result.routes] == ["skipped", "skipped"]
    assert "parameters" in (result.routes[0].reason or "") and "fault" in (result.routes[1].reason or "")
    assert result.summary.endswith("; 2 skipped")


async def test_differences_are_bounded_and_say_when_more_were_found(upstream: str) -> None:
    (wide,) = (await check(upstream, {"path": "/v1/wide", "response": {"body": {"x": 1}}})).routes
    assert len(wide.differences) == 20 and wide.truncated  # 30 added and one removed


async def test_a_secret_in_the_query_is_masked_in_what_the_check_says_it_sent(upstream: str) -> None:
    spec = {
        "path": "/v1/balance",
        "when": {"query": {"api_key": "sk_live_in_query_1234567"}},
        "response": {"body": {"available": 1, "calls": 1}},
    }
    (only,) = (await check(upstream, spec)).routes
    assert only.status == "ok" and only.request is not None
    assert "sk_live_in_query_1234567" not in only.request and only.request.startswith(
        "GET /v1/balance?api_key="
    )


async def test_an_upstream_that_does_not_answer_is_an_error_per_route_not_drift() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    result = await check(dead, {"path": "/v1/balance", "response": {"body": {}}})
    assert (result.status, result.errors, result.drifted) == ("error", 1, 0)
    assert result.routes[0].status == "error" and "Connect" in (result.routes[0].reason or "")
    assert result.summary == f"payments: 1 route(s) could not be checked against {dead}"
