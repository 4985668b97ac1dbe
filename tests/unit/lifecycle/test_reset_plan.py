"""Reset between runs, planned from what the fake engine holds: which services are reset, how, why.

A kept environment is reset only once a run has used it (`servedBy` in its state file); each
service by its `reset:`; jobs run again after a service they depend on is recreated.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import msgspec
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.config import load_config
from preflight_sdk.config.engine_target import EngineTarget
from preflight_sdk.lifecycle.session.state import read_state, write_state
from preflight_sdk.lifecycle.setup.facts import Given, observe
from preflight_sdk.lifecycle.setup.plan import ServiceStep, plan_builds, plan_setup

pytestmark = pytest.mark.anyio

SHOP = """
project: {name: shop}
services:
  db:
    build: {image: "busybox:test"}
    container: {volumes: ["dbdata:/var/lib/db"]}
    reset: %(db)s
  migrate:
    kind: job
    dependsOn: [db]
    build: {image: "busybox:test"}
  seed:
    kind: job
    dependsOn: [migrate]
    build: {image: "busybox:test"}
  api:
    dependsOn: [seed]
    build: {image: "busybox:test"}
    reset: %(api)s
  cache:
    build: {image: "busybox:test"}
    reset: %(cache)s
tests:
  suites:
    - {id: up, name: Up, runner: shell, command: "true", expect: {exitCode: 0}}
"""


def _shop(db: str = "auto", api: str = "auto", cache: str = "auto") -> str:
    return SHOP % {"db": db, "api": api, "cache": cache}


@pytest.fixture
def started(make_project: Callable[..., Path], engine: FakeEngine) -> Callable[..., object]:
    """Set the shop up on the fake engine (its jobs exit 0 at once); return its root."""

    async def start(config: str) -> Path:
        for job in ("migrate", "seed", "db:volumes"):
            engine.behave(job, Behaviour(exit_after=0.0, exit_code=0))
        root = make_project(config)
        await Project.open(root, engine=engine).setup()
        return root

    return start


def _serve(root: Path, run_id: str = "r-1") -> None:
    """Record that run `run_id` used the environment, as a run does before its suites."""
    session = read_state(root)
    assert session is not None
    write_state(root, msgspec.structs.replace(session, served_by=run_id, runs_served=1))


async def _steps(root: Path, engine: FakeEngine, *, reset: bool = True) -> dict[str, ServiceStep]:
    loaded = load_config(root)
    session = read_state(root)
    assert session is not None
    given = Given(
        loaded=loaded,
        session=session,
        engine=engine,
        target=EngineTarget(),
        mocks=None,
        stale=False,
        engine_fields={},
    )
    observed = await observe(given)
    plan = plan_setup(observed, plan_builds(observed, build=True, fresh=False), reset=reset)
    return {step.name: step for step in plan.services}


def _summary(steps: dict[str, ServiceStep]) -> dict[str, tuple[str, str | None]]:
    return {name: (step.action, step.reset) for name, step in steps.items()}


async def test_an_environment_no_run_used_is_not_reset(
    started: Callable[..., object], engine: FakeEngine
) -> None:
    root = await started(_shop())  # type: ignore[misc]
    steps = await _steps(root, engine)
    assert {step.action for step in steps.values()} == {"reuse"}


async def test_after_a_served_run_the_default_resets_every_service_and_runs_its_jobs_again(
    started: Callable[..., object], engine: FakeEngine
) -> None:
    root = await started(_shop())  # type: ignore[misc]
    _serve(root, "r-7")
    steps = await _steps(root, engine)
    # db has a named volume: put back from its snapshot; the others are recreated; the jobs that
    # depend on db (directly or through a job) run again.
    assert _summary(steps) == {
        "db": ("replace", "snapshot"),
        "migrate": ("replace", "jobs"),
        "seed": ("replace", "jobs"),
        "api": ("replace", "recreate"),
        "cache": ("replace", "recreate"),
    }
    assert steps["db"].restore and not steps["db"].overlap, "a named volume is never shared"
    assert steps["db"].reason == "served run r-7 since setup"
    assert steps["seed"].reason == "runs again for db's reset (served run r-7 since setup)"
    assert all(step.reported == "reset" for step in steps.values())
    # Setup alone (no run follows) does not reset.
    assert {step.action for step in (await _steps(root, engine, reset=False)).values()} == {"reuse"}


async def test_each_kind_of_reset(started: Callable[..., object], engine: FakeEngine) -> None:
    root = await started(_shop(db="{jobs: [seed]}", api="none", cache='{exec: "rm -rf /tmp/cache"}'))  # type: ignore[misc]
    _serve(root)
    steps = await _steps(root, engine)
    assert _summary(steps) == {
        "db": ("reset", "jobs"),  # the container stays: only its seed runs again
        "migrate": ("reuse", None),
        "seed": ("replace", "jobs"),
        "api": ("reuse", None),  # `none`: what earlier runs left stays
        "cache": ("reset", "exec"),
    }
    assert steps["seed"].reported == "reset" and steps["db"].reported == "reset"


async def test_recreate_runs_the_dependent_jobs_again_in_order_and_none_opts_out(
    started: Callable[..., object], engine: FakeEngine
) -> None:
    root = await started(_shop(db="recreate", api="none", cache="none"))  # type: ignore[misc]
    _serve(root)
    steps = await _steps(root, engine)
    assert _summary(steps) == {
        "db": ("replace", "recreate"),
        "migrate": ("replace", "jobs"),
        "seed": ("replace", "jobs"),
        "api": ("reuse", None),
        "cache": ("reuse", None),
    }
    assert not steps["db"].restore


async def test_a_run_on_a_served_environment_resets_in_dependency_order_and_independent_resets_at_once(
    started: Callable[..., object], engine: FakeEngine
) -> None:
    root = await started(_shop(db="recreate", api="recreate", cache="recreate"))  # type: ignore[misc]
    project = Project.open(root, engine=engine)
    first = await project.run()
    assert first.status == "passed" and first.setup is not None and first.setup.environment is not None
    assert first.setup.environment.reset is None, "the environment set up beforehand was not used yet"
    # Each new container takes 0.3 s to start: db and cache at the same time, then the jobs, then api.
    for name in ("db", "cache", "api"):
        engine.behave(name, Behaviour(start_delay=0.3))
    engine.calls.clear()
    begun = anyio.current_time()
    second = await project.run()
    assert second.status == "passed" and second.setup is not None
    # Container names end with their service's name.
    at = {name.rsplit("-", 1)[1]: t - begun for t, call, name in engine.calls if call == "run-start"}
    assert set(at) == {"db", "migrate", "seed", "api", "cache"}, at
    assert abs(at["db"] - at["cache"]) < 0.2, f"independent resets start together: {at}"
    assert at["db"] + 0.3 <= at["migrate"] <= at["seed"] <= at["api"], f"jobs after db, api after them: {at}"
    use = second.setup.environment
    assert use is not None and use.set_up_by is None and use.runs_served == 1
    assert use.reset == f"served run {first.run_id} since setup"
    assert {s.name: (s.action, s.reset) for s in second.setup.services} == {
        "db": ("reset", "recreate"),
        "migrate": ("reset", "jobs"),
        "seed": ("reset", "jobs"),
        "api": ("reset", "recreate"),
        "cache": ("reset", "recreate"),
    }
    third = await project.run()
    assert third.setup is not None and third.setup.environment is not None
    assert third.setup.environment.runs_served == 2
    assert third.setup.environment.reset == f"served run {second.run_id} since its last reset"


async def test_a_failing_exec_reset_is_a_clear_error(
    started: Callable[..., object], engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from preflight_sdk.engine.base import ExecResult

    root = await started(_shop(db="none", api="none", cache='{exec: "rm -rf /tmp/cache"}'))  # type: ignore[misc]
    _serve(root)

    async def failing(ref: str, command: list[str], *, timeout: float) -> ExecResult:
        return ExecResult(exit_code=3, stdout="", stderr="rm: permission denied\n", duration=0.01)

    monkeypatch.setattr(engine, "exec", failing)
    with pytest.raises(PreflightError) as caught:
        await Project.open(root, engine=engine).run()
    assert caught.value.code == "RESET_FAILED"
    assert "cache" in str(caught.value) and "exited 3: rm: permission denied" in str(caught.value)
    assert "reset.exec" in (caught.value.hint or "")


async def test_an_exec_reset_runs_while_an_edited_service_is_built(
    make_project: Callable[..., Path], engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from preflight_sdk.engine.base import ExecResult

    config = """
    project: {name: shop}
    services:
      db:
        build: {image: "busybox:test"}
        reset: {exec: "psql -c 'TRUNCATE orders'"}
      api:
        build: {image: "shop-api:e2e", dockerfile: Dockerfile}
        dependsOn: [db]
        reset: none
    tests:
      suites:
        - {id: up, name: Up, runner: shell, command: "true", expect: {exitCode: 0}}
    """
    root = make_project(config, {"Dockerfile": "FROM busybox\nCOPY app.py /\n", "app.py": "print(1)\n"})
    project = Project.open(root, engine=engine)
    await project.run()
    (root / "app.py").write_text("print(2)\n")
    engine.build_delay = 0.3
    engine.calls.clear()
    second = await project.run()
    assert second.status == "passed" and second.setup is not None
    calls = {(call, subject): at for at, call, subject in engine.calls}
    execs = [at for (call, _), at in calls.items() if call == "exec"]
    assert len(execs) == 1, "the reset ran once, beside the build, not again after it"
    # The build takes 0.3 s: the command ran before it ended, not after it.
    assert execs[0] < calls[("build-end", "shop-api:e2e")] - 0.2
    assert {s.name: (s.action, s.reset) for s in second.setup.services} == {
        "db": ("reset", "exec"),
        "api": ("rebuilt", None),
    }

    # A command that fails beside the build is the run's error as it is, not a group of errors.
    async def failing(ref: str, command: list[str], *, timeout: float) -> ExecResult:
        return ExecResult(exit_code=1, stdout="", stderr="no such table\n", duration=0.01)

    monkeypatch.setattr(engine, "exec", failing)
    (root / "app.py").write_text("print(3)\n")
    with pytest.raises(PreflightError) as caught:
        await project.run()
    assert caught.value.code == "RESET_FAILED" and "no such table" in str(caught.value)


async def test_an_image_that_cannot_copy_its_volume_sets_up_and_its_reset_says_why(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    from preflight_sdk.core.errors import EnvironmentError_

    root = make_project(_shop(api="none", cache="none"))
    no_shell = EnvironmentError_('exec: "sh": executable file not found in $PATH', code="DOCKER_ERROR")
    for job in ("migrate", "seed"):
        engine.behave(job, Behaviour(exit_after=0.0, exit_code=0))
    engine.behave("db:volumes", Behaviour(run_error=no_shell))
    project = Project.open(root, engine=engine)
    first = await project.run()
    assert first.status == "passed", "a snapshot that cannot be taken does not stop setup"
    with pytest.raises(PreflightError) as caught:
        await project.run()
    assert caught.value.code == "RESET_FAILED" and "could not be copied" in caught.value.message
    assert "recreate" in (caught.value.hint or "")


async def test_an_exec_reset_is_bounded_by_its_timeout_then_killed_and_its_service_recreated_next(
    started: Callable[..., object], engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from preflight_sdk.engine.base import ExecResult

    root = await started(_shop(db="none", api="none", cache='{exec: "sleep 600", timeout: 1500}'))  # type: ignore[misc]
    _serve(root)
    seen: list[tuple[list[str], float]] = []

    async def hanging(ref: str, command: list[str], *, timeout: float) -> ExecResult:
        seen.append((list(command), timeout))
        if command[:2] == ["sh", "-c"] and "kill -KILL" in command[2]:
            return ExecResult(exit_code=0, stdout="", stderr="", duration=0.01)
        # The wrapper said its pid, then the command ran past the timeout.
        late = f"timed out after {timeout:.1f}s"
        return ExecResult(exit_code=-1, stdout="", stderr=f"preflight-reset-pid=41\n{late}", duration=timeout,
                          timed_out=True)  # fmt: skip

    monkeypatch.setattr(engine, "exec", hanging)
    with pytest.raises(PreflightError) as caught:
        await Project.open(root, engine=engine).run()
    error = caught.value
    assert error.code == "RESET_FAILED" and "within 1.5s and was killed" in error.message, error
    assert error.details is not None and error.details["timedOut"] and error.details["killed"]
    assert "preflight-reset-pid" not in str(error.details["output"])
    (command, timeout), (kill, _) = seen
    assert command[-3:] == ["sh", "-c", "sleep 600"] and timeout == 1.5
    assert kill == ["sh", "-c", "kill -KILL -- -41 2>/dev/null || kill -KILL 41"]
    state = read_state(root)
    assert state is not None and state.recreate == ["cache"]
    steps = await _steps(root, engine)
    assert (steps["cache"].action, steps["cache"].reason) == ("replace", "its last reset did not finish")


async def test_an_exec_reset_without_timeout_gets_the_default_and_runs_unwrapped_where_there_is_no_sh(
    started: Callable[..., object], engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from preflight_sdk.engine.base import ExecResult
    from preflight_sdk.lifecycle.setup.reset_exec import RESET_TIMEOUT

    root = await started(_shop(db="none", api="none", cache="{exec: [/reset, --all]}"))  # type: ignore[misc]
    _serve(root)
    seen: list[tuple[list[str], float]] = []

    async def shell_less(ref: str, command: list[str], *, timeout: float) -> ExecResult:
        seen.append((list(command), timeout))
        if command[0] == "sh":
            return ExecResult(exit_code=127, stdout="", stderr='exec: "sh": not found', duration=0.01)
        return ExecResult(exit_code=0, stdout="", stderr="", duration=0.01)

    monkeypatch.setattr(engine, "exec", shell_less)
    run = await Project.open(root, engine=engine).run()
    assert run.status == "passed"
    assert [command[0] for command, _ in seen] == ["sh", "/reset"] and seen[1][0] == ["/reset", "--all"]
    assert {timeout for _, timeout in seen} == {RESET_TIMEOUT} == {60.0}


def test_a_reset_timeout_goes_with_exec_only(make_project: Callable[..., Path]) -> None:
    from preflight_sdk.core.errors import ConfigError

    root = make_project(_shop(db="{jobs: [seed], timeout: 5s}"))
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    [problem] = caught.value.problems
    assert problem.path == "$.services.db.reset.timeout" and "limits `exec`" in problem.message


async def test_the_up_to_date_line_counts_resets_apart_from_changes(
    started: Callable[..., object], engine: FakeEngine
) -> None:
    from preflight_sdk.core.progress import ProgressEvent

    root = await started(_shop(cache="none"))  # type: ignore[misc]
    _serve(root)
    events: list[ProgressEvent] = []
    result = await Project.open(root, engine=engine).run(progress=events.append)
    assert result.status == "passed", result.summary
    done = [e.message for e in events if "environment up to date" in e.message]
    assert len(done) == 1 and done[0].endswith("(4 of 5 service(s) reset)"), done
