"""The journal records what each mock answered (real HTTP): status, headers, body, route, sequence step."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.anyio

SEQUENCE = [
    {
        "method": "POST",
        "path": "/charges",
        "name": "charge",
        "sequence": [
            {"status": 503, "headers": {"Retry-After": "1"}, "body": {"error": "busy"}},
            {"status": 201, "body": {"id": "ch_1", "echo": "{{request.body.amount}}"}},
        ],
    }
]


async def test_each_entry_carries_the_answer_and_the_sequence_step(serve, client: httpx.AsyncClient) -> None:
    async with serve(pay=SEQUENCE) as host:
        base = host.url("pay")
        for _ in range(3):
            await client.post(f"{base}/charges", json={"amount": 5})
        await client.get(f"{base}/nowhere")
        listed = (await client.get(f"{base}/_mock/requests")).json()["requests"]
        entries = host.entries("pay")
    busy, created, again, missed = entries
    assert (busy.matched_route, busy.sequence_step) == ("charge", 0)
    assert busy.response is not None and busy.response.status == 503
    assert busy.response.headers["retry-after"] == "1" and busy.response.body == {"error": "busy"}
    assert created.sequence_step == 1 and again.sequence_step == 1  # the last step repeats
    assert created.response is not None and created.response.body == {"id": "ch_1", "echo": 5}
    assert missed.sequence_step is None and missed.response is not None and missed.response.status == 404
    assert listed[0]["response"]["body"] == {"error": "busy"} and listed[0]["sequenceStep"] == 0
