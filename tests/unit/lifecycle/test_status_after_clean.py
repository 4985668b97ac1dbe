"""After `clean`, `status` says the services are not started: the normal state, not an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.fake_engine import FakeEngine
from support.stub import write_project

from preflight_sdk import Project
from preflight_sdk.faces.notebook.static import render_text

pytestmark = pytest.mark.anyio


async def test_status_after_clean_reads_not_started_not_missing(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "cleaned",
        {"project": {"name": "cleaned"}, "services": {"api": {"build": {"image": "busybox:test"}}}},
    )
    async with FakeEngine(images=["busybox:test"]) as engine:
        project = Project.open(root, engine=engine)
        await project.setup()
        up = render_text(await project.status())
        await project.clean()
        after = await project.status()

    assert [s.status for s in after.services] == ["missing"]  # the data keeps its stable value
    text = render_text(after)
    assert "missing" not in text
    assert "not started" in text and "nothing is running" in text
    assert "running" in up and "not started" not in up
