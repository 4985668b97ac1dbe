"""A run's duration is the run's: bringing the environment up to date counts, not only the suites."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.fake_engine import Behaviour, FakeEngine
from support.stub import write_project

from preflight_sdk import Project

pytestmark = pytest.mark.anyio


async def test_the_duration_of_a_run_counts_its_environment_set_up(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "slow-start",
        {
            "project": {"name": "slowstart"},
            "services": {"api": {"build": {"image": "busybox:test"}}},
            "tests": {"suites": [{"id": "s", "runner": "shell", "command": ["true"]}]},
        },
    )
    async with FakeEngine(images=["busybox:test"]) as engine:
        engine.behave("api", Behaviour(start_delay=1.0))
        project = Project.open(root, engine=engine)
        try:
            result = await project.run()
        finally:
            await project.clean()

    assert result.status == "passed", result.summary
    suites = sum(s.duration for s in result.suites)
    assert suites < 500
    assert result.duration >= 1000  # the service took a second to start, inside the run
