"""The error codes setup gives on the fake engine, each leaving nothing behind."""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.engine.errors import DAEMON_HINT
from preflight_sdk.lifecycle.session.state import read_state
from preflight_sdk.lifecycle.setup import execute as execute_step
from preflight_sdk.lifecycle.setup import port_check as ports_module

pytestmark = pytest.mark.anyio

ONE = "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n    container: {ports: ['0:80']}\n"

WITH_JOB = """
project: {name: shop}
services:
  db:
    build: {image: "busybox:test"}
    container: {ports: ["0:5432"], healthcheck: {tcp: 5432}}
  migrate:
    build: {image: "busybox:test"}
    kind: job
    dependsOn: [db]
  api:
    build: {image: "busybox:test"}
    dependsOn: [migrate]
    container: {ports: ["0:8080"]}
"""


def _started(engine: FakeEngine) -> list[str]:
    return [subject.rsplit("-", 1)[-1] for _, call, subject in engine.calls if call == "run-start"]


async def test_setup_with_the_daemon_down_is_one_docker_error_with_how_to_start_it(
    make_project: Callable[..., Path],
) -> None:
    root = make_project(ONE)
    async with FakeEngine(images=["busybox:test"], daemon_up=False) as engine:
        project = Project.open(root, engine=engine)
        with pytest.raises(PreflightError) as caught:
            await project.setup()
        error = caught.value
        assert error.code == "DOCKER_ERROR"
        assert error.retryable
        assert error.hint == DAEMON_HINT
        assert "Cannot connect to the Docker daemon" in error.message
        # status and clean say the same, rather than failing some other way.
        for operation in (project.status, project.clean, project.build):
            with pytest.raises(PreflightError) as again:
                await operation()
            assert again.value.code == "DOCKER_ERROR", operation
        assert _started(engine) == []
    state = read_state(root)
    assert state is not None and state.state == "initialized"


async def test_a_project_of_mocks_only_needs_no_docker_for_status(make_project: Callable[..., Path]) -> None:
    root = make_project("project: {name: x}\nmocks:\n  payments: {port: 0}\n")
    async with FakeEngine(daemon_up=False) as engine:
        status = await Project.open(root, engine=engine).status()
    assert status.state == "initialized"
    assert status.services == [] and status.network is None
    assert [m.name for m in status.mocks] == ["payments"]


async def test_a_job_that_never_finishes_is_health_check_timeout_and_its_dependents_never_start(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.behave(
        "migrate", Behaviour(exit_after=None, logs=["applying 0001_init", "stderr: waiting for lock"])
    )
    project = Project.open(make_project(WITH_JOB), engine=engine)
    begun = anyio.current_time()
    with pytest.raises(PreflightError) as caught:
        await project.setup(timeout="200ms")
    assert 0.15 < anyio.current_time() - begun < 2.0
    error = caught.value
    assert error.code == "HEALTH_CHECK_TIMEOUT"
    assert "job `migrate` did not finish" in error.message
    assert error.details is not None and error.details["service"] == "migrate"
    assert error.details["logTail"] == ["applying 0001_init", "stderr: waiting for lock"]
    assert _started(engine) == ["db", "migrate"], "api depends on the job: never started"
    assert engine.containers == {} and engine.networks == {}
    assert (await project.status()).state == "initialized"


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port this test process listens on (on loopback only)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


async def test_a_taken_fixed_host_port_is_port_conflict_before_any_container_starts(
    make_project: Callable[..., Path], engine: FakeEngine, held_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check waits a moment for ports Docker releases late; not this long for a live listener.
    monkeypatch.setattr(
        execute_step, "check_host_ports", functools.partial(ports_module.check_host_ports, grace=0.1)
    )
    config = f"""
    project: {{name: x}}
    services:
      db:
        build: {{image: "busybox:test"}}
        container: {{ports: ["0:5432"]}}
      api:
        build: {{image: "busybox:test"}}
        container: {{ports: ["{held_port}:8080"]}}
    """
    project = Project.open(make_project(config), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.setup()
    error = caught.value
    assert error.code == "PORT_CONFLICT"
    assert error.details is not None
    assert error.details["port"] == held_port and error.details["service"] == "api"
    assert error.details["holder"] is not None and error.details["holder"]["pid"] == os.getpid()
    assert f"host port {held_port} of service `api` is already in use by " in error.message
    assert f"(pid {os.getpid()})" in error.message
    assert error.hint is not None and "0:<container port>" in error.hint
    assert _started(engine) == [], "checked before any container starts"
    assert engine.containers == {} and engine.networks == {}, "the network setup created is removed"


async def test_a_free_fixed_host_port_passes_the_check(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = int(probe.getsockname()[1])
    config = ONE.replace("'0:80'", f"'{free}:80'")
    result = await Project.open(make_project(config), engine=engine).setup()
    assert [(p.host, p.container) for p in result.services[0].ports] == [(free, 80)]
