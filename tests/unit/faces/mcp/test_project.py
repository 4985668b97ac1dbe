"""The real `Project` tools, listed and called in memory through the official client.

The tests are parametrized over the tools the server lists, so every operation added to `Project`
is checked here without touching this file: schemas, annotations, a bad argument of every
property, and the reply shapes. Docker is replaced by the fake engine.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, types
from support.fake_engine import FakeEngine
from support.results import check_whole_data

from preflight_sdk import Project
from preflight_sdk.faces.mcp.server import PreflightMcp
from preflight_sdk.faces.reflection.registry import reflect

pytestmark = pytest.mark.anyio

# Read once at collection: the same listing the server answers `tools/list` with.
# Every group, the opt-in ones (`contracts`) included: each tool's schema is checked here.
EVERY_GROUP = reflect().groups()
LISTED = [tool.name for tool in PreflightMcp(default_project=None, groups=EVERY_GROUP).listing().tools]
ALIASES = {alias.name: op.name for op in reflect() for alias in op.aliases}
OPERATION_OF = {f"preflight_{op.name}": op.name for op in reflect()} | ALIASES

READ_ONLY = {"preflight_status", "preflight_logs"}
CHANGING = {
    "preflight_init",
    "preflight_build",
    "preflight_setup",
    "preflight_clean",
    "preflight_run",
    "preflight_run_suite",
    "preflight_mock_requests",  # `clear` empties the journal
    "preflight_clarify",
    "preflight_verify",  # starts a program: open-world, never read-only
}
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
# Tried in order: the first the property's schema rejects is its wrong-typed value.
WRONG_VALUES: tuple[Any, ...] = ({"unexpected": ["object"]}, 12345, "text", True, [1])
MINIMAL = "project: {name: minimal}\n"


@pytest.fixture
async def engine() -> AsyncIterator[FakeEngine]:
    async with FakeEngine() as fake:
        yield fake


@pytest.fixture
def app(engine: FakeEngine) -> PreflightMcp:
    def factory(path: str, config_file: str | None) -> Project:
        return Project.open(path, config_file, engine=engine)

    return PreflightMcp(factory=factory, default_project=None, groups=EVERY_GROUP)


@pytest.fixture
async def client(app: PreflightMcp) -> AsyncIterator[Client]:
    async with Client(app.server, raise_exceptions=True) as c:
        yield c


async def _tools(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _check_schema(schema: dict[str, Any], where: str) -> None:
    """Valid 2020-12 JSON Schema, object-rooted, every `$ref` local and defined."""
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object", where
    defs = schema.get("$defs", {})
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs, f"{where}: {ref}"
    assert set(schema.get("required", [])) <= set(schema.get("properties", {})), where


def _text_mirrors(result: types.CallToolResult) -> dict[str, Any]:
    """The structured content, after checking that `content[0].text` is the same JSON."""
    assert result.structured_content is not None
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    assert json.loads(first.text) == result.structured_content
    return result.structured_content


def _envelope(result: types.CallToolResult, tool: types.Tool) -> dict[str, Any]:
    """The envelope, checked against the tool's outputSchema and its text mirror."""
    envelope = _text_mirrors(result)
    assert tool.output_schema is not None
    jsonschema.Draft202012Validator(tool.output_schema).validate(envelope)
    check_whole_data(envelope, tool.output_schema)
    assert envelope["success"] is (not result.is_error)
    return envelope


def _wrong_value(prop: dict[str, Any], defs: dict[str, Any]) -> Any:
    validator = jsonschema.Draft202012Validator({**prop, "$defs": defs})
    for value in WRONG_VALUES:
        if not validator.is_valid(value):
            return value
    raise AssertionError(f"no wrong-typed value for {prop}")


def _valid_value(name: str, prop: dict[str, Any], project: Path) -> Any:
    if name in ("projectPath", "repo_path"):
        return str(project)
    kinds = prop.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    for kind, value in (("string", "x"), ("integer", 1), ("boolean", False), ("object", {}), ("array", [])):
        if kind in kinds:
            return value
    raise AssertionError(f"no valid value for required {name}: {prop}")


# -- tools/list ------------------------------------------------------------------------------------


async def test_every_public_coroutine_of_project_is_listed_with_its_aliases(client: Client) -> None:
    tools = await _tools(client)
    assert list(tools) == LISTED
    public = {
        name
        for name, fn in inspect.getmembers(Project, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert {name for name in LISTED if name.startswith("preflight_")} == {f"preflight_{n}" for n in public}
    assert {"preflight_init", "preflight_status", "preflight_clean", "preflight_mock_requests"} <= set(tools)
    assert set(ALIASES) == set(LISTED) - {f"preflight_{n}" for n in public}


@pytest.mark.parametrize("name", LISTED)
async def test_every_tool_has_valid_object_schemas_described_arguments_and_hints(
    client: Client, name: str
) -> None:
    tool = (await _tools(client))[name]
    _check_schema(tool.input_schema, f"{name} inputSchema")
    assert tool.output_schema is not None, name
    _check_schema(tool.output_schema, f"{name} outputSchema")
    properties: dict[str, Any] = tool.input_schema["properties"]
    for prop_name, prop in properties.items():
        assert isinstance(prop.get("description"), str) and len(prop["description"]) > 5, (
            f"{name}.{prop_name} has no description"
        )
    assert tool.description and len(tool.description) > 40 and "Args:" not in tool.description, name
    assert tool.title, name
    hints = tool.annotations
    assert hints is not None, name
    assert hints.title == tool.title
    assert hints.read_only_hint is not None and hints.open_world_hint is not None, name
    if hints.read_only_hint:
        assert (hints.destructive_hint, hints.idempotent_hint) == (None, None), name
    else:
        assert hints.destructive_hint is not None and hints.idempotent_hint is not None, name
    meta = next(op for op in reflect() if op.name == OPERATION_OF[name]).meta
    assert (hints.read_only_hint, hints.open_world_hint) == (meta.read_only, meta.open_world), name
    if name in ALIASES:
        # A seed alias keeps the seed's own argument names and reply shape.
        assert all(SNAKE.match(p) for p in properties), name
        branches = tool.output_schema.get("anyOf", [tool.output_schema])
        assert "projectPath" not in properties
        assert all("success" not in b.get("properties", {}) for b in branches), "not the envelope"
        return
    assert all(CAMEL.match(p) for p in properties), f"{name}: {sorted(properties)}"
    assert properties["projectPath"]["type"] == "string"
    assert "projectPath" in tool.input_schema["required"]
    envelope = tool.output_schema
    assert {"success", "timestamp", "data", "error", "runId"} <= set(envelope["properties"]), name
    assert envelope["required"] == ["success", "timestamp"]


async def test_clean_is_destructive_and_the_readers_are_read_only(client: Client) -> None:
    tools = await _tools(client)
    annotations = {name: tools[name].annotations for name in READ_ONLY | CHANGING | {"preflight_clean"}}
    for name in READ_ONLY:
        hints = annotations[name]
        assert hints is not None and hints.read_only_hint is True, name
    for name in CHANGING:
        hints = annotations[name]
        assert hints is not None and hints.read_only_hint is False, name
    clean = annotations["preflight_clean"]
    assert clean is not None
    assert (clean.destructive_hint, clean.idempotent_hint) == (True, True)
    destructive = {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint}
    # clean removes the environment; cancel_run stops a run; prune_runs deletes recorded runs;
    # delete_test and delete_suite delete what was saved (a test with its runs)
    assert destructive == {
        "preflight_clean",
        "preflight_cancel_run",
        "preflight_prune_runs",
        "preflight_delete_test",
        "preflight_delete_suite",
    }


async def test_with_a_default_project_project_path_becomes_optional() -> None:
    app = PreflightMcp(default_project="/srv/somewhere")
    async with Client(app.server) as c:
        tools = await _tools(c)
    for name, tool in tools.items():
        if name in ALIASES:
            continue
        assert "projectPath" in tool.input_schema["properties"], name
        assert "projectPath" not in tool.input_schema.get("required", []), name


# -- bad arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LISTED)
async def test_a_wrong_typed_argument_is_an_invalid_input_error_naming_the_field(
    client: Client, engine: FakeEngine, tmp_path: Path, name: str
) -> None:
    tool = (await _tools(client))[name]
    schema = tool.input_schema
    properties: dict[str, Any] = schema["properties"]
    assert properties, f"{name} takes no arguments: nothing to get wrong"
    required = {p: _valid_value(p, properties[p], tmp_path) for p in schema.get("required", [])}
    for field, prop in properties.items():
        wrong = _wrong_value(prop, schema.get("$defs", {}))
        result = await client.call_tool(name, {**required, field: wrong})
        assert result.is_error is True, (name, field)
        if name in ALIASES:
            # The seed's error shape: {status: error, error: {code, message, details, recovery_hint}}.
            reply = _text_mirrors(result)
            assert reply["status"] == "error"
            error = reply["error"]
            assert error["recovery_hint"], (name, field)
        else:
            envelope = _envelope(result, tool)
            assert "data" not in envelope
            error = envelope["error"]
            assert error["hint"], (name, field)
            assert error["retryable"] is False
        assert error["code"] == "INVALID_INPUT", (name, field, error)
        assert error["details"]["field"] == field, (name, field, error)
        assert error["details"]["expected"], (name, field)
        assert f"`{field}`" in error["message"], (name, field, error["message"])
    # A rejected call starts nothing: no project state, no Docker call.
    assert not (tmp_path / ".preflight").exists()
    assert engine.calls == []


async def test_an_unknown_argument_of_a_real_tool_names_the_camel_case_arguments(client: Client) -> None:
    tools = await _tools(client)
    result = await client.call_tool(
        "preflight_logs", {"projectPath": "/nowhere", "container": "api", "follow_for": "1s"}
    )
    error = _envelope(result, tools["preflight_logs"])["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["field"] == "follow_for"
    assert "followFor" in error["details"]["arguments"]


# -- real calls ------------------------------------------------------------------------------------


async def test_init_and_status_on_a_minimal_project_succeed(
    client: Client, engine: FakeEngine, tmp_path: Path
) -> None:
    (tmp_path / "e2e.yaml").write_text(MINIMAL, encoding="utf-8")
    tools = await _tools(client)
    init = await client.call_tool("preflight_init", {"projectPath": str(tmp_path)})
    assert init.is_error is False
    data = _envelope(init, tools["preflight_init"])["data"]
    assert data["projectName"] == "minimal"
    assert data["configPath"] == str(tmp_path / "e2e.yaml")
    assert (data["services"], data["mocks"], data["suites"]) == ([], [], [])
    assert data["state"] == "initialized"
    again = await client.call_tool("preflight_init", {"projectPath": str(tmp_path / "e2e.yaml")})
    assert _envelope(again, tools["preflight_init"])["data"]["sessionId"] == data["sessionId"]
    status = await client.call_tool("preflight_status", {"projectPath": str(tmp_path)})
    assert status.is_error is False
    state = _envelope(status, tools["preflight_status"])["data"]
    assert state["state"] == "initialized"
    assert state["services"] == []


async def test_a_directory_without_e2e_yaml_is_config_not_found(client: Client, tmp_path: Path) -> None:
    tools = await _tools(client)
    for name in ("preflight_init", "preflight_status", "preflight_run"):
        result = await client.call_tool(name, {"projectPath": str(tmp_path)})
        assert result.is_error is True, name
        error = _envelope(result, tools[name])["error"]
        assert error["code"] == "CONFIG_NOT_FOUND", name
        assert error["hint"], name
    assert not (tmp_path / "e2e.yaml").exists()


async def test_a_missing_container_names_the_valid_ones(client: Client, tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: one}\nservices:\n  api:\n    build: {image: busybox:test}\n", encoding="utf-8"
    )
    tools = await _tools(client)
    result = await client.call_tool("preflight_logs", {"projectPath": str(tmp_path), "container": "nope"})
    error = _envelope(result, tools["preflight_logs"])["error"]
    assert error["code"] == "CONTAINER_NOT_FOUND"
    assert error["details"]["valid"] == ["api"]


async def test_the_read_architecture_alias_answers_in_the_seed_shape(client: Client, tmp_path: Path) -> None:
    if "read_architecture" not in LISTED:
        pytest.skip("no read_architecture alias")
    tools = await _tools(client)
    alias = tools["read_architecture"]
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    found = await client.call_tool("read_architecture", {"repo_path": str(repo)})
    assert found.is_error is False
    reply = _text_mirrors(found)
    assert alias.output_schema is not None
    jsonschema.Draft202012Validator(alias.output_schema).validate(reply)
    assert reply["status"] == "success"
    assert reply["architecture"]["uid"] is None
    missing = await client.call_tool("read_architecture", {"repo_path": str(tmp_path / "absent")})
    assert missing.is_error is True
    error = _text_mirrors(missing)
    assert error["status"] == "error"
    assert error["error"]["code"] == "REPO_NOT_FOUND"
    assert error["error"]["recovery_hint"]
    jsonschema.Draft202012Validator(alias.output_schema).validate(error)  # errors are described too
