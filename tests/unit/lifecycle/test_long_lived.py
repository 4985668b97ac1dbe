"""A long-lived Project (the MCP server, a notebook kernel) sees what other processes did since."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_engine import FakeEngine

from preflight_sdk import PreflightError, Project

pytestmark = pytest.mark.anyio

CONFIG = """
project: {name: x}
services:
  api:
    build: {image: "busybox:test"}
    container: {ports: ["0:8080"]}
"""


async def test_a_setup_and_a_clean_by_another_process_show_in_status(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    server = Project.open(root, engine=engine)
    assert (await server.status()).state == "initialized"

    cli = Project.open(root, engine=engine)  # another process: a fresh object on the same files
    await cli.setup()
    assert (await server.status()).state == "running"
    assert (await server.logs("api")).container

    await Project.open(root, engine=engine).clean()
    assert (await server.status()).state != "running"
    with pytest.raises(PreflightError) as caught:
        await server.logs("api")
    assert caught.value.code == "CONTAINER_NOT_FOUND"


async def test_an_edited_e2e_yaml_is_used_by_the_next_operation_without_init(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    project = Project.open(root, engine=engine)
    assert [s.name for s in (await project.init()).services] == ["api"]
    (root / "e2e.yaml").write_text(CONFIG.replace("  api:", "  web:"))
    status = await project.status()
    assert [s.name for s in status.services] == ["web"]
