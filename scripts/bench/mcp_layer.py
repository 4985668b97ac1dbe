#!/usr/bin/env python3
"""`preflight-mcp`'s own layer, for scripts/bench/mcp.py: the real server, launcher and envelope,
serving a stand-in project whose `init` returns at once (run with `python -P`: this directory
holds `mcp.py`, which would shadow the package).

The difference between this and the floor is what the export layer costs (argument validation,
the project pool, the envelope, JSON encoding); the difference between this and `preflight-mcp`
is what the operation itself costs.
"""

from __future__ import annotations

import sys

import anyio

from preflight_sdk.core.operations import operation
from preflight_sdk.core.results.base import Result
from preflight_sdk.faces.mcp.launcher import configure_logging, serve
from preflight_sdk.faces.mcp.server import PreflightMcp
from preflight_sdk.faces.reflection.registry import reflect


class Loaded(Result, frozen=True, kw_only=True):
    """A tiny result."""

    project_name: str


class Instant:
    """A project whose only operation does no work."""

    def __init__(self, path: str, config_file: str | None) -> None:
        self.path = path

    @operation(title="Load the project", idempotent=True, group="environment")
    async def init(self) -> Loaded:
        """Return at once."""
        return Loaded(project_name="bench")


if __name__ == "__main__":
    configure_logging("warning")
    anyio.run(serve, PreflightMcp(reflect(Instant), factory=Instant, default_project=sys.argv[1]))
