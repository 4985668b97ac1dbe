"""Output schemas are outlines that every reply validates against; the whole types are on disk."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import jsonschema
import msgspec
import pytest

from preflight_sdk.core.errors import ErrorInfo, PreflightError
from preflight_sdk.core.results.envelope import failure, success
from preflight_sdk.faces.mcp.outputs import RESULTS_FILE, envelope_schema, result_types, results_text
from preflight_sdk.faces.mcp.server import PreflightMcp
from preflight_sdk.faces.reflection.registry import reflect

REPO = Path(__file__).resolve().parents[4]
COMMITTED = REPO / "docs" / "schema" / RESULTS_FILE
TOOLS = PreflightMcp(default_project="/srv/p").tools


class Inner(msgspec.Struct, kw_only=True, rename="camel"):
    """A nested object."""

    name: str
    hit_count: int = 0


class First(msgspec.Struct, tag="first"):
    x: int


class Second(msgspec.Struct, tag="second"):
    y: str


class Sample(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """A result with one field of each kind.

    Attributes:
        run_id: the run.
    """

    run_id: str
    status: Literal["passed", "failed"]
    inner: Inner
    maybe: Inner | None = None
    items: list[Inner] = []
    counts: dict[str, int] = {}
    choice: First | Second | None = None
    anything: Any = None
    ratio: float | None = None


SAMPLES = [
    Sample(run_id="r1", status="passed", inner=Inner(name="a")),
    Sample(
        run_id="r2",
        status="failed",
        inner=Inner(name="b", hit_count=3),
        maybe=Inner(name="c"),
        items=[Inner(name="d"), Inner(name="e", hit_count=1)],
        counts={"x": 1},
        choice=Second(y="z"),
        anything=[1, {"k": None}],
        ratio=0.5,
    ),
]


def _wire(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


def _keys(node: Any, *, names: bool = False) -> set[str]:
    """Every keyword used in a schema (not the property names under `properties`)."""
    if isinstance(node, list):
        return set().union(*(_keys(item) for item in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found: set[str] = set() if names else set(node)
    for key, value in node.items():
        found |= _keys(value, names=key == "properties" and not names)
    return found


def test_the_outline_accepts_every_reply_and_rejects_a_wrong_top_level() -> None:
    schema = envelope_schema(Sample)
    jsonschema.Draft202012Validator.check_schema(schema)
    outline = jsonschema.Draft202012Validator(schema)
    for sample in SAMPLES:
        outline.validate(_wire(success(sample, run_id=sample.run_id)))
    outline.validate(_wire(success(None)))
    outline.validate(_wire(failure(PreflightError("down", code="NOT_RUNNING", hint="run setup"))))
    good = _wire(success(SAMPLES[1]))
    wrong = [
        {**good, "success": "yes"},
        {k: v for k, v in good.items() if k != "timestamp"},
        {**good, "data": {**good["data"], "status": "maybe"}},
        {**good, "data": {**good["data"], "inner": "a"}},
        {**good, "data": {**good["data"], "items": {}}},
        {**good, "data": {k: v for k, v in good["data"].items() if k != "runId"}},
        {**good, "data": {**good["data"], "ratio": "half"}},
        {**good, "error": {"code": "X", "message": "m", "retryable": False}},  # no hint
    ]
    for reply in wrong:
        assert not outline.is_valid(reply), reply


def test_the_outline_types_only_the_top_level_of_data() -> None:
    schema = envelope_schema(Sample)
    assert _keys(schema) <= {"type", "properties", "required", "enum", "anyOf", "description"}
    assert list(schema) == ["type", "properties", "required", "description"]
    # `data` may be null (an operation that found nothing); each branch has one plain type.
    assert schema["properties"]["data"]["anyOf"][1] == {"type": "null"}
    data = schema["properties"]["data"]["anyOf"][0]
    assert data["type"] == "object"
    assert data["required"] == ["runId", "status", "inner"]
    assert data["properties"]["status"] == {"enum": ["failed", "passed"]}
    # An optional field is left out when it has no value: its plain type, as optional arguments.
    assert data["properties"]["maybe"] == {"type": "object"}  # deeper: a plain object
    assert data["properties"]["ratio"] == {"type": "number"}
    assert schema["properties"]["runId"] == {"type": "string"}
    assert data["properties"]["items"] == {"type": "array"}
    assert data["properties"]["anything"] == {}
    # What the outline leaves to the whole type (docs/schema/results.schema.json):
    deep = _wire(success(SAMPLES[1]))
    deep["data"]["inner"]["hitCount"] = "many"
    jsonschema.Draft202012Validator(schema).validate(deep)
    assert not jsonschema.Draft202012Validator(_whole(Sample)).is_valid(deep["data"])


def _type_arrays(node: Any) -> list[Any]:
    if isinstance(node, list):
        return [found for item in node for found in _type_arrays(item)]
    if not isinstance(node, dict):
        return []
    here = [node["type"]] if isinstance(node.get("type"), list) else []
    return here + [found for value in node.values() for found in _type_arrays(value)]


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_no_output_schema_writes_a_type_array(name: str) -> None:
    assert _type_arrays(TOOLS[name].output_schema) == []


def test_every_result_struct_leaves_out_a_field_without_value() -> None:
    """The outline lists a field whose default is None with its plain type: that is true only
    while the Struct leaves such a field out of the reply instead of writing `null`."""
    import msgspec.inspect as mi

    seen: dict[type, mi.StructType] = {}

    def walk(info: Any) -> None:
        if isinstance(info, mi.StructType) and info.cls not in seen:
            seen[info.cls] = info
            for field in info.fields:
                walk(field.type)
        for attr in ("types", "item_types"):
            for inner in getattr(info, attr, ()):
                walk(inner)
        for attr in ("item_type", "key_type", "value_type"):
            if getattr(info, attr, None) is not None:
                walk(getattr(info, attr))

    for info in mi.multi_type_info([*result_types(reflect()), ErrorInfo]):
        walk(info)
    writes_null = [
        cls.__name__
        for cls, info in seen.items()
        if not cls.__struct_config__.omit_defaults
        and any(not f.required and f.default is None for f in info.fields)
    ]
    assert len(seen) > 50 and writes_null == []


def _whole(typ: Any) -> dict[str, Any]:
    schema: dict[str, Any] = msgspec.json.schema(typ)
    return schema


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_output_schema_is_an_outline_naming_its_whole_type(name: str) -> None:
    schema = TOOLS[name].output_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema
    assert not {"title", "default"} & _keys(schema), name
    named = re.fullmatch(rf"(?:data: )?(.+) in {re.escape(RESULTS_FILE)}", schema["description"])
    assert named, schema["description"]
    defs = json.loads(COMMITTED.read_text(encoding="utf-8"))["$defs"]
    for type_name in re.split(r" \| | or ", named.group(1)):
        assert type_name == "null" or type_name in defs, f"{name}: {type_name} is not in {RESULTS_FILE}"
    if not TOOLS[name].alias:
        assert schema["properties"]["error"]["required"] == ["code", "message", "retryable", "hint"]


def test_the_committed_results_schema_is_up_to_date() -> None:
    text = results_text(result_types(reflect()))
    assert COMMITTED.is_file(), f"{COMMITTED} is missing: run scripts/gen-schema"
    assert COMMITTED.read_text(encoding="utf-8") == text, (
        f"{RESULTS_FILE} is out of date: run scripts/gen-schema"
    )
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    run = schema["$defs"]["RunResult"]
    assert run["description"] and run["properties"]["suites"]["items"] == {"$ref": "#/$defs/SuiteResult"}
