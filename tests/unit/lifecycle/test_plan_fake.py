"""The setup plan, computed from what the fake engine holds: what to build, create, replace, reuse, and why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.config import load_config
from preflight_sdk.config.engine_target import EngineTarget
from preflight_sdk.engine.base import ImageInfo
from preflight_sdk.lifecycle.session.state import SessionState, read_state
from preflight_sdk.lifecycle.setup.facts import Given, Observed, observe
from preflight_sdk.lifecycle.setup.plan import ServiceStep, SetupPlan, plan_builds, plan_setup

pytestmark = pytest.mark.anyio

SHOP = """
project: {name: shop}
services:
  db:
    build: {image: "busybox:test"}
    container: {ports: ["0:5432"], volumes: ["dbdata:/var/lib/db"]}
  seed:
    build: {image: "busybox:test"}
    kind: job
    dependsOn: [db]
  api:
    build: {image: "shop-api:e2e", dockerfile: Dockerfile}
    dependsOn: [seed]
    container: {ports: ["0:8080"], environment: {MODE: "%s"}}
  web:
    build: {image: "busybox:test"}
    dependsOn: [api]
  side:
    build: {image: "busybox:test"}
"""
# e2e.yaml is no build input of the api's image: editing it changes containers only.
FILES = {
    "Dockerfile": "FROM busybox\nCOPY app.py /\n",
    "app.py": "print(1)\n",
    "README.md": "shop\n",
    ".dockerignore": "e2e.yaml\n",
}


async def _observe(root: Path, engine: FakeEngine) -> Observed:
    """What setup observes for the project at `root`, as a fresh process would see it."""
    loaded = load_config(root)
    session = read_state(loaded.state_root) or SessionState(
        project=loaded.project_name,
        session_id="abc123",
        state="initialized",
        config_path=loaded.path,
        config_digest=loaded.digest,
    )
    given = Given(
        loaded=loaded,
        session=session,
        engine=engine,
        target=EngineTarget(),
        mocks=None,
        stale=False,
        engine_fields={},
    )
    return await observe(given)


async def _plan(root: Path, engine: FakeEngine, *, build: bool = True) -> SetupPlan:
    observed = await _observe(root, engine)
    return plan_setup(observed, plan_builds(observed, build=build, fresh=False))


def _steps(plan: SetupPlan) -> dict[str, ServiceStep]:
    return {step.name: step for step in plan.services}


@pytest.fixture
def up(make_project: Callable[..., Path], engine: FakeEngine) -> Callable[..., object]:
    """Build and start the shop project on the fake engine; return its root."""

    async def start(mode: str = "one") -> Path:
        engine.behave("seed", Behaviour(exit_after=0.01, exit_code=0))
        engine.behave("db:volumes", Behaviour(exit_after=0.0, exit_code=0))  # copies its volume aside
        root = make_project(SHOP % mode, FILES)
        project = Project.open(root, engine=engine)
        await project.build()
        await project.setup()
        return root

    return start


async def test_a_fresh_project_builds_its_images_and_creates_every_container(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(SHOP % "one", FILES)
    plan = await _plan(root, engine)
    assert plan.fresh and plan.clear is None and plan.network.startswith("pf-shop-")
    steps = _steps(plan)
    assert [s.name for s in plan.services] == ["db", "seed", "api", "web", "side"]
    assert {s.action for s in plan.services} == {"create"}
    assert steps["api"].build == "no image yet" and steps["api"].reported == "rebuilt"
    assert (
        steps["db"].build is None
        and steps["db"].reason == "no container yet"
        and steps["db"].reported == "started"
    )
    # Setup alone (no build) leaves a missing image to NOT_BUILT rather than building it.
    assert _steps(await _plan(root, engine, build=False))["api"].build is None


async def test_an_unchanged_environment_is_reused_as_it_is(
    up: Callable[..., object], engine: FakeEngine
) -> None:
    root = await up()  # type: ignore[misc]
    plan = await _plan(root, engine)
    assert not plan.fresh and plan.clear is None and plan.remove == []
    assert [(s.name, s.action, s.reason) for s in plan.services] == [
        (name, "reuse", "unchanged") for name in ["db", "seed", "api", "web", "side"]
    ]
    assert plan.changed() == [] and all(s.build is None and s.replaces is None for s in plan.services)


async def test_an_edited_build_input_builds_the_image_and_replaces_it_and_its_dependants(
    up: Callable[..., object], engine: FakeEngine
) -> None:
    root = await up()  # type: ignore[misc]
    (root / "app.py").write_text("print(2)\n")
    observed = await _observe(root, engine)
    builds = plan_builds(observed, build=True, fresh=False)
    assert builds == {"api": "app.py changed"}
    running = observed.running or {}
    # The build gives a new image id: the container and what depends on it are replaced.
    new = ImageInfo(id="sha256:" + "f" * 64, tags=["shop-api:e2e"], labels={})
    after = msgspec.structs.replace(observed, images={**observed.images, "shop-api:e2e": new})
    steps = _steps(plan_setup(after, builds))
    assert (steps["api"].action, steps["api"].reason, steps["api"].build) == (
        "replace",
        "app.py changed",
        "app.py changed",
    )
    assert steps["api"].reported == "rebuilt" and steps["api"].replaces == running["api"].id
    assert (steps["web"].action, steps["web"].reason) == ("replace", "depends on api, which was recreated")
    assert steps["web"].replaces == running["web"].id and steps["web"].overlap
    assert [steps[n].action for n in ("db", "seed", "side")] == ["reuse"] * 3
    # A rebuild that gives the very same image (a file the Dockerfile never copies) leaves it running.
    same = _steps(plan_setup(observed, {"api": "README.md changed"}))
    assert (same["api"].action, same["api"].build, same["api"].reported) == (
        "reuse",
        "README.md changed",
        "reused",
    )
    assert same["web"].action == "reuse"


async def test_a_changed_environment_replaces_the_container_without_a_build(
    up: Callable[..., object], make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = await up()  # type: ignore[misc]
    make_project(SHOP % "two", name="proj")  # the same checkout, e2e.yaml edited
    plan = await _plan(root, engine)
    steps = _steps(plan)
    assert (steps["api"].action, steps["api"].reason, steps["api"].build) == (
        "replace",
        "environment changed",
        None,
    )
    assert steps["api"].reported == "recreated"
    assert steps["api"].overlap, (
        "no fixed host port, no named volume: the old one goes while the new one starts"
    )
    assert steps["web"].reason == "depends on api, which was recreated"
    assert [s.name for s in plan.changed()] == ["api", "web"]


async def test_a_job_whose_dependency_changed_runs_again_and_a_database_never_overlaps(
    up: Callable[..., object], make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = await up()  # type: ignore[misc]
    edited = (SHOP % "one").replace(
        'volumes: ["dbdata:/var/lib/db"]', 'volumes: ["dbdata:/var/lib/db"], user: "1000"'
    )
    make_project(edited, name="proj")
    observed = await _observe(root, engine)
    steps = _steps(plan_setup(observed, {}))
    assert (steps["db"].action, steps["db"].reason) == ("replace", "command changed")
    assert not steps["db"].overlap, "a named volume is never shared by two containers"
    assert (steps["seed"].action, steps["seed"].reason) == ("replace", "depends on db, which was recreated")
    assert steps["seed"].replaces == (observed.running or {})["seed"].id
    assert steps["api"].reason == "depends on seed, which re-ran"
    assert steps["web"].reason == "depends on api, which was recreated"
    assert steps["side"].action == "reuse"


async def test_a_stopped_service_and_a_failed_job_are_created_again(
    up: Callable[..., object], engine: FakeEngine
) -> None:
    root = await up()  # type: ignore[misc]
    observed = await _observe(root, engine)
    running = dict(observed.running or {})
    running["side"] = msgspec.structs.replace(running["side"], running=False, status="exited")
    running["seed"] = msgspec.structs.replace(running["seed"], exit_code=3)
    steps = _steps(plan_setup(msgspec.structs.replace(observed, running=running), {}))
    assert (steps["side"].action, steps["side"].reason, steps["side"].reported) == (
        "create",
        "container exited",
        "started",
    )
    assert steps["side"].replaces == running["side"].id
    assert (steps["seed"].action, steps["seed"].reason) == ("create", "its last run failed")
    assert steps["api"].reason == "depends on seed, which re-ran"


async def test_the_setup_result_reports_the_plan(up: Callable[..., object], engine: FakeEngine) -> None:
    root = await up()  # type: ignore[misc]
    (root / "app.py").write_text("print(3)\n")
    result = await Project.open(root, engine=engine).setup()
    acted = {s.name: (s.action, s.reason) for s in result.services}
    assert acted == {
        "db": ("reused", "unchanged"),
        "seed": ("reused", "unchanged"),
        "api": ("rebuilt", "app.py changed"),
        "web": ("recreated", "depends on api, which was recreated"),
        "side": ("reused", "unchanged"),
    }


async def test_a_failed_update_keeps_what_ran_unchanged_and_removes_what_it_replaced(
    up: Callable[..., object], make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = await up()  # type: ignore[misc]
    before = read_state(root)
    assert before is not None
    ids = {c.service: c.id for c in before.containers}
    make_project(SHOP % "two", name="proj")  # api and its dependant web are replaced
    engine.behave("api", Behaviour(ready_after=None, exit_after=0.05, exit_code=1, logs=["stderr: boom"]))
    with pytest.raises(PreflightError) as caught:
        await Project.open(root, engine=engine).setup(timeout="20s")
    assert caught.value.code == "CONTAINER_EXITED"
    left = {c.spec.labels.get("preflight.service"): c.id for c in engine.containers.values()}
    assert left == {name: ids[name] for name in ("db", "seed", "side")}, "old api and web go, the new api too"
    after = read_state(root)
    assert after is not None and [c.service for c in after.containers] == ["db", "seed", "side"]


MOCKED = """
project: {name: pay}
mocks:
  pay:
    port: 0
    routes: [{method: GET, path: /x, response: {status: %d}}]
%s
services:
  api:
    build: {image: "busybox:test"}
    container: {environment: {PAY: "{{mocks.pay.url}}"}}
"""
FRAUD = "  fraud:\n    port: 0\n    routes: [{method: GET, path: /y, response: {status: 200}}]"


async def test_changed_routes_reload_in_place_and_a_new_mock_restarts_them_on_their_ports(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(MOCKED % (200, ""))
    project = Project.open(root, engine=engine)
    try:
        first = await project.setup()
        port = first.mocks[0].port
        assert [(m.name, m.action) for m in first.mocks] == [("pay", "started")]

        make_project(MOCKED % (201, ""), name="proj")
        reloaded = await project.setup()
        assert [(m.name, m.action, m.port) for m in reloaded.mocks] == [("pay", "reloaded", port)]
        assert [(s.name, s.action) for s in reloaded.services] == [("api", "reused")], "same port: same spec"

        make_project(MOCKED % (201, FRAUD), name="proj")
        grown = await project.setup()
        assert {m.name: (m.action, m.port == port) for m in grown.mocks} == {
            "pay": ("started", True),
            "fraud": ("started", False),
        }
        # The container reaches the new mock by name: a host entry more, so it is recreated.
        assert [(s.name, s.action, s.reason) for s in grown.services] == [
            ("api", "recreated", "network changed")
        ]
        # What was stamped on it is what the next plan computes: up to date.
        assert [(s.name, s.action) for s in (await project.setup()).services] == [("api", "reused")]
    finally:
        await project.clean()
