"""build() on the fake engine: parallelism, errors before docker, state transitions, progress."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_engine import FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.progress import ProgressEvent

pytestmark = pytest.mark.anyio

TWO_BUILT = """
project: {name: shop}
services:
  api:
    build: {image: "api:test", dockerfile: api/Dockerfile, context: api}
  web:
    build: {image: "web:test", dockerfile: web.Dockerfile}
  cache:
    build: {image: "busybox:test"}
"""
FILES = {"api/Dockerfile": "FROM scratch\n", "web.Dockerfile": "FROM scratch\n"}


async def test_build_builds_every_dockerfile_in_parallel_and_moves_to_built(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.build_delay = 0.05
    project = Project.open(make_project(TWO_BUILT, FILES), engine=engine)
    result = await project.build()
    assert [(s.name, s.status, s.source) for s in result.services] == [
        ("api", "success", "built"),
        ("web", "success", "built"),
        ("cache", "success", "local"),
    ]
    starts = [t for t, call, _ in engine.calls if call == "build-start"]
    ends = [t for t, call, _ in engine.calls if call == "build-end"]
    assert max(starts) < min(ends), "the two builds should overlap"
    assert (await project.status()).state == "built"


async def test_every_build_line_reaches_the_progress_sink_whole(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.build_lines = ["Step 1/3 : FROM scratch", "Step 2/3 : COPY . /app", "Successfully built abc"]
    events: list[ProgressEvent] = []
    project = Project.open(make_project(TWO_BUILT, FILES), engine=engine)
    await project.build(service="api", progress=events.append)
    logs = [e.message for e in events if e.kind == "log"]
    assert logs == engine.build_lines
    assert all(e.scope == "api" for e in events if e.kind == "log")
    assert all(e.operation == "build" for e in events)


async def test_missing_dockerfile_is_reported_before_docker_is_called(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(
        make_project(TWO_BUILT, {"web.Dockerfile": "FROM scratch\n", "api/app.py": "x"}), engine=engine
    )
    with pytest.raises(PreflightError) as caught:
        await project.build()
    assert caught.value.code == "DOCKERFILE_NOT_FOUND"
    assert caught.value.details is not None and caught.value.details["service"] == "api"
    assert any(path.endswith("api/Dockerfile") for path in caught.value.details["tried"])
    assert not [c for c in engine.calls if c[1].startswith("build")]


async def test_a_failed_build_reports_its_last_lines_and_keeps_the_state(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.build_failures["web:test"] = [f"line {i}" for i in range(40)] + ["ERROR: COPY failed"]
    project = Project.open(make_project(TWO_BUILT, FILES), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.build()
    error = caught.value
    assert error.code == "BUILD_FAILED"
    assert error.details is not None
    failed = [s for s in error.details["services"] if s["status"] == "failed"]
    assert [s["name"] for s in failed] == ["web"]
    assert failed[0]["logTail"][-1] == "ERROR: COPY failed"
    assert len(failed[0]["logTail"]) == 30
    assert (await project.status()).state == "initialized"


async def test_an_image_only_service_whose_image_is_missing_is_not_built(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.images.clear()
    config = "project: {name: x}\nservices:\n  db:\n    build: {image: 'postgres:16'}\n"
    project = Project.open(make_project(config), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.build()
    assert caught.value.code == "NOT_BUILT"
    assert "pull" in (caught.value.hint or "")
    assert not [c for c in engine.calls if c[1] == "pull"], "pulling happens only when asked"


async def test_an_unreachable_daemon_is_a_docker_error_with_how_to_start_it(
    make_project: Callable[..., Path],
) -> None:
    project = Project.open(make_project(TWO_BUILT, FILES), engine=FakeEngine(daemon_up=False))
    with pytest.raises(PreflightError) as caught:
        await project.build()
    assert caught.value.code == "DOCKER_ERROR"
    assert "ensure-docker" in (caught.value.hint or "")


async def test_an_unknown_service_name_lists_the_valid_ones(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(make_project(TWO_BUILT, FILES), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.build(service="apii")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details == {"service": "apii", "valid": ["api", "web", "cache"]}


async def test_build_output_shows_no_secret_build_argument(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    config = TWO_BUILT.replace(
        'build: {image: "web:test", dockerfile: web.Dockerfile}',
        'build: {image: "web:test", dockerfile: web.Dockerfile, args: {NPM_TOKEN: npm-tok-5XqZ}}',
    )
    engine.build_lines = ["Step 2/3 : RUN npm install", "using npm-tok-5XqZ", "Successfully built abc"]
    engine.build_failures["web:test"] = ["fetching with npm-tok-5XqZ", "ERROR: 401"]
    events: list[ProgressEvent] = []
    project = Project.open(make_project(config, FILES), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.build(progress=events.append)
    shown = repr(caught.value.details) + "".join(e.message for e in events)
    assert "npm-tok-5XqZ" not in shown and "using [redacted]" in shown
    assert "fetching with [redacted]" in shown
