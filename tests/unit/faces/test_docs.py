"""The generated references in docs/ match the code (regenerate with scripts/gen-mcp-docs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.faces.cli.app import build_cli
from preflight_sdk.faces.docs import GENERATED, render, splice
from preflight_sdk.faces.reflection.registry import reflect

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("relative", sorted(GENERATED))
def test_the_generated_reference_is_up_to_date(relative: str) -> None:
    path = REPO / relative
    assert path.read_text(encoding="utf-8") == render(REPO)[path], (
        f"{relative} is out of date: run scripts/gen-mcp-docs"
    )


def test_every_tool_and_every_command_is_documented() -> None:
    mcp = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    cli = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for op in reflect():
        assert f"### preflight_{op.name}\n" in mcp
    for name in build_cli().commands:
        assert f"### preflight {name}\n" in cli


def test_the_client_configs_are_ready_to_paste() -> None:
    mcp = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert "claude mcp add preflight -- preflight-mcp --project /path/to/project" in mcp
    assert '"mcpServers"' in mcp and '"servers"' in mcp


def test_splice_replaces_only_the_named_block() -> None:
    text = "intro\n<!-- BEGIN GENERATED: x -->\nold\n<!-- END GENERATED: x -->\noutro\n"
    assert (
        splice(text, "x", "new")
        == "intro\n<!-- BEGIN GENERATED: x -->\nnew\n<!-- END GENERATED: x -->\noutro\n"
    )
    with pytest.raises(ValueError):
        splice(text, "y", "new")
