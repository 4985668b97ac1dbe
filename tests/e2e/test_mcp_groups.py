"""`preflight-mcp --tools` / `--without` over real stdio: what the client lists is what it pays for."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from preflight_sdk.faces.reflection.registry import reflect

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
SEED_PAIR = {"require_clarification", "read_architecture"}


async def _names(project: Path, *options: str) -> dict[str, str]:
    params = StdioServerParameters(
        command=LAUNCHER, args=["--project", str(project), *options], env=dict(os.environ)
    )
    with anyio.fail_after(30), (project / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            return {t.name: t.description or "" for t in (await client.list_tools()).tools}


async def test_tool_groups_choose_what_is_listed_and_descriptions_show_arguments(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: groups}\n", encoding="utf-8")
    every = await _names(tmp_path)
    testing = await _names(tmp_path, "--tools", "environment,runs")
    lean = await _names(tmp_path, "--without", "clarify,verify,preflights")

    assert {"preflight_clarify", "preflight_verify", "require_clarification", "read_architecture"} <= set(
        every
    )
    assert {"preflight_setup", "preflight_run", "preflight_logs"} <= set(testing)
    assert not {"preflight_clarify", "preflight_verify", "require_clarification"} & set(testing)
    left_out = {"preflight_clarify", "preflight_read_architecture", "preflight_verify", *SEED_PAIR}
    assert set(lean) == set(every) - left_out
    # What a model reads is tool arguments, never Python SDK calls.
    assert all("await " not in text and "project." not in text for text in every.values())
    assert 'Example: {"filter": "orders"}' in every["preflight_run"]


async def _tools(project: Path, *options: str) -> dict[str, types.Tool]:
    params = StdioServerParameters(
        command=LAUNCHER, args=["--project", str(project), *options], env=dict(os.environ)
    )
    with anyio.fail_after(30), (project / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            return {t.name: t for t in (await client.list_tools()).tools}


def _documented(kind: str) -> set[str]:
    """The tool names docs/mcp.md lists after `- **<kind>**` in its annotations block."""
    line = next(
        line for line in DOCS.read_text(encoding="utf-8").splitlines() if line.startswith(f"- **{kind}**")
    )
    return set(re.findall(r"`([a-z_]+)`", line.split("):", 1)[1]))


async def test_the_documented_hints_groups_and_advice_are_what_the_server_serves(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: groups}\n", encoding="utf-8")
    # The docs' annotation lists name every tool, the opt-in groups' included: serve them all.
    served = await _tools(tmp_path, "--tools", ",".join(reflect().groups()))
    assert {"preflight_check_response", "preflight_generate_cases"} <= set(served)

    read_only = {n for n, t in served.items() if t.annotations and t.annotations.read_only_hint}
    assert _documented("Read-only") == read_only
    assert _documented("Destructive") == {
        n for n, t in served.items() if t.annotations and t.annotations.destructive_hint
    }
    assert _documented("Open-world") == {
        n for n, t in served.items() if t.annotations and t.annotations.open_world_hint
    }
    # Read-only tools leave the two hints out, as the docs say.
    assert all(served[n].annotations.destructive_hint is None for n in read_only)  # type: ignore[union-attr]
    assert all(served[n].annotations.idempotent_hint is None for n in read_only)  # type: ignore[union-attr]
    # The docs' advice for an agent that only tests keeps the saved-test tools.
    text = DOCS.read_text(encoding="utf-8")
    advice = re.search(r"An agent that only tests starts `preflight-mcp --tools ([a-z,]+)`", text)
    assert advice is not None
    advised = await _names(tmp_path, "--tools", advice.group(1))
    assert {"preflight_save_test", "preflight_run_test", "preflight_list_tests"} <= set(advised)
    assert "| `tests` |" in text


def test_an_unknown_group_is_a_usage_error_naming_the_groups(tmp_path: Path) -> None:
    done = subprocess.run(
        [LAUNCHER, "--tools", "environment,testz"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown tool group testz" in done.stderr
    assert "environment" in done.stderr and "preflights" in done.stderr
    assert done.stdout == ""
