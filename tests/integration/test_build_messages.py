"""What a failed pull or build says, on the real Docker daemon of this machine.

A pull from a registry whose name does not resolve quotes the resolver's error (not the CLI's
`Using default tag: latest`), and its progress says "pulling".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.progress import ProgressEvent

pytestmark = pytest.mark.anyio

UNRESOLVABLE = """
project: {name: pulls}
services:
  db:
    build: {image: "registry.nowhere.invalid/team/postgres"}
    container:
      ports: ["0:5432"]
"""


async def test_a_failed_pull_quotes_the_name_resolution_error_and_its_progress_says_pulling(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir(config=UNRESOLVABLE)
    events: list[ProgressEvent] = []
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).build(pull=True, progress=events.append)
    error = caught.value
    assert error.code == "NOT_BUILT"
    assert "Using default tag" not in error.message, error.message
    assert "registry.nowhere.invalid" in error.message and "no such host" in error.message, error.message
    assert "does not resolve" in error.message, error.message
    started = [e.message for e in events if e.kind == "step" and e.status == "started" and e.scope == "db"]
    assert started == ["pulling db (registry.nowhere.invalid/team/postgres)"], started
    assert not any(e.message.startswith("building ") for e in events)
