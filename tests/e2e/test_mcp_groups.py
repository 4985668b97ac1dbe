"""`preflight-mcp --tools` / `--without` over real stdio: what the client lists is what it pays for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LAUNCHER = str(Path(sys.executable).parent / "preflight-mcp")
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
