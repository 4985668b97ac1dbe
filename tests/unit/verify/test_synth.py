"""Arguments built from an inputSchema for the read-only calls."""

from __future__ import annotations

from typing import Any

import pytest

from preflight_sdk.verify.synth import valid_arguments, wrong_typed_arguments


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": {}}, {}),
        ({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}, {}),
        (
            {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "minLength": 3},
                    "n": {"type": "integer", "minimum": 5},
                    "x": {"type": "number", "exclusiveMinimum": 0},
                    "on": {"type": "boolean"},
                    "mode": {"enum": ["fast", "slow"]},
                    "when": {"type": "string", "format": "date-time"},
                    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "opt": {"type": ["null", "string"]},
                    "ref": {"$ref": "#/$defs/Depth"},
                    "pick": {"anyOf": [{"type": "object", "required": ["z"]}, {"type": "integer"}]},
                },
                "required": ["q", "n", "x", "on", "mode", "when", "tags", "opt", "ref", "pick"],
                "$defs": {"Depth": {"type": "integer", "default": 2}},
            },
            {
                "q": "xxx",
                "n": 5,
                "x": 0.5,
                "on": False,
                "mode": "fast",
                "when": "2026-01-01T00:00:00Z",
                "tags": ["x"],
                "opt": "x",
                "ref": 2,
                "pick": 0,
            },
        ),
    ],
)
def test_the_smallest_valid_arguments_fill_only_required_properties(
    schema: dict[str, Any], expected: Any
) -> None:
    assert valid_arguments(schema) == expected


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": "object",
            "properties": {"y": {"type": "string", "pattern": "^[0-9]{4}$"}},
            "required": ["y"],
        },
        {"type": "object", "properties": {}, "required": ["ghost"]},
        {"type": "object", "properties": {"r": {"$ref": "#/$defs/Nope"}}, "required": ["r"]},
        {"type": "string"},
        None,
    ],
)
def test_arguments_that_cannot_be_built_or_validated_give_none(schema: Any) -> None:
    assert valid_arguments(schema) is None


def test_a_wrongly_typed_argument_changes_one_property_and_the_schema_rejects_it() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["q"],
    }

    assert wrong_typed_arguments(schema) == ("q", {"q": 12345})
    assert wrong_typed_arguments({"type": "object", "properties": {"free": {}}}) is None


def test_a_type_list_property_gets_a_wrong_value_of_its_first_non_null_type() -> None:
    from preflight_sdk.verify.synth import wrong_typed_arguments

    schema = {
        "type": "object",
        "properties": {"name": {"type": ["string", "null"]}, "lines": {"type": ["integer", "null"]}},
        "additionalProperties": False,
    }
    probe = wrong_typed_arguments(schema)
    assert probe == ("name", {"name": 12345})
