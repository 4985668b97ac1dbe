"""`evaluate_mock_expect`: count, body and headers of the traffic a mock received."""

from __future__ import annotations

import httpx
import msgspec
import pytest

from preflight_sdk.config.testfile import MockExpect
from preflight_sdk.mocks import evaluate_mock_expect

pytestmark = pytest.mark.anyio


def expect(**fields: object) -> MockExpect:
    return msgspec.convert({"name": "payments", **fields}, MockExpect)


@pytest.fixture
async def traffic(serve, client: httpx.AsyncClient):  # type: ignore[no-untyped-def]
    routes = [{"method": "ANY", "path": "/*", "response": {"status": 201}}]
    async with serve(payments=routes) as host:
        url = host.url("payments")
        await client.post(
            f"{url}/v1/charges/ch_1", json={"amount": 100, "currency": "EUR"}, headers={"Idem": "k1"}
        )
        await client.get(f"{url}/v1/charges/ch_1")
        await client.post(
            f"{url}/v1/charges/ch_2",
            json={"amount": 250, "currency": "EUR", "meta": {"o": 7}},
            headers={"Idem": "k2"},
        )
        yield host.entries("payments")


async def test_count_of_method_and_path_pattern_passes(traffic) -> None:
    [result] = evaluate_mock_expect(expect(method="POST", path="/v1/charges/:id", count=2), traffic)
    assert result.passed
    assert result.path == "mock.payments.count"
    assert (result.expected, result.actual) == (2, 2)


async def test_count_with_an_operator_and_a_wildcard_path(traffic) -> None:
    assert evaluate_mock_expect(expect(path="/v1/*", count=">= 3"), traffic)[0].passed
    assert evaluate_mock_expect(expect(method="get", count="< 2"), traffic)[0].passed
    assert not evaluate_mock_expect(expect(method="DELETE", count="> 0"), traffic)[0].passed


async def test_failing_count_says_what_was_received(traffic) -> None:
    [result] = evaluate_mock_expect(expect(method="POST", path="/v1/refunds", count=1), traffic)
    assert not result.passed
    assert result.actual == 0
    assert result.message.startswith("mock.payments.count: expected 1 POST /v1/refunds request(s), got 0")
    assert "POST /v1/charges/ch_1 → 201" in result.message


async def test_without_count_at_least_one_request_is_expected(traffic) -> None:
    assert evaluate_mock_expect(expect(method="POST"), traffic)[0].passed
    [missing] = evaluate_mock_expect(expect(method="PUT"), traffic)
    assert not missing.passed
    assert missing.expected == ">= 1"


async def test_body_and_headers_are_checked_on_the_last_matching_request(traffic) -> None:
    results = evaluate_mock_expect(
        expect(
            method="POST",
            path="/v1/charges/:id",
            body={"amount": {"gt": 200}, "meta": {"o": 7}},
            headers={"IDEM": "k2"},
        ),
        traffic,
    )
    assert all(r.passed for r in results), [r.message for r in results if not r.passed]
    assert [r.path for r in results] == [
        "mock.payments.count",
        "mock.payments.body.amount",
        "mock.payments.body.meta.o",
        "mock.payments.headers.idem",
    ]


async def test_failing_body_check_shows_expected_and_actual(traffic) -> None:
    results = evaluate_mock_expect(
        expect(method="POST", body={"currency": "USD"}, headers={"idem": "k1"}), traffic
    )
    failed = [r for r in results if not r.passed]
    assert [(r.path, r.expected, r.actual) for r in failed] == [
        ("mock.payments.body.currency", "USD", "EUR"),
        ("mock.payments.headers.idem", "k1", "k2"),
    ]


async def test_body_check_without_any_matching_request_fails_clearly(traffic) -> None:
    results = evaluate_mock_expect(expect(method="PATCH", body={"a": 1}), traffic)
    assert [r.passed for r in results] == [False, False]
    assert "no PATCH * request was received" in results[1].message


async def test_an_invalid_count_is_a_failed_check_not_an_exception(traffic) -> None:
    [result] = evaluate_mock_expect(expect(count="about three"), traffic)
    assert not result.passed
    assert "count" in result.message


async def test_form_bodies_are_checked_by_field() -> None:
    from preflight_sdk.core.results.mocks import RecordedRequest

    entry = RecordedRequest(
        method="POST",
        url="http://x/login",
        path="/login",
        query={},
        headers={},
        body="user=ann",
        status=200,
        timestamp="2026-01-01T00:00:00.000Z",
        epoch_ms=0,
        body_encoding="text",
        form={"user": "ann"},
    )
    results = evaluate_mock_expect(expect(path="/login", body={"user": "ann"}), [entry])
    assert all(r.passed for r in results)
