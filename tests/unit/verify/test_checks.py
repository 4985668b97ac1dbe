"""Static checks of one tool definition (pure functions: no server needed)."""

from __future__ import annotations

from typing import Any

import pytest

from preflight_sdk.verify.checks import check_tool
from preflight_sdk.verify.compare import canonical_hash, compare_tools, schema_diff
from preflight_sdk.verify.spec import ExpectedTool

DESCRIPTION = "Search the catalogue by a free-text query and return the matching books."


def tool(**overrides: Any) -> dict[str, Any]:
    """A definition with no finding at all; each test breaks one thing."""
    base: dict[str, Any] = {
        "name": "search_books",
        "title": "Search books",
        "description": DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Words to look for."}},
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True},
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def codes(definition: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f.severity, f.code) for f in check_tool(definition)}


def test_a_complete_definition_has_no_finding() -> None:
    assert check_tool(tool()) == []


@pytest.mark.parametrize("name", ["has space", "", "a/b", "é", "x" * 129, 7])
def test_invalid_names_are_errors(name: Any) -> None:
    assert ("error", "TOOL_NAME_INVALID") in codes(tool(name=name))


def test_a_name_over_64_characters_is_only_a_warning() -> None:
    assert codes(tool(name="n" * 65)) == {("warning", "TOOL_NAME_LONG")}
    assert codes(tool(name="n" * 64)) == set()
    assert codes(tool(name="ns.tool-name_1")) == set()


@pytest.mark.parametrize("schema", [{"type": "string"}, {"properties": {}}, ["type", "object"], None])
def test_input_schema_must_be_an_object_rooted_schema(schema: Any) -> None:
    definition = tool()
    definition["inputSchema"] = schema
    assert ("error", "INPUT_SCHEMA_NOT_OBJECT") in codes(definition)


def test_an_invalid_json_schema_is_reported_with_where() -> None:
    findings = check_tool(
        tool(inputSchema={"type": "object", "properties": {"n": {"type": "banana", "description": "x"}}})
    )

    assert [(f.code, f.path) for f in findings] == [("INPUT_SCHEMA_INVALID", "inputSchema.properties.n.type")]


def test_refs_must_resolve_locally_and_never_remotely() -> None:
    schema = {
        "type": "object",
        "$defs": {"Filter": {"type": "string", "description": "A filter."}},
        "properties": {
            "ok": {"$ref": "#/$defs/Filter"},
            "dangling": {"$ref": "#/$defs/Nope", "description": "x"},
            "remote": {"$ref": "https://example.com/schema.json", "description": "x"},
            "literal": {"const": {"$ref": "#/not/a/ref"}, "description": "data, not a reference"},
        },
    }

    findings = check_tool(tool(inputSchema=schema))

    assert [(f.code, f.path) for f in findings] == [
        ("SCHEMA_REF_UNRESOLVED", "inputSchema.properties.dangling.$ref"),
        ("SCHEMA_REF_UNRESOLVED", "inputSchema.properties.remote.$ref"),
    ]
    assert "outside the schema" in findings[1].message


def test_required_names_must_be_properties_also_in_nested_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "x"},
            "where": {"type": "object", "description": "x", "properties": {}, "required": ["city"]},
        },
        "required": ["q", "ghost"],
    }

    findings = check_tool(tool(inputSchema=schema))

    assert [(f.code, f.path) for f in findings] == [
        ("REQUIRED_NOT_IN_PROPERTIES", "inputSchema.required"),
        ("REQUIRED_NOT_IN_PROPERTIES", "inputSchema.properties.where.required"),
    ]


def test_required_names_may_come_from_a_composed_schema() -> None:
    schema = {"type": "object", "allOf": [{"properties": {"q": {"type": "string"}}}], "required": ["q"]}
    assert codes(tool(inputSchema=schema)) == set()


def test_output_schema_is_checked_when_present() -> None:
    assert codes(tool(outputSchema={"type": "array", "items": {"type": "string"}})) == {
        ("warning", "OUTPUT_SCHEMA_NOT_OBJECT")
    }
    assert ("error", "OUTPUT_SCHEMA_INVALID") in codes(
        tool(outputSchema={"type": "object", "required": "all"})
    )
    assert ("error", "OUTPUT_SCHEMA_INVALID") in codes(tool(outputSchema="object"))
    assert codes(tool(outputSchema={"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}})) == {
        ("error", "SCHEMA_REF_UNRESOLVED")
    }


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (None, {("error", "DESCRIPTION_MISSING")}),
        ("   ", {("error", "DESCRIPTION_MISSING")}),
        ("Search books.", {("warning", "DESCRIPTION_WEAK")}),
        ("search_books", {("warning", "DESCRIPTION_WEAK")}),
        (
            DESCRIPTION + "\n\nArgs:\n    query: words to look for.\n",
            {("warning", "DESCRIPTION_DOCSTRING_LEAK")},
        ),
        (DESCRIPTION + "\n\n:param query: words to look for.", {("warning", "DESCRIPTION_DOCSTRING_LEAK")}),
        (DESCRIPTION + "\n\nReturns the books; arguments are described in the schema.", set()),
    ],
)
def test_description_quality(description: str | None, expected: set[tuple[str, str]]) -> None:
    definition = tool()
    definition.pop("description")
    if description is not None:
        definition["description"] = description
    assert codes(definition) == expected


def test_each_property_without_a_description_is_a_warning_unless_its_ref_has_one() -> None:
    schema = {
        "type": "object",
        "$defs": {"Mode": {"enum": ["a", "b"], "description": "How to search."}},
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "mode": {"$ref": "#/$defs/Mode"}},
    }

    findings = check_tool(tool(inputSchema=schema))

    assert [(f.code, f.path) for f in findings] == [
        ("PROPERTY_DESCRIPTION_MISSING", "inputSchema.properties.a"),
        ("PROPERTY_DESCRIPTION_MISSING", "inputSchema.properties.b"),
    ]


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, {("warning", "ANNOTATIONS_MISSING")}),
        ({"title": "Search books", "openWorldHint": False}, {("warning", "ANNOTATIONS_MISSING")}),
        ({"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}, set()),
        # Only a real contradiction warns: a read-only tool cannot be destructive.
        ({"readOnlyHint": True, "destructiveHint": True}, {("warning", "ANNOTATIONS_INCOHERENT")}),
    ],
)
def test_annotations_present_and_coherent(annotations: Any, expected: set[tuple[str, str]]) -> None:
    assert codes(tool(annotations=annotations)) == expected


@pytest.mark.parametrize(
    "annotations",
    [
        # What the official servers serve on their read-only tools: coherent, so no warning.
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
        {"readOnlyHint": True, "destructiveHint": False},
        {"readOnlyHint": True, "idempotentHint": True},
        {"readOnlyHint": True, "idempotentHint": False},
    ],
)
def test_read_only_with_agreeing_destructive_and_idempotent_hints_is_coherent(annotations: Any) -> None:
    assert codes(tool(annotations=annotations)) == set()


def test_a_missing_title_is_info_and_annotations_title_counts() -> None:
    assert codes(tool(title=None)) == {("info", "TITLE_MISSING")}
    assert codes(tool(title=None, annotations={"readOnlyHint": True, "title": "Search"})) == set()


def test_schema_hash_ignores_key_order_and_the_diff_names_what_changed() -> None:
    declared = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    reordered = {
        "required": ["a"],
        "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
        "type": "object",
    }
    served = {
        "type": "object",
        "properties": {"a": {"type": "number"}, "c": {"type": "string"}},
        "required": ["c"],
        "additionalProperties": False,
    }

    assert canonical_hash(declared) == canonical_hash(reordered)
    assert schema_diff(declared, reordered) is None
    diff = schema_diff(declared, served)
    assert diff is not None
    assert (diff.added, diff.removed, diff.changed) == (["c"], ["b"], ["a"])
    assert (diff.required_added, diff.required_removed, diff.other_keys) == (
        ["c"],
        ["a"],
        ["additionalProperties"],
    )


def test_a_duplicate_served_name_is_an_error_on_that_tool() -> None:
    reports = compare_tools([ExpectedTool(name="search_books")], [tool(), tool()], strict=False)

    assert [(r.name, r.status) for r in reports] == [("search_books", "found")]
    assert [(f.severity, f.code) for f in reports[0].findings] == [("error", "TOOL_NAME_DUPLICATE")]
