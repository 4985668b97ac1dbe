"""The session's state machine on the fake engine, and an e2e.yaml edited while its environment runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.errors import EnvironmentError_
from preflight_sdk.lifecycle.session.state import read_state

pytestmark = pytest.mark.anyio

CONFIG = """
project: {name: x}
services:
  api:
    build: {image: "busybox:test"}
    container: {ports: ["0:8080"]}
"""
EDITED = CONFIG.replace('"0:8080"', '"0:9090"')


async def test_re_init_with_a_changed_file_while_running_is_invalid_state_and_status_and_clean_still_work(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    project = Project.open(root, engine=engine)
    setup = await project.setup()
    session = setup.network.name.rsplit("-", 1)[-1]
    (root / "e2e.yaml").write_text(EDITED)

    for opened in (project, Project.open(root, engine=engine)):  # this object, and a new process's
        with pytest.raises(PreflightError) as caught:
            await opened.init()
        error = caught.value
        assert error.code == "INVALID_STATE"
        assert error.hint is not None and "`project.clean()` first" in error.hint
        assert error.details is not None
        assert error.details["state"] == "running" and error.details["sessionId"] == session
    status = await project.status()
    assert status.state == "running" and status.session_id == session
    assert [(s.name, s.status) for s in status.services] == [("api", "running")]
    assert len(engine.containers) == 1, "nothing was touched by the refused calls"

    # setup (and run) bring the running environment up to date with the edited file instead.
    updated = await project.setup()
    assert [(s.name, s.action, s.reason) for s in updated.services] == [("api", "recreated", "ports changed")]
    assert [p.container for p in updated.services[0].ports] == [9090]
    assert (await project.init()).session_id == session, "the same session, now of the edited file"

    cleaned = await project.clean()
    assert [c.action for c in cleaned.containers] == ["force_removed"]
    assert engine.containers == {} and engine.networks == {}
    fresh = await project.init()
    assert fresh.state == "stopped" and fresh.session_id == session
    assert [list(s.ports) for s in fresh.services] == [["0:9090"]]
    result = await project.setup()
    assert [p.container for p in result.services[0].ports] == [9090]


async def test_re_init_with_an_unchanged_file_while_running_keeps_the_session(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    project = Project.open(root, engine=engine)
    setup = await project.setup()
    (root / "e2e.yaml").write_text(CONFIG)  # rewritten, same content
    again = await Project.open(root, engine=engine).init()
    assert again.state == "running"
    assert again.session_id == setup.network.name.rsplit("-", 1)[-1]
    assert again.reloaded is False


async def test_a_changed_file_before_setup_starts_a_new_initialized_session(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    project = Project.open(root, engine=engine)
    await project.build()
    before = await project.init()
    assert before.state == "built"
    (root / "e2e.yaml").write_text(EDITED)
    after = await project.init()
    assert after.reloaded is True
    assert after.state == "initialized", "the images built for the old file may not fit the new one"
    assert after.session_id != before.session_id


async def test_every_state_and_the_transitions_between_them(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    project = Project.open(root, engine=engine)

    def persisted() -> str | None:
        state = read_state(root)
        return state.state if state else None

    assert (await project.init()).state == "initialized" and persisted() == "initialized"
    await project.build()
    assert (await project.status()).state == "built" and persisted() == "built"
    await project.setup()
    assert (await project.status()).state == "running" and persisted() == "running"
    with pytest.raises(PreflightError) as no_logs_yet:
        await project.logs("nope")
    assert no_logs_yet.value.code == "CONTAINER_NOT_FOUND"

    await project.clean()
    assert (await project.status()).state == "stopped"
    assert persisted() is None, "clean removes the state file"
    with pytest.raises(PreflightError) as gone:
        await project.logs("api")
    assert gone.value.code == "CONTAINER_NOT_FOUND"
    assert gone.value.hint is not None and "setup" in gone.value.hint

    await project.setup()  # from stopped, straight back to running (the image is still there)
    assert (await project.status()).state == "running" and persisted() == "running"


async def test_a_broken_environment_whose_re_setup_fails_is_stopped_for_every_process(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(CONFIG)
    project = Project.open(root, engine=engine)
    await project.setup()
    # The container disappears behind preflight's back (docker rm -f by hand, a daemon restart).
    await engine.remove_containers(list(engine.containers), force=True)
    engine.behave("api", Behaviour(run_error=EnvironmentError_("disk full", code="DOCKER_ERROR")))
    with pytest.raises(PreflightError) as caught:
        await project.setup()
    assert caught.value.code == "DOCKER_ERROR"
    assert engine.containers == {} and engine.networks == {}
    state = read_state(root)
    assert state is not None and state.state == "stopped"
    assert state.containers == [] and state.network is None
    assert (await Project.open(root, engine=engine).status()).state == "stopped"

    engine.behave("api", Behaviour())
    assert (await Project.open(root, engine=engine).setup()).services[0].status == "healthy"
    # The first object picks up what the other one did from the state file when it re-inits.
    assert (await project.init()).state == "running"
