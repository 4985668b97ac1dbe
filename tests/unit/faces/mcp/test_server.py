"""The MCP face, driven in memory through the official client (`mcp.Client(server)`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, MCPError, types
from unit.faces.standin import Demo, Gate

from preflight_sdk.faces.mcp.server import PreflightMcp
from preflight_sdk.faces.reflection.registry import reflect

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]  # direct in-process dispatch, and JSON-RPC framing with progress tokens


def _app(default_project: str | None = "/srv/demo", **options: Any) -> PreflightMcp:
    return PreflightMcp(reflect(Demo), factory=Demo, default_project=default_project, **options)


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Client(_app().server, raise_exceptions=True) as c:
        yield c


def _validate(result: types.CallToolResult, tool: types.Tool) -> dict[str, Any]:
    """Check the reply's structured content against the tool's outputSchema and the text mirror."""
    assert tool.output_schema is not None
    assert result.structured_content is not None
    jsonschema.Draft202012Validator(tool.output_schema).validate(result.structured_content)
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    assert json.loads(first.text) == result.structured_content
    return result.structured_content


async def _tools(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


# -- tools/list -----------------------------------------------------------------------------------


async def test_every_tool_is_listed_with_title_description_schemas_and_all_annotations(
    client: Client,
) -> None:
    tools = await _tools(client)
    assert list(tools) == [
        "preflight_init",
        "preflight_build",
        "preflight_setup",
        "preflight_run",
        "preflight_run_suite",
        "preflight_status",
        "preflight_logs",
        "preflight_clean",
        "preflight_clarify",
        "ask_question",
        "count_words",
    ]
    for tool in tools.values():
        assert tool.title and tool.description and len(tool.description) > 10, tool.name
        assert "Args:" not in tool.description
        assert tool.input_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is not None and hints.open_world_hint is not None, tool.name
        # destructive and idempotent mean something only for tools that change things
        changes = (hints.destructive_hint, hints.idempotent_hint)
        if hints.read_only_hint:
            assert changes == (None, None), tool.name
        else:
            assert None not in changes, tool.name


async def test_annotations_follow_the_operation_metadata(client: Client) -> None:
    tools = await _tools(client)
    clean = tools["preflight_clean"].annotations
    status = tools["preflight_status"].annotations
    build = tools["preflight_build"].annotations
    assert clean is not None and status is not None and build is not None
    assert (clean.read_only_hint, clean.destructive_hint, clean.idempotent_hint) == (False, True, True)
    assert (status.read_only_hint, status.destructive_hint, status.idempotent_hint) == (True, None, None)
    assert (build.read_only_hint, build.destructive_hint, build.idempotent_hint, build.open_world_hint) == (
        False,
        False,
        False,
        False,
    )


async def test_project_path_is_optional_with_a_default_project_and_required_without() -> None:
    for default, required in (("/srv/demo", False), (None, True)):
        async with Client(_app(default).server) as c:
            tools = await _tools(c)
            for tool in tools.values():
                if tool.name.startswith("preflight_"):
                    assert ("projectPath" in tool.input_schema.get("required", [])) is required, tool.name
            assert "configFile" in tools["preflight_init"].input_schema["properties"]
            assert "configFile" not in tools["preflight_status"].input_schema["properties"]


async def test_the_envelope_output_schema_types_data_with_the_method_result(client: Client) -> None:
    tools = await _tools(client)
    schema = tools["preflight_run"].output_schema
    assert schema is not None
    assert set(schema["properties"]) == {"success", "timestamp", "data", "error", "runId"}
    assert schema["required"] == ["success", "timestamp"]
    data, null = schema["properties"]["data"]["anyOf"]
    assert null == {"type": "null"}
    assert data["properties"] == {
        "runId": {"type": "string"},
        "passed": {"type": "boolean"},
        "failedCases": {"type": "integer"},
    }
    assert data["required"] == ["runId", "passed"]
    assert schema["description"] == "data: Outcome in results.schema.json"


# -- calls ----------------------------------------------------------------------------------------


async def test_a_call_returns_the_envelope_as_structured_content_and_text(client: Client) -> None:
    tools = await _tools(client)
    result = await client.call_tool("preflight_logs", {"container": "api", "lines": 5})
    assert result.is_error is False
    envelope = _validate(result, tools["preflight_logs"])
    assert envelope["success"] is True
    assert envelope["data"] == {
        "operation": "logs",
        "path": "/srv/demo",
        "arguments": {"container": "api", "lines": 5, "since": None, "follow": False},
    }


async def test_a_failing_verdict_is_a_successful_call_with_the_verdict_in_its_data(client: Client) -> None:
    tools = await _tools(client)
    result = await client.call_tool("preflight_run", {"filter": "failing"})
    assert result.is_error is False
    envelope = _validate(result, tools["preflight_run"])
    assert envelope["success"] is True
    assert envelope["runId"] == "r-1"
    assert envelope["data"] == {"runId": "r-1", "passed": False, "failedCases": 1}
    assert "error" not in envelope


async def test_every_error_reply_carries_code_message_retryable_and_hint(client: Client) -> None:
    # An error raised without a hint still tells the client what to do next.
    tools = await _tools(client)
    cases = [
        ("preflight_logs", {"container": "bug"}),  # INTERNAL
        ("preflight_logs", {"container": "docker-down"}),  # an environment error
        ("preflight_logs", {"container": "unhinted"}),  # raised with no hint
        ("preflight_run_suite", {"suiteId": "nope"}),
        ("preflight_logs", {}),  # a bad argument
    ]
    for name, arguments in cases:
        result = await client.call_tool(name, arguments)
        envelope = _validate(result, tools[name])
        assert (result.is_error, envelope["success"], "data" in envelope) == (True, False, False), arguments
        error = envelope["error"]
        assert {"code", "message", "retryable", "hint"} <= set(error), error
        assert isinstance(error["retryable"], bool) and error["hint"].strip(), error


@pytest.mark.parametrize(
    ("arguments", "field", "expected"),
    [
        ({"container": 7}, "container", "string"),
        ({}, "container", "string"),
        ({"container": "api", "lines": "50"}, "lines", "integer"),
        ({"container": "api", "follow": "yes"}, "follow", "boolean"),
        ({"container": "api", "projectPath": 3}, "projectPath", "string"),
    ],
    ids=["wrong-type", "missing-required", "string-for-int", "string-for-bool", "bad-project-path"],
)
async def test_a_bad_argument_is_an_invalid_input_tool_error_naming_field_and_type(
    client: Client, arguments: dict[str, Any], field: str, expected: str
) -> None:
    tools = await _tools(client)
    result = await client.call_tool("preflight_logs", arguments)
    assert result.is_error is True
    error = _validate(result, tools["preflight_logs"])["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["field"] == field
    assert error["details"]["expected"] == expected
    assert f"`{field}`" in error["message"]
    assert "container" in error["hint"]


async def test_an_unknown_argument_is_named_with_its_wire_name(client: Client) -> None:
    result = await client.call_tool("preflight_build", {"no_cache": True})
    assert result.is_error is True
    error = (result.structured_content or {})["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["field"] == "no_cache"
    assert "noCache" in error["details"]["arguments"]


async def test_camel_case_arguments_reach_the_method_by_python_name(client: Client) -> None:
    result = await client.call_tool("preflight_build", {"noCache": True, "service": "api"})
    data = (result.structured_content or {})["data"]
    assert data["arguments"] == {"no_cache": True, "service": "api", "pull": False}


async def test_an_unknown_tool_is_a_protocol_error() -> None:
    async with Client(_app().server) as c:
        with pytest.raises(MCPError) as caught:
            await c.call_tool("preflight_nope", {})
    assert caught.value.code == types.INVALID_PARAMS


async def test_a_preflight_error_becomes_its_envelope(client: Client) -> None:
    tools = await _tools(client)
    result = await client.call_tool("preflight_run_suite", {"suiteId": "nope"})
    assert result.is_error is True
    error = _validate(result, tools["preflight_run_suite"])["error"]
    assert error["code"] == "SUITE_NOT_FOUND"
    assert (error["message"], error["hint"]) == ("no suite `nope`", "one of: smoke")


async def test_an_unexpected_exception_is_internal_with_its_class_and_the_server_keeps_serving(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    tools = await _tools(client)
    result = await client.call_tool("preflight_logs", {"container": "bug"})
    assert result.is_error is True
    error = _validate(result, tools["preflight_logs"])["error"]
    assert error["code"] == "INTERNAL"
    assert error["details"]["causeClass"] == "builtins.KeyError"
    assert any(record.exc_info and record.exc_info[0] is KeyError for record in caplog.records)
    after = await client.call_tool("preflight_status", {})
    assert after.is_error is False


async def test_one_project_per_resolved_path_and_config_file_from_init(tmp_path: Any) -> None:
    app = _app(None)
    async with Client(app.server) as c:
        first = await c.call_tool(
            "preflight_init", {"projectPath": str(tmp_path), "configFile": "other.yaml"}
        )
        again = await c.call_tool("preflight_status", {"projectPath": str(tmp_path / "." / "sub" / "..")})
    assert (first.structured_content or {})["data"]["arguments"] == {"config_file": "other.yaml"}
    assert again.is_error is False
    project = app.pool.get(str(tmp_path))
    assert [name for name, _ in project.calls] == ["init", "status"]
    assert project.path == str(tmp_path.resolve())


async def test_a_missing_project_path_without_a_default_is_invalid_input() -> None:
    async with Client(_app(None).server) as c:
        result = await c.call_tool("preflight_status", {})
    error = (result.structured_content or {})["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["field"] == "projectPath"


# -- progress and cancellation ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_progress_events_reach_the_progress_callback_in_order(mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    all_seen = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))
        if len(seen) == 5:
            all_seen.set()

    async with Client(_app().server, mode=mode) as c:  # type: ignore[arg-type]
        result = await c.call_tool("preflight_build", {}, progress_callback=on_progress)
        assert result.is_error is False
        await c.call_tool("preflight_run", {}, progress_callback=on_progress)
        with anyio.fail_after(5):  # over JSON-RPC, callbacks may run after the reply arrives
            await all_seen.wait()
    assert seen[:3] == [(1.0, None, "[api] step 1"), (2.0, None, "[api] step 2"), (3.0, None, "[api] step 3")]
    assert seen[3:] == [(1.0, 2.0, "case a"), (2.0, 2.0, "case b")]


async def test_a_method_without_progress_parameter_gets_none_and_one_with_gets_a_sink() -> None:
    app = _app()
    async with Client(app.server) as c:
        await c.call_tool("preflight_setup", {})
    project = app.pool.get(None)
    assert len(project.sinks) == 1 and callable(project.sinks[0])


@pytest.mark.parametrize("mode", MODES)
async def test_cancelling_a_call_cancels_the_operation_and_shutdown_cleans_what_setup_started(
    mode: str,
) -> None:
    gate = Gate()
    app = _app()
    Demo.gate = gate
    try:
        async with Client(app.server, mode=mode) as c:  # type: ignore[arg-type]
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await c.call_tool("preflight_setup", {"timeout": "90s"})

                tg.start_soon(call)
                with anyio.fail_after(5):
                    await gate.entered.wait()
                tg.cancel_scope.cancel()
            with anyio.fail_after(5):
                await gate.cancelled.wait()
            status = await c.call_tool("preflight_status", {})  # the server still answers
            assert status.is_error is False
    finally:
        Demo.gate = None
    project = app.pool.get(None)
    assert app.pool.started == [project]
    await app.shutdown()
    await app.shutdown()  # a second shutdown (signal and EOF together) cleans nothing twice
    assert [name for name, _ in project.calls].count("clean") == 1
    assert app.pool.started == []


async def test_a_clean_through_the_tool_releases_the_environment_and_keep_on_exit_keeps_it() -> None:
    released = _app()
    async with Client(released.server) as c:
        await c.call_tool("preflight_setup", {})
        await c.call_tool("preflight_clean", {})
    assert released.pool.started == []
    kept = _app(keep_on_exit=True)
    async with Client(kept.server) as c:
        await c.call_tool("preflight_setup", {})
    await kept.shutdown()
    assert "clean" not in [name for name, _ in kept.pool.get(None).calls]


# -- aliases --------------------------------------------------------------------------------------


async def test_an_alias_tool_takes_and_returns_its_own_shapes(tmp_path: Any) -> None:
    app = _app(allow_other_projects=True)  # repo_path names a folder outside /srv/demo
    async with Client(app.server) as c:
        tools = await _tools(c)
        ask = tools["ask_question"]
        assert set(ask.input_schema["properties"]) == {"user_intention", "repo_path"}
        result = await c.call_tool(
            "ask_question", {"user_intention": "add login", "repo_path": str(tmp_path)}
        )
        assert result.is_error is False
        assert result.structured_content == {"status": "completed", "summary": "asked: add login"}
        jsonschema.Draft202012Validator(ask.output_schema or {}).validate(result.structured_content)
        counted = await c.call_tool("count_words", {"user_intention": "add a login page"})
        defaulted = await c.call_tool("ask_question", {"user_intention": "no path"})
        assert counted.structured_content == {"result": 4}
        assert (tools["count_words"].output_schema or {})["properties"]["result"] == {"type": "integer"}
        bad = await c.call_tool("ask_question", {"intention": "x"})
        bad_count = await c.call_tool("count_words", {"words": 3})
    assert bad.is_error is True  # the alias's own error shape (its from_error)
    assert (bad.structured_content or {})["status"] == "error"
    assert (bad.structured_content or {})["error"]["code"] == "INVALID_INPUT"
    assert bad_count.is_error is True  # no from_error: the envelope
    assert (bad_count.structured_content or {})["success"] is False
    assert (bad_count.structured_content or {})["error"]["code"] == "INVALID_INPUT"
    project = app.pool.get(str(tmp_path))
    assert project.calls == [
        ("clarify", {"intention": "add login", "answers": None, "session_id": None, "force_adr": False})
    ]
    assert defaulted.is_error is False
    assert [name for name, _ in app.pool.get(None).calls] == ["clarify", "clarify"]  # the default project


async def test_list_tools_rejects_a_cursor_it_never_gave() -> None:
    async with Client(_app().server) as c:
        with pytest.raises(MCPError) as caught:
            await c.list_tools(cursor="page-2")
    assert caught.value.code == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_is_built_once_and_served_identically_afterwards(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app()
    built = 0
    listing = app.listing

    def counting() -> types.ListToolsResult:
        nonlocal built
        built += 1
        return listing()

    monkeypatch.setattr(app, "listing", counting)
    async with Client(app.server, mode=mode) as c:  # type: ignore[arg-type]
        first = await c.list_tools()
        second = await c.list_tools()
    assert built == 1
    assert first.model_dump() == second.model_dump()
    assert [t.name for t in second.tools][:2] == ["preflight_init", "preflight_build"]


async def test_a_server_with_a_project_serves_only_it_and_its_subfolders(tmp_path: Any) -> None:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "proj-other").mkdir()
    async with Client(_app(str(root)).server) as c:
        inside = await c.call_tool("preflight_status", {"projectPath": str(root / "sub")})
        outside = await c.call_tool("preflight_status", {"projectPath": str(tmp_path / "proj-other")})
        climbing = await c.call_tool("preflight_status", {"projectPath": str(root / "sub" / ".." / "..")})
        by_alias = await c.call_tool("ask_question", {"user_intention": "x", "repo_path": "/"})
    assert inside.is_error is False
    for refused in (outside, climbing):
        error = (refused.structured_content or {})["error"]
        assert refused.is_error is True and error["code"] == "PROJECT_NOT_ALLOWED"
        assert "--allow-any-project" in error["hint"] and error["details"]["project"] == str(root)
    assert by_alias.is_error is True and (by_alias.structured_content or {})["error"]["code"] == "PROJECT_NOT_ALLOWED"
    async with Client(_app(str(root), allow_other_projects=True).server) as c:
        allowed = await c.call_tool("preflight_status", {"projectPath": str(tmp_path / "proj-other")})
    assert allowed.is_error is False
