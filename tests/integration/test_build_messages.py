"""What a failed pull or build says, on the real Docker daemon of this machine.

A pull from a registry whose name does not resolve quotes the resolver's error (not the CLI's
`Using default tag: latest`), and its progress says "pulling". A Dockerfile that needs BuildKit,
built by Docker's legacy builder because the client has no buildx (as on this machine), names its
BuildKit-only line, why the legacy builder was used, and what to do (tests/fixtures/buildkit).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.docker import force_clean

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


BUILDKIT = Path(__file__).resolve().parent.parent / "fixtures" / "buildkit"


def _has_buildx() -> bool:
    return subprocess.run(["docker", "buildx", "version"], capture_output=True).returncode == 0


@pytest.mark.parametrize(
    ("sample", "line", "text", "needs"),
    [
        ("flask", 17, "RUN <<EOF", "a heredoc"),
        ("nginx-flask-mysql", 6, "RUN --mount=type=cache,target=/root/.cache/pip", "RUN --mount"),
        ("react-express-mysql", 4, "FROM --platform=$BUILDPLATFORM", "$BUILDPLATFORM"),
    ],
)
async def test_a_buildkit_only_dockerfile_built_without_buildx_names_the_line_and_what_to_do(
    tmp_path: Path, sample: str, line: int, text: str, needs: str
) -> None:
    if _has_buildx():
        pytest.skip("this daemon's client has buildx: the legacy builder is not used")
    root = tmp_path / sample
    shutil.copytree(BUILDKIT / sample, root)
    try:
        with pytest.raises(PreflightError) as caught:
            await Project.open(root).build()
        error = caught.value
        assert error.code == "BUILD_FAILED", error
        message = error.message
        assert f"line {line} of " in message and text in message, message
        assert needs in message, message
        assert "legacy builder" in message and "no buildx" in message, message
        hint = error.hint or ""
        assert "buildx" in hint and f"line {line}" in hint, hint
        (service,) = error.details["services"]
        found = service["buildkitOnly"]
        assert found[0]["line"] == line, found
        if sample == "react-express-mysql":
            assert [f["line"] for f in found] == [4, 1], "the syntax directive is named too"
    finally:
        force_clean(root)
