"""Per-request response templates: every variable, JSON types kept, headers, freshness, errors."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import httpx
import pytest

pytestmark = pytest.mark.anyio


async def test_request_variables_are_rendered_from_each_request(serve, client: httpx.AsyncClient) -> None:
    body = {
        "param": "{{request.params.id}}",
        "query": "{{request.query.q}}",
        "header": "{{request.headers.X-Trace}}",
        "nested": "{{request.body.user.name}}",
        "method": "{{request.method}}",
        "path": "{{request.path}}",
        "sentence": "user {{request.body.user.name}} asked for {{request.params.id}}",
    }
    async with serve(m=[{"method": "POST", "path": "/things/:id", "response": {"body": body}}]) as host:
        response = await client.post(
            f"{host.url('m')}/things/7?q=search", json={"user": {"name": "ann"}}, headers={"x-trace": "t-1"}
        )
        assert response.json() == {
            "param": "7",
            "query": "search",
            "header": "t-1",
            "nested": "ann",
            "method": "POST",
            "path": "/things/7",
            "sentence": "user ann asked for 7",
        }


async def test_a_value_that_is_only_a_template_keeps_its_json_type(serve, client: httpx.AsyncClient) -> None:
    body = {
        "n": "{{request.body.n}}",
        "flag": "{{request.body.flag}}",
        "obj": "{{request.body.obj}}",
        "list": "{{request.body.list}}",
        "none": "{{request.body.none}}",
        "text": "n={{request.body.n}}",
        "counter": "{{counter}}",
        "ts": "{{timestamp}}",
    }
    sent = {"n": 3.5, "flag": True, "obj": {"a": [1, 2]}, "list": [1, "x"], "none": None}
    async with serve(m=[{"method": "POST", "path": "/t", "response": {"body": body}}]) as host:
        data = (await client.post(f"{host.url('m')}/t", json=sent)).json()
        assert data["n"] == 3.5
        assert data["flag"] is True
        assert data["obj"] == {"a": [1, 2]}
        assert data["list"] == [1, "x"]
        assert data["none"] is None
        assert data["text"] == "n=3.5"
        assert data["counter"] == 1
        assert isinstance(data["ts"], int)


async def test_the_whole_body_can_echo_the_request_body(serve, client: httpx.AsyncClient) -> None:
    async with serve(
        m=[{"method": "POST", "path": "/echo", "response": {"body": "{{request.body}}"}}]
    ) as host:
        response = await client.post(f"{host.url('m')}/echo", json={"a": [1, {"b": None}]})
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {"a": [1, {"b": None}]}


async def test_templates_work_in_header_values(serve, client: httpx.AsyncClient) -> None:
    response_spec = {
        "status": 201,
        "headers": {"Location": "/orders/{{request.body.id}}", "X-Count": "{{counter}}", "X-Req": "{{uuid}}"},
        "body": {"ok": True},
    }
    async with serve(m=[{"method": "POST", "path": "/orders", "response": response_spec}]) as host:
        first = await client.post(f"{host.url('m')}/orders", json={"id": 99})
        second = await client.post(f"{host.url('m')}/orders", json={"id": 100})
        assert first.status_code == 201
        assert first.headers["location"] == "/orders/99"
        assert (first.headers["x-count"], second.headers["x-count"]) == ("1", "2")
        uuid.UUID(first.headers["x-req"])
        assert first.headers["x-req"] != second.headers["x-req"]


async def test_uuid_now_timestamp_and_counter_are_fresh_for_every_request(
    serve, client: httpx.AsyncClient
) -> None:
    body = {
        "id": "{{uuid}}",
        "other": "{{uuid}}",
        "now": "{{now}}",
        "ts": "{{timestamp}}",
        "n": "{{counter}}",
    }
    async with serve(m=[{"path": "/fresh", "response": {"body": body}}]) as host:
        before = int(time.time() * 1000)
        answers = [(await client.get(f"{host.url('m')}/fresh")).json() for _ in range(3)]
        after = int(time.time() * 1000)
    ids = {a["id"] for a in answers} | {a["other"] for a in answers}
    assert len(ids) == 6
    for value in ids:
        assert uuid.UUID(value).version == 4
    assert [a["n"] for a in answers] == [1, 2, 3]
    stamps = [a["ts"] for a in answers]
    assert stamps == sorted(stamps)
    assert before <= stamps[0] and stamps[-1] <= after
    for answer in answers:
        assert answer["now"].endswith("Z")
        moment = datetime.fromisoformat(answer["now"].replace("Z", "+00:00"))
        assert moment.tzinfo is not None
        assert before - 1 <= moment.astimezone(UTC).timestamp() * 1000 <= after + 1


async def test_counter_counts_per_route(serve, client: httpx.AsyncClient) -> None:
    routes = [
        {"path": "/a", "response": {"body": "{{counter}}"}},
        {"path": "/b", "response": {"body": "{{counter}}"}},
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        seen = [(await client.get(f"{url}{p}")).json() for p in ("/a", "/a", "/b", "/a", "/b")]
        assert seen == [1, 2, 1, 3, 2]


async def test_unknown_template_variable_answers_500_naming_it_and_the_server_keeps_serving(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        {"method": "POST", "path": "/bad", "response": {"body": {"x": "{{request.body.missing.deep}}"}}},
        {"path": "/ok", "response": {"body": {"ok": True}}},
    ]
    async with serve(m=routes) as host:
        bad = await client.post(f"{host.url('m')}/bad", json={"present": 1})
        assert bad.status_code == 500
        data = bad.json()
        assert data["error"] == "unknown template variable"
        assert data["variable"] == "request.body.missing.deep"
        assert data["routeIndex"] == 0
        assert (await client.get(f"{host.url('m')}/ok")).json() == {"ok": True}
        entry = host.entries("m")[0]
        assert entry.status == 500
        assert entry.error is not None and "request.body.missing.deep" in entry.error


async def test_string_bodies_are_sent_as_text_unless_a_content_type_is_given(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        {"path": "/text", "response": {"body": "hello {{request.query.name}}"}},
        {
            "path": "/raw-json",
            "response": {"body": '{"raw": true}', "headers": {"Content-Type": "application/json"}},
        },
        {"path": "/empty", "response": {"status": 204}},
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        text = await client.get(f"{url}/text?name=bob")
        assert text.headers["content-type"] == "text/plain; charset=utf-8"
        assert text.text == "hello bob"
        raw = await client.get(f"{url}/raw-json")
        assert raw.headers["content-type"] == "application/json"
        assert raw.json() == {"raw": True}
        empty = await client.get(f"{url}/empty")
        assert empty.status_code == 204
        assert empty.content == b""


async def test_a_template_on_a_body_that_could_not_be_parsed_says_so_and_why(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [{"method": "POST", "path": "/echo", "response": {"body": {"a": "{{request.body.a}}"}}}]
    deep = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    async with serve(m=routes) as host:
        nested = await client.post(
            f"{host.url('m')}/echo", content=deep, headers={"content-type": "application/json"}
        )
        text = await client.post(
            f"{host.url('m')}/echo", content=b"a=1", headers={"content-type": "text/plain"}
        )
        fine = await client.post(f"{host.url('m')}/echo", json={"a": 1})
        entries = host.entries("m")
    assert nested.status_code == 500
    data = nested.json()
    assert data["error"] == "request body could not be parsed" and data["variable"] == "request.body.a"
    assert "nested deeper than 64 levels" in data["reason"], data
    assert entries[0].error is not None and "body could not be parsed" in entries[0].error
    assert text.status_code == 500 and text.json()["reason"] == "the body is text, not JSON (text/plain)"
    assert fine.json() == {"a": 1}
