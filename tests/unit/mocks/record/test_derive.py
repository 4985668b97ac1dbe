"""Recorded exchanges become good routes: deduplicated, denoised, loose where safe, secrets masked.

The strongest check replays what was derived: the routes are served by a real `MockHost` and the
recorded requests sent again must be answered with the recorded statuses and (noise aside) bodies.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import pytest

from preflight_sdk.config.model import MockConfig, MockRoute
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.mocks import MockHost
from preflight_sdk.mocks.record.derive import derive_routes
from preflight_sdk.mocks.record.recorder import Exchange

pytestmark = pytest.mark.anyio

NOW = time.time()
AT = "2026-11-30T10:00:00Z"
KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"


def call(
    method: str,
    path: str,
    answer: Any,
    *,
    status: int = 200,
    body: Any = None,
    query: str = "",
    at: float = 0.0,
    headers: dict[str, str] | None = None,
    answer_headers: dict[str, str] | None = None,
) -> Exchange:
    sent = {"content-type": "application/json", "authorization": f"Bearer {KEY}", **(headers or {})}
    back = {
        "content-type": "application/json",
        "date": "Mon, 30 Nov 2026 10:00:00 GMT",
        "x-request-id": str(uuid.uuid4()),
        "x-ratelimit-remaining": str(int(at)),
        **(answer_headers or {}),
    }
    return Exchange(
        method=method,
        path=path,
        query_string=query.encode(),
        headers=[(k.encode(), v.encode()) for k, v in sent.items()],
        body=b"" if body is None else json.dumps(body).encode(),
        status=status,
        response_headers=[(k.encode(), v.encode()) for k, v in back.items()],
        response_body=b"" if answer is None else json.dumps(answer).encode(),
        epoch=NOW + at,
    )


def derive(*calls: Exchange, redactor: Redactor = DEFAULT) -> list[MockRoute]:
    return derive_routes(list(calls), redactor, at=AT)


def plain(routes: list[MockRoute]) -> list[dict[str, Any]]:
    return msgspec.to_builtins(routes)  # type: ignore[no-any-return]


def test_identical_requests_become_one_route_that_says_how_many_calls_it_stands_for() -> None:
    routes = derive(*(call("GET", "/v1/plans", [{"id": "basic"}], at=i) for i in range(3)))
    assert len(routes) == 1
    (route,) = routes
    assert (route.method, route.path, route.when, route.sequence) == ("GET", "/v1/plans", None, None)
    assert route.response is not None and route.response.body == [{"id": "basic"}]
    assert route.recorded is not None and route.recorded.calls == 3 and route.recorded.at == AT


def test_the_same_request_answered_differently_in_turn_becomes_a_sequence_whose_last_answer_repeats() -> None:
    routes = derive(
        call("POST", "/v1/charges", {"error": "busy"}, status=503, body={"amount": 25}),
        call("POST", "/v1/charges", {"ok": True}, status=201, body={"amount": 25}, at=1),
        call("POST", "/v1/charges", {"ok": True}, status=201, body={"amount": 25}, at=2),
    )
    (route,) = routes
    assert route.response is None and route.sequence is not None
    assert [(a.status, a.body) for a in route.sequence] == [(503, {"error": "busy"}), (201, {"ok": True})]


def test_headers_that_change_every_call_are_dropped_and_generated_values_become_templates() -> None:
    created = datetime.fromtimestamp(NOW, UTC).isoformat(timespec="seconds")
    answer = {
        "id": "ord_7",
        "requestId": str(uuid.uuid4()),
        "createdAt": created,
        "created": int(NOW),
        "createdMs": int(NOW * 1000),
        "note": f"placed at {created} by request {uuid.uuid4()}",
        "birthday": "1990-01-01T00:00:00Z",
    }
    per_call = {
        "set-cookie": f"sid={uuid.uuid4()}; Expires=Wed, 02 Dec 2026 10:00:00 GMT; HttpOnly",
        "traceparent": f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01",
        "server": "nginx/1.25.3",
        "etag": f'W/"{uuid.uuid4().hex}"',
        "x-api-version": "2026-11-01",
    }
    (route,) = derive(call("GET", "/v1/orders/ord_7", answer, answer_headers=per_call))
    assert route.response is not None
    assert route.response.headers == {"content-type": "application/json", "x-api-version": "2026-11-01"}
    assert route.path == "/v1/orders/ord_7"  # one call of a literal id: no reason to loosen it
    assert route.response.body == {
        "id": "ord_7",
        "requestId": "{{uuid}}",
        "createdAt": "{{now}}",
        "created": "{{epoch}}",
        "createdMs": "{{timestamp}}",
        "note": "placed at {{now}} by request {{uuid}}",
        "birthday": "1990-01-01T00:00:00Z",  # a date far from the call is data, not noise
    }


def test_a_number_or_an_id_that_counts_between_repeated_calls_becomes_counter() -> None:
    routes = derive(
        call("GET", "/v1/balance", {"calls": 1, "currency": "EUR"}),
        call("GET", "/v1/balance", {"calls": 2, "currency": "EUR"}, at=1),
        call("POST", "/v1/tokens", {"id": "tok_1"}, body={"card": "4242"}, at=2),
        call("POST", "/v1/tokens", {"id": "tok_2"}, body={"card": "4242"}, at=3),
    )
    bodies = {r.path: r.response.body for r in routes if r.response is not None}
    assert bodies == {
        "/v1/balance": {"calls": "{{counter}}", "currency": "EUR"},
        "/v1/tokens": {"id": "tok_{{counter}}"},
    }


def test_ids_that_vary_with_answers_of_one_shape_become_one_route_with_a_parameter() -> None:
    routes = derive(
        call("GET", "/v1/charges/ch_1", {"id": "ch_1", "amount": 25}),
        call("GET", "/v1/charges/ch_2", {"id": "ch_2", "amount": 25}, at=1),
        call("GET", "/v1/charges/search", {"data": []}, at=2),
    )
    assert [r.path for r in routes] == ["/v1/charges/search", "/v1/charges/:id"]
    param = routes[1]
    assert param.response is not None and param.response.body == {"id": "{{request.params.id}}", "amount": 25}


def test_answers_of_different_shapes_keep_their_literal_paths() -> None:
    routes = derive(
        call("GET", "/v1/items/1", {"id": 1, "name": "book"}),
        call("GET", "/v1/items/2", {"error": "gone"}, status=410, at=1),
    )
    assert sorted(r.path for r in routes) == ["/v1/items/1", "/v1/items/2"]


def test_an_id_an_earlier_answer_handed_out_is_a_parameter_even_when_seen_once() -> None:
    # A replay hands out a new id ({{uuid}}): the read that follows must still find its route.
    order = str(uuid.uuid4())
    routes = derive(
        call("POST", "/orders", {"id": order}, status=201, body={"sku": "book"}),
        call("GET", f"/orders/{order}", {"id": order, "sku": "book"}, at=1),
    )
    assert [r.path for r in routes] == ["/orders", "/orders/:id"]
    assert routes[0].response is not None and routes[0].response.body == {"id": "{{uuid}}"}


def test_only_the_fields_that_tell_answers_apart_become_conditions() -> None:
    routes = derive(
        call(
            "POST",
            "/v1/charges",
            {"status": "ok"},
            status=201,
            body={"amount": 25, "sku": "book", "note": "a"},
        ),
        call(
            "POST",
            "/v1/charges",
            {"status": "ok"},
            status=201,
            body={"amount": 25, "sku": "book", "note": "b"},
            at=1,
        ),
        call(
            "POST",
            "/v1/charges",
            {"error": "declined"},
            status=402,
            body={"amount": 1998, "sku": "lamp"},
            at=2,
        ),
    )
    whens = sorted(json.dumps(msgspec.to_builtins(r.when), sort_keys=True) for r in routes)
    assert len(routes) == 2
    # `note` differs between calls answered alike: it is no condition; one field is enough.
    assert all("note" not in w for w in whens)
    assert all(w.count('"') > 0 for w in whens)
    statuses = {r.response.status for r in routes if r.response is not None}
    assert statuses == {201, 402}


def test_calls_answered_alike_share_one_route_that_matches_any_body() -> None:
    routes = derive(
        call("POST", "/v1/events", {"accepted": True}, status=202, body={"type": "a", "n": 1}),
        call("POST", "/v1/events", {"accepted": True}, status=202, body={"type": "b", "n": 2}, at=1),
    )
    (route,) = routes
    assert route.when is None


def test_a_recorded_field_named_like_an_operator_is_compared_as_a_value() -> None:
    routes = derive(
        call("POST", "/v1/pay", {"ok": True}, body={"type": "string"}),
        call("POST", "/v1/pay", {"ok": False}, status=400, body={"type": "number"}, at=1),
    )
    whens = [msgspec.to_builtins(r.when) for r in routes]
    assert {json.dumps(w["body"], sort_keys=True) for w in whens} == {
        '{"type": {"eq": "string"}}',
        '{"type": {"eq": "number"}}',
    }


def test_credentials_never_reach_the_routes_by_name_or_by_value() -> None:
    redactor = Redactor(values=["project-secret-value"])
    routes = derive(
        call(
            "POST",
            "/v1/customers",
            {"id": "cus_1", "echoedKey": KEY, "client_secret": "pi_secret_x", "note": "project-secret-value"},
            body={"email": "a@example.com", "api_key": "k-123456", "password": "hunter22"},
            query="token=tok-9999&page=1",
        ),
        call("POST", "/v1/customers", {"error": "exists"}, status=409, body={"email": "b@example.com"}, at=1),
        redactor=redactor,
    )
    text = json.dumps(plain(routes))
    for secret in (KEY, "pi_secret_x", "project-secret-value", "k-123456", "hunter22", "tok-9999"):
        assert secret not in text
    assert "[redacted]" in text
    for route in routes:
        assert route.when is None or "api_key" not in json.dumps(msgspec.to_builtins(route.when))


async def test_the_derived_routes_answer_the_recorded_requests_as_the_upstream_did() -> None:
    calls = [
        call("POST", "/v1/charges", {"error": "busy"}, status=503, body={"amount": 25, "sku": "book"}),
        call(
            "POST",
            "/v1/charges",
            {"id": "ch_1", "amount": 25},
            status=201,
            body={"amount": 25, "sku": "book"},
            at=1,
        ),
        call("GET", "/v1/charges/ch_1", {"id": "ch_1", "amount": 25, "at": int(NOW)}, at=2),
        call(
            "POST",
            "/v1/charges",
            {"error": "declined"},
            status=402,
            body={"amount": 1998, "sku": "lamp"},
            at=3,
        ),
        call("GET", "/v1/balance", {"calls": 1}, query="currency=EUR", at=4),
        call("GET", "/v1/balance", {"calls": 2}, query="currency=EUR", at=5),
    ]
    routes = derive(*calls)
    host = MockHost({"m": MockConfig(port=0, routes=routes)})
    await host.start()
    try:
        async with httpx.AsyncClient(base_url=host.url("m"), trust_env=False) as client:
            for sent in calls:
                target = sent.path + (f"?{sent.query_string.decode()}" if sent.query_string else "")
                headers = {"content-type": "application/json"}
                answer = await client.request(sent.method, target, content=sent.body, headers=headers)
                expected = json.loads(sent.response_body)
                assert answer.status_code == sent.status, (target, answer.text)
                got = answer.json()
                assert set(got) == set(expected)
                assert {k: v for k, v in got.items() if k != "at"} == {
                    k: v for k, v in expected.items() if k != "at"
                }
    finally:
        await host.stop()


def test_a_resource_read_again_answering_with_its_own_id_keeps_its_literal_path() -> None:
    routes = derive(
        *(call("GET", "/api/orders/ord_123", {"id": "ord_123", "amount": 100}, at=i) for i in range(3))
    )
    (route,) = routes
    assert route.path == "/api/orders/ord_123" and route.response is not None
    assert route.response.body == {"id": "ord_123", "amount": 100}  # static: served as fast as a written one
