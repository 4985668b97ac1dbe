"""setup/status/logs/clean on the fake engine: ordering, concurrency, failures, states, clean-up."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.engine.base import ImageInfo, NetworkInfo
from preflight_sdk.lifecycle.session.state import read_state

pytestmark = pytest.mark.anyio

THREE = """
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
    container: {ports: ["0:8080"], healthcheck: {path: /health}}
  web:
    build: {image: "busybox:test"}
    container: {ports: ["0:80"]}
"""


def _order(engine: FakeEngine, call: str) -> list[str]:
    return [subject.rsplit("-", 1)[-1] for _, name, subject in engine.calls if name == call]


async def test_services_start_in_dependency_order_and_independent_ones_together(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.behave("db", Behaviour(ready_after=2, start_delay=0.05))
    engine.behave("web", Behaviour(start_delay=0.05))
    engine.behave("migrate", Behaviour(exit_after=0.05, exit_code=0))
    project = Project.open(make_project(THREE), engine=engine)
    result = await project.setup()
    starts = _order(engine, "run-start")
    assert starts.index("db") < starts.index("migrate") < starts.index("api")
    # db and web have no dependencies: both started before either finished starting.
    first_end = min(t for t, call, s in engine.calls if call == "run-end")
    assert {
        s.rsplit("-", 1)[-1] for t, call, s in engine.calls if call == "run-start" and t <= first_end
    } >= {"db", "web"}
    by_name = {s.name: s for s in result.services}
    assert by_name["migrate"].status == "completed"
    assert by_name["db"].readiness.probe == "tcp" and by_name["db"].readiness.attempts == 3
    assert by_name["api"].readiness.probe == "http" and by_name["api"].status == "healthy"
    assert by_name["web"].readiness.probe == "port"
    assert [s.name for s in result.services] == ["db", "migrate", "api", "web"]
    state = read_state(project.path)
    assert state is not None and state.state == "running"
    assert {c.service for c in state.containers} == {"db", "migrate", "api", "web"}


async def test_a_failing_job_stops_setup_and_removes_everything(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.behave(
        "migrate", Behaviour(exit_after=0.01, exit_code=3, logs=["applying 001", "stderr: relation exists"])
    )
    project = Project.open(make_project(THREE), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.setup()
    error = caught.value
    assert error.code == "JOB_FAILED"
    assert error.details is not None and error.details["exitCode"] == 3
    assert error.details["logTail"] == ["applying 001", "stderr: relation exists"]
    assert "api" not in _order(engine, "run-start"), "dependents of a failed job never start"
    assert engine.containers == {} and engine.networks == {}
    assert (await project.status()).state == "initialized", "a failed setup changes no state"


async def test_a_service_that_never_becomes_healthy_times_out_with_its_logs(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    config = (
        "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n"
        "    container: {ports: ['0:80'], healthcheck: {path: /health}}\n"
    )
    engine.behave("api", Behaviour(ready_after=None, logs=["listening on 8081"]))
    project = Project.open(make_project(config), engine=engine)
    begun = anyio.current_time()
    with pytest.raises(PreflightError) as caught:
        await project.setup(timeout="300ms")
    assert 0.25 < anyio.current_time() - begun < 2.0
    error = caught.value
    assert error.code == "HEALTH_CHECK_TIMEOUT"
    assert error.details is not None
    assert error.details["logTail"] == ["listening on 8081"]
    readiness = error.details["readiness"]
    assert readiness["ready"] is False and readiness["attempts"] > 5
    assert readiness["lastOutcomes"][-1]["detail"] == "connection refused"
    assert engine.containers == {} and engine.networks == {}


async def test_exits_are_watched_only_once_a_service_is_not_ready_at_its_first_probe(
    make_project: Callable[..., Path], engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A service ready at once never needs the watch; its request would share the loop with the probes.
    watches: list[datetime | None] = []
    watch_exits = engine.watch_exits

    def counted(labels: Mapping[str, str], *, since: datetime | None = None) -> AsyncGenerator[str, None]:
        watches.append(since)
        return watch_exits(labels, since=since)

    monkeypatch.setattr(engine, "watch_exits", counted)
    config = (
        "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n"
        "    container: {ports: ['0:80'], healthcheck: {path: /h}}\n"
    )
    project = Project.open(make_project(config), engine=engine)
    await project.setup()
    assert watches == []
    await project.clean()
    engine.behave("api", Behaviour(ready_after=3))
    result = await project.setup()
    assert result.services[0].readiness is not None and result.services[0].readiness.attempts == 4
    # One watch, from before the container started: an exit before the watch began is replayed.
    assert len(watches) == 1 and watches[0] is not None


async def test_a_fresh_setup_asks_for_the_network_before_it_inspects_an_image_it_does_not_build(
    make_project: Callable[..., Path], engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The image's id only goes into the container's label: the plan does not wait for it.
    order: list[str] = []
    inspect_image, create_network = engine.inspect_image, engine.create_network

    async def inspecting(ref: str) -> ImageInfo | None:
        order.append(f"inspect {ref}")
        return await inspect_image(ref)

    async def creating(name: str, labels: Mapping[str, str]) -> NetworkInfo:
        order.append("network")
        return await create_network(name, labels)

    monkeypatch.setattr(engine, "inspect_image", inspecting)
    monkeypatch.setattr(engine, "create_network", creating)
    config = "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n"
    project = Project.open(make_project(config), engine=engine)
    await project.setup()
    assert order == ["network", "inspect busybox:test"]
    # On the running environment the plan compares the container with its image: inspected first,
    # and the label written the first time says the same image (the container is reused).
    order.clear()
    again = await project.setup()
    assert order == ["inspect busybox:test"] and again.services[0].action == "reused"


async def test_a_container_that_exits_while_waited_on_fails_at_once(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    config = (
        "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n"
        "    container: {ports: ['0:80'], healthcheck: {path: /h}}\n"
    )
    engine.behave(
        "api",
        Behaviour(ready_after=None, exit_after=0.05, exit_code=1, logs=["stderr: KeyError: 'DATABASE_URL'"]),
    )
    project = Project.open(make_project(config), engine=engine)
    begun = anyio.current_time()
    with pytest.raises(PreflightError) as caught:
        await project.setup(timeout="20s")
    assert anyio.current_time() - begun < 2.0, "an exit must not wait for the health deadline"
    assert caught.value.code == "CONTAINER_EXITED"
    assert "KeyError" in caught.value.message
    assert engine.containers == {}


async def test_setup_before_build_says_not_built(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    config = "project: {name: x}\nservices:\n  api:\n    build: {image: 'api:new', dockerfile: Dockerfile}\n"
    project = Project.open(make_project(config, {"Dockerfile": "FROM scratch"}), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.setup()
    assert caught.value.code == "NOT_BUILT"
    assert "build" in (caught.value.hint or "")
    await project.build()
    assert (await project.setup()).services[0].status == "running"


async def test_a_port_conflict_from_docker_cleans_up_and_names_the_port(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    from preflight_sdk.core.errors import EnvironmentError_

    engine.behave(
        "web",
        Behaviour(run_error=EnvironmentError_("port 80 taken", code="PORT_CONFLICT", details={"port": 80})),
    )
    project = Project.open(make_project(THREE), engine=engine)
    with pytest.raises(PreflightError) as caught:
        await project.setup()
    assert caught.value.code == "PORT_CONFLICT"
    assert engine.containers == {} and engine.networks == {}


async def test_state_machine_and_idempotent_setup(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    config = "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n    container: {ports: ['0:80']}\n"
    project = Project.open(make_project(config), engine=engine)
    assert (await project.init()).state == "initialized"
    await project.build()
    assert (await project.status()).state == "built"
    first = await project.setup()
    runs = len(_order(engine, "run-start"))
    again = await project.setup()
    assert len(_order(engine, "run-start")) == runs, "a second setup reuses the running environment"
    assert again.services[0].container_id == first.services[0].container_id
    cleaned = await project.clean()
    assert [c.action for c in cleaned.containers] == ["force_removed"]
    assert cleaned.session_removed is True
    assert read_state(project.path) is None
    assert engine.containers == {} and engine.networks == {}


async def test_concurrent_setups_are_serialised(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    config = "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n"
    engine.behave("api", Behaviour(start_delay=0.05))
    project = Project.open(make_project(config), engine=engine)
    results = []
    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(lambda: _append(results, project.setup()))
    assert len(_order(engine, "run-start")) == 1
    assert len({r.services[0].container_id for r in results}) == 1


async def _append(results: list[object], awaitable: object) -> None:
    results.append(await awaitable)  # type: ignore[misc]


async def test_cancelling_setup_leaves_nothing_behind(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.behave("db", Behaviour(ready_after=None))
    project = Project.open(make_project(THREE), engine=engine)
    with anyio.move_on_after(0.2):
        await project.setup(timeout="30s")
    assert engine.containers == {} and engine.networks == {}
    assert (await project.status()).state == "initialized"


async def test_clean_from_a_new_object_finds_everything_by_label(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project("project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n")
    await Project.open(root, engine=engine).setup()
    other = Project.open(root, engine=engine)
    cleaned = await other.clean()
    assert [c.action for c in cleaned.containers] == ["force_removed"]
    assert engine.containers == {}


async def test_logs_name_the_valid_containers_and_keep_lines_of_a_stopped_one(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project("project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n")
    engine.behave("api", Behaviour(logs=["ready", "stderr: warn"]))
    project = Project.open(root, engine=engine)
    await project.setup()
    result = await project.logs("api")
    assert [(e.text, e.stream) for e in result.lines] == [("ready", "stdout"), ("warn", "stderr")]
    with pytest.raises(PreflightError) as caught:
        await project.logs("nope")
    assert caught.value.code == "CONTAINER_NOT_FOUND"
    assert caught.value.details is not None and caught.value.details["valid"] == ["api"]
    await engine.stop_containers([c.id for c in engine.containers.values()])
    with pytest.raises(PreflightError) as stopped:
        await project.logs("api")
    assert stopped.value.code == "CONTAINER_NOT_RUNNING"
    assert stopped.value.details is not None and stopped.value.details["lines"] == ["ready", "warn"]
    status = await project.status()
    assert status.services[0].status == "exited"


async def test_a_second_process_changing_the_same_checkout_waits_then_gives_up(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    import subprocess
    import sys

    root = make_project("project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n")
    (root / ".preflight").mkdir(exist_ok=True)
    script = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'pid 4242, setup'); print('held', flush=True); time.sleep(30)"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, str(root / ".preflight" / "lock")], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            project = Project.open(root, engine=engine)
            project._ctx.lock_wait = 0.3
            events: list[str] = []
            with pytest.raises(PreflightError) as caught:
                await project.setup(progress=lambda e: events.append(e.message))
            assert caught.value.code == "INVALID_STATE" and caught.value.retryable
            assert caught.value.details is not None and caught.value.details["holder"] == "pid 4242, setup"
            assert any("waiting for another preflight process (pid 4242, setup)" in m for m in events)
            assert engine.containers == {}
        finally:
            holder.kill()
    # Once the holder is gone (killed: the lock dies with it), the operation goes through.
    assert (await Project.open(root, engine=engine).setup()).services[0].status == "running"
