"""What `preflight verify --self` compares `preflight-mcp` against: the registry's own tools.

Each tool is expected with exactly the input and output schemas and the annotations the registry
gives it, so any drift between `Project`, the registry and the running server is a finding.
"""

from __future__ import annotations

import sys

from preflight_sdk.faces.reflection.registry import reflect
from preflight_sdk.verify.spec import ExpectedTool

from .schemas import build_tools

__all__ = ["self_check_command", "self_check_target", "self_check_tools"]


def self_check_command(project: str) -> list[str]:
    """Return the argv that starts this installation's `preflight-mcp` on `project`, every group served.

    The opt-in groups (`contracts`) are named too: the check compares every tool the registry
    defines, and a server left at its default list would miss them.
    """
    groups = ",".join(reflect().groups())
    return [sys.executable, "-m", "preflight_sdk.faces.mcp", "--project", project, "--tools", groups]


def self_check_target(project: str) -> tuple[list[str], list[ExpectedTool]]:
    """The command and expected tools of `verify(self_check=True)` (the `self_check` entry point of core/face_hooks.py)."""
    return self_check_command(project), self_check_tools()


def self_check_tools() -> list[ExpectedTool]:
    """Return every tool `preflight-mcp --project …` must serve, as the registry defines it."""
    expected: list[ExpectedTool] = []
    for spec in build_tools(reflect(), project_required=False):
        annotations: dict[str, object] = {"readOnlyHint": spec.read_only, "openWorldHint": spec.open_world}
        if not spec.read_only:
            annotations |= {"destructiveHint": spec.destructive, "idempotentHint": spec.idempotent}
        expected.append(
            ExpectedTool(
                name=spec.name,
                input_schema=spec.input_schema,
                output_schema=spec.output_schema,
                annotations=annotations,
            )
        )
    return expected
