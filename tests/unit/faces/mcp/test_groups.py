"""What an agent pays for the tool list: groups to leave tools out, lean descriptions, JSON examples."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from mcp import Client, MCPError, types

from preflight_sdk.faces.mcp.server import PreflightMcp
from preflight_sdk.faces.reflection.registry import reflect

pytestmark = pytest.mark.anyio

MODEL_BUDGET = 33_500  # bytes of the whole list as a model reads it (docs/performance.md)
# Bytes of the whole answer, output schemas and annotations included: every client downloads and
# decodes it, and past about this size the tools/list round trip exceeds 1.5x the floor.
FULL_BUDGET = 64_000
SEED_PAIR = {"require_clarification", "read_architecture"}


async def _listed(**options: Any) -> dict[str, types.Tool]:
    async with Client(PreflightMcp(default_project="/srv/p", **options).server) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def _model_bytes(tool: types.Tool) -> int:
    read = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
    return len(json.dumps(read, separators=(",", ":"), ensure_ascii=False).encode())


def _group_of(name: str) -> str:
    if name in SEED_PAIR:
        return "preflights"
    op = reflect().get(name.removeprefix("preflight_"))
    assert op is not None, name
    return op.meta.group


async def test_every_tool_has_a_group_and_the_alias_pair_is_its_own_group() -> None:
    tools = await _listed()
    groups = {name: _group_of(name) for name in tools}
    assert all(groups.values()), groups
    assert {n for n, g in groups.items() if g == "preflights"} == SEED_PAIR
    assert {"environment", "runs", "clarify", "verify", "preflights"} <= set(reflect().groups())


async def test_only_the_chosen_groups_are_served() -> None:
    tools = await _listed(groups=["environment", "runs"])
    assert tools, "nothing served"
    assert {_group_of(name) for name in tools} == {"environment", "runs"}
    assert {"preflight_run", "preflight_setup", "preflight_clean"} <= set(tools)


async def test_without_leaves_groups_out_and_keeps_the_alias_pair_unless_named() -> None:
    tools = await _listed(without=["clarify", "verify"])
    assert not {"preflight_clarify", "preflight_read_architecture", "preflight_verify"} & set(tools)
    assert SEED_PAIR <= set(tools)  # on by default: clients configured for Preflights expect them
    assert not SEED_PAIR & set(await _listed(without=["preflights"]))


async def test_a_tool_left_out_cannot_be_called() -> None:
    app = PreflightMcp(default_project="/srv/p", groups=["environment"])
    async with Client(app.server) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("preflight_verify", {})
    assert caught.value.code == types.INVALID_PARAMS


async def test_descriptions_show_tool_arguments_never_python_and_each_example_is_valid_input() -> None:
    tools = await _listed()
    app = PreflightMcp(default_project="/srv/p")
    examples = 0
    for name, tool in tools.items():
        text = tool.description or ""
        assert "await " not in text and "project." not in text and "Project." not in text, name
        if "Example: " not in text:
            continue
        examples += 1
        arguments = json.loads(text.split("Example: ", 1)[1].splitlines()[0])
        jsonschema.Draft202012Validator(tool.input_schema).validate(arguments)
        app.tools[name].convert(arguments)  # and the server accepts them
    assert examples >= 8
    logs = tools["preflight_logs"].description or ""
    assert 'Example: {"container": "api", "lines": 50, "since": "5m"}' in logs


async def test_the_list_as_a_model_reads_it_stays_within_its_budget() -> None:
    tools = await _listed()
    assert sum(_model_bytes(tool) for tool in tools.values()) <= MODEL_BUDGET
    project = tools["preflight_status"].input_schema["properties"]["projectPath"]
    assert len(project["description"]) < 120  # repeated in every tool
    assert "default" not in project  # an absent optional argument is null: saying so costs bytes


async def test_the_whole_list_with_its_output_schemas_stays_within_its_budget() -> None:
    tools = await _listed()
    assert len(tools) == len(PreflightMcp(default_project="/srv/p").tools)  # every group
    whole = [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools.values()]
    size = len(json.dumps({"tools": whole}, separators=(",", ":"), ensure_ascii=False).encode())
    outputs = sum(len(json.dumps(tool["outputSchema"], separators=(",", ":"))) for tool in whole)
    assert size <= FULL_BUDGET, f"tools/list is {size:,} bytes, {outputs:,} of them output schemas"
    assert outputs <= size // 2  # outlines, not whole result types: docs/schema/results.schema.json


async def test_the_tests_group_serves_the_saved_test_tools() -> None:
    tools = await _listed(groups=["tests"])
    assert set(tools) == {
        f"preflight_{name}"
        for name in (
            "save_test", "get_test", "list_tests", "delete_test", "run_test", "get_latest_run",
            "save_suite", "list_suites", "delete_suite", "export_tests", "import_tests", "import_file",
        )
    }  # fmt: skip
