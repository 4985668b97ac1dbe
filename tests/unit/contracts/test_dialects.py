"""The answer is the OpenAPI dialect's: where the compiled first check cannot say, the dialect decides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from preflight_sdk.contracts import check_request, check_response, load_contract
from preflight_sdk.contracts.document import Contract

JSON = {"content-type": "application/json"}


def contract(tmp_path: Path, version: str, schema: dict[str, Any]) -> Contract:
    document = {
        "openapi": version,
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "requestBody": {"content": {"application/json": {"schema": schema}}},
                    "responses": {
                        "200": {
                            "description": "A thing.",
                            "content": {"application/json": {"schema": schema}},
                        }
                    },
                }
            }
        },
    }
    (tmp_path / "api.json").write_text(json.dumps(document))
    loaded, problems = load_contract(tmp_path / "api.json")
    assert problems == [] and loaded is not None
    return loaded


def answer(c: Contract, body: Any) -> list[tuple[str, str]]:
    checked = check_response(c, "api", method="POST", path="/things", status=200, headers=JSON, body=body)
    return [(v.path, v.rule) for v in checked.violations]


def test_openapi_30_nullable_allows_null_and_nothing_else(tmp_path: Path) -> None:
    c = contract(
        tmp_path, "3.0.3", {"type": "object", "properties": {"note": {"type": "string", "nullable": True}}}
    )
    assert answer(c, {"note": None}) == []
    assert answer(c, {"note": "x"}) == []
    assert answer(c, {"note": 3}) == [("body.note", "type")]


def test_a_write_only_property_may_not_be_answered_and_a_read_only_one_not_sent(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "password": {"type": "string", "writeOnly": True},
            "id": {"type": "integer", "readOnly": True},
        },
    }
    c = contract(tmp_path, "3.0.3", schema)
    assert answer(c, {"id": 1}) == []
    assert [rule for _, rule in answer(c, {"password": "s3cret"})] == ["writeOnly"]
    sent = check_request(c, "api", method="POST", path="/things", query={}, headers=JSON, body={"id": 1})
    assert [v.rule for v in sent.violations] == ["readOnly"]


def test_formats_are_asserted_as_the_dialect_knows_them(tmp_path: Path) -> None:
    c = contract(
        tmp_path, "3.1.0", {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}
    )
    assert answer(c, {"at": "2024-01-01T00:00:00Z"}) == []
    assert answer(c, {"at": "yesterday"}) == [("body.at", "format")]
    small = contract(tmp_path, "3.0.3", {"type": "integer", "format": "int32"})
    assert answer(small, 2**40) == [("body", "format")]
