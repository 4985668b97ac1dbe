"""A recording mock over real HTTP: hand-written routes answer, the rest goes to a real upstream process.

The upstream is `tests/support/json_upstream.py` run as its own process; the mock is a real
`MockHost`. What it kept, once saved and served again, answers without the upstream.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import msgspec
import pytest
from support.upstreams import upstream

from preflight_sdk.config.mocks.recorded import read_route_file
from preflight_sdk.config.model import MockConfig
from preflight_sdk.core.redaction import DEFAULT
from preflight_sdk.mocks import MockHost
from preflight_sdk.mocks.record import save_recording

pytestmark = pytest.mark.anyio

AUTH = {"Authorization": "Bearer sk_test_recorder"}


def config(**fields: object) -> MockConfig:
    data = {
        "port": 0,
        "routes": [{"path": "/v1/balance", "response": {"body": {"handWritten": True}}}],
        **fields,
    }
    return msgspec.convert(data, MockConfig)


async def test_a_recording_mock_forwards_what_no_route_answers_and_keeps_each_exchange(
    tmp_path: Path,
) -> None:
    with upstream() as real:
        host = MockHost({"payments": config()})
        await host.start()
        try:
            recorder = host.record("payments", real.url)
            async with httpx.AsyncClient(
                base_url=host.url("payments"), trust_env=False, headers=AUTH
            ) as client:
                charge = await client.post("/v1/charges", json={"amount": 25, "sku": "book"})
                assert charge.status_code == 201 and charge.json()["id"] == "ch_1"
                read = await client.get("/v1/charges/ch_1")
                assert read.status_code == 200 and read.json()["amount"] == 25
                # A hand-written route still answers, and is not recorded.
                assert (await client.get("/v1/balance")).json() == {"handWritten": True}
            assert [(e.method, e.path, e.status) for e in recorder.exchanges()] == [
                ("POST", "/v1/charges", 201),
                ("GET", "/v1/charges/ch_1", 200),
            ]
            path = tmp_path / "e2e.recorded" / "payments.yaml"
            saved = save_recording(
                recorder, mock="payments", path=path, redactor=DEFAULT, at="2026-11-30T10:00:00Z"
            )
            assert saved.exchanges == 2
            recorded, problems = read_route_file(path)
            assert problems == [] and recorded is not None
            host.stop_recording(
                "payments", msgspec.structs.replace(config(), routes=[*config().routes, *recorded.routes])
            )
        finally:
            await host.stop()
    # The upstream is gone: the recorded routes answer alone.
    host = MockHost(
        {"payments": msgspec.structs.replace(config(), routes=[*config().routes, *recorded.routes])}
    )
    await host.start()
    try:
        async with httpx.AsyncClient(base_url=host.url("payments"), trust_env=False, headers=AUTH) as client:
            charge = await client.post("/v1/charges", json={"amount": 25, "sku": "book"})
            assert charge.status_code == 201
            assert charge.json()["id"] == "ch_1" and charge.json()["amount"] == 25
            read = await client.get("/v1/charges/ch_1")
            assert read.status_code == 200 and read.json()["id"] == "ch_1"
        [entry] = [e for e in host.entries("payments") if e.path == "/v1/charges"]
        assert entry.route_recorded == "2026-11-30T10:00:00Z"
    finally:
        await host.stop()


async def test_an_unreachable_upstream_is_answered_502_and_counted_not_recorded() -> None:
    host = MockHost({"payments": config()})
    await host.start()
    try:
        recorder = host.record("payments", "http://127.0.0.1:9")  # discard port: nothing listens
        async with httpx.AsyncClient(base_url=host.url("payments"), trust_env=False) as client:
            answer = await client.get("/v1/charges/ch_1")
        assert answer.status_code == 502 and answer.json()["error"] == "proxy failed"
        assert len(recorder) == 0 and recorder.failed == 1
        assert recorder.first_failure is not None and "127.0.0.1:9" in recorder.first_failure
    finally:
        await host.stop()


async def test_recorded_routes_are_not_served_while_the_mock_records_again() -> None:
    recorded = {
        "path": "/v1/charges/:id",
        "response": {"body": {"from": "the old recording"}},
        "recorded": {"at": "2026-01-01T00:00:00Z"},
    }
    with upstream() as real:
        host = MockHost({"payments": config(routes=[recorded])})
        await host.start()
        try:
            async with httpx.AsyncClient(
                base_url=host.url("payments"), trust_env=False, headers=AUTH
            ) as client:
                assert (await client.get("/v1/charges/ch_9")).json() == {"from": "the old recording"}
                host.record("payments", real.url)
                fresh = await client.get("/v1/charges/ch_9")
            assert fresh.status_code == 404 and fresh.json()["error"]["code"] == "resource_missing"
        finally:
            await host.stop()
