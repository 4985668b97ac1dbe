"""clean on the fake engine: each action reported as it went, found by label, whatever the e2e.yaml."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.results.lifecycle import CleanAction
from preflight_sdk.engine.base import ContainerInfo
from preflight_sdk.lifecycle.session.state import read_state, state_path

pytestmark = pytest.mark.anyio

TWO = """
project: {name: shop}
services:
  api:
    build: {image: "busybox:test"}
    container: {ports: ["0:8080"]}
  worker:
    build: {image: "busybox:test"}
"""


def _actions(actions: Sequence[CleanAction]) -> dict[str, str]:
    """Each container's action, by service (the last part of its name)."""
    return {action.name.rsplit("-", 1)[-1]: action.action for action in actions}


def _labelled(engine: FakeEngine, root: Path) -> list[str]:
    return [c.spec.name for c in engine.containers.values() if c.spec.labels["preflight.root"] == str(root)]


async def test_force_clean_says_force_removed_for_running_and_removed_for_exited(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(make_project(TWO), engine=engine)
    await project.setup()
    worker = next(c for c in engine.containers.values() if c.spec.name.endswith("-worker"))
    await engine.stop_containers([worker.id])
    engine.calls.clear()
    cleaned = await project.clean()
    assert _actions(cleaned.containers) == {"api": "force_removed", "worker": "removed"}
    assert all(c.error is None for c in cleaned.containers)
    assert [call for _, call, _ in engine.calls if call == "stop"] == [], (
        "force kills, it does not stop first"
    )
    assert cleaned.network is not None and cleaned.network.action == "removed"
    assert cleaned.session_removed is True
    assert engine.containers == {} and engine.networks == {}


async def test_clean_without_force_stops_running_containers_first_then_removes(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(make_project(TWO), engine=engine)
    await project.setup()
    ids = {c.spec.name.rsplit("-", 1)[-1]: c.id for c in engine.containers.values()}
    engine.calls.clear()
    cleaned = await project.clean(force=False)
    calls = [(call, subject) for _, call, subject in engine.calls if call in ("stop", "remove")]
    stops = [i for i, (call, _) in enumerate(calls) if call == "stop"]
    removes = [i for i, (call, _) in enumerate(calls) if call == "remove"]
    assert {subject for call, subject in calls if call == "stop"} == set(ids.values())
    assert stops and removes and max(stops) < min(removes), calls
    # Stopped first, so nothing had to be killed: "removed", not "force_removed".
    assert _actions(cleaned.containers) == {"api": "removed", "worker": "removed"}
    assert engine.containers == {}


async def test_a_removal_that_fails_is_reported_with_its_error_and_the_rest_still_goes(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(TWO)
    project = Project.open(root, engine=engine)
    setup = await project.setup()
    api_name = next(s.container_name for s in setup.services if s.name == "api")
    busy = 'driver "overlay2" failed to remove root filesystem: device or resource busy'
    engine.removal_errors[api_name] = busy
    in_use = f"error while removing network: network {setup.network.name} has active endpoints"
    engine.removal_errors[setup.network.name] = in_use
    cleaned = await project.clean()
    by_service = {c.name.rsplit("-", 1)[-1]: c for c in cleaned.containers}
    assert (by_service["api"].action, by_service["api"].error) == ("failed", busy)
    assert (by_service["worker"].action, by_service["worker"].error) == ("force_removed", None)
    assert cleaned.network is not None
    assert (cleaned.network.action, cleaned.network.error) == ("failed", in_use)
    assert _labelled(engine, root) == [api_name], "only the container that failed is left"
    # What failed is still found by label on the next clean, from any process.
    engine.removal_errors.clear()
    again = await Project.open(root, engine=engine).clean()
    assert [(c.name, c.action) for c in again.containers] == [(api_name, "force_removed")]
    assert [(n.name, n.action) for n in again.networks] == [(setup.network.name, "removed")]
    assert engine.containers == {} and engine.networks == {}


class _RacingEngine(FakeEngine):
    """Another process removes the first container between clean's listing and its removal."""

    async def list_containers(self, labels: Mapping[str, str], *, detail: bool = True) -> list[ContainerInfo]:
        found = await super().list_containers(labels, detail=detail)
        if found:
            del self.containers[found[0].id]
        return found


async def test_a_container_gone_before_its_removal_is_not_found(make_project: Callable[..., Path]) -> None:
    root = make_project(TWO)
    async with _RacingEngine(images=["busybox:test"]) as engine:
        # Setup lists containers only when leftovers exist: none here, so the race is clean's.
        await Project.open(root, engine=engine).setup()
        cleaned = await Project.open(root, engine=engine).clean()
    assert sorted(c.action for c in cleaned.containers) == ["force_removed", "not_found"]
    assert engine.containers == {}


async def test_clean_with_nothing_to_clean_reports_nothing_and_never_fails(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(make_project(TWO), engine=engine)
    first = await project.clean()
    assert list(first.containers) == [] and list(first.networks) == []
    assert first.network is not None and first.network.action == "not_found"
    second = await project.clean()
    assert second.session_removed is False, "the first clean already removed the state file"


@pytest.mark.parametrize("breakage", ["broken", "missing"])
async def test_clean_with_a_broken_or_missing_e2e_yaml_still_cleans_by_label(
    make_project: Callable[..., Path], engine: FakeEngine, breakage: str
) -> None:
    root = make_project(TWO)
    await Project.open(root, engine=engine).setup()
    other = make_project(TWO, name="other")
    await Project.open(other, engine=engine).setup()
    if breakage == "broken":
        (root / "e2e.yaml").write_text("services: [\n  - {build: \n")
        with pytest.raises(PreflightError) as caught:
            await Project.open(root, engine=engine).init()
        assert caught.value.code == "CONFIG_INVALID"
    else:
        (root / "e2e.yaml").unlink()
    cleaned = await Project.open(root, engine=engine).clean()
    assert _actions(cleaned.containers) == {"api": "force_removed", "worker": "force_removed"}
    assert [n.action for n in cleaned.networks] == ["removed"]
    assert cleaned.session_removed is True and not state_path(root).exists()
    assert _labelled(engine, root) == []
    assert len(_labelled(engine, other)) == 2, "another project's containers are not touched"
    assert read_state(other) is not None


async def test_clean_when_the_daemon_is_down_is_docker_error(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(TWO)
    await Project.open(root, engine=engine).setup()
    engine.daemon_up = False
    with pytest.raises(PreflightError) as caught:
        await Project.open(root, engine=engine).clean()
    assert caught.value.code == "DOCKER_ERROR"
    assert read_state(root) is not None, "nothing was removed: the session stays known"


async def test_clean_stops_a_job_container_too(make_project: Callable[..., Path], engine: FakeEngine) -> None:
    config = TWO + '  seed:\n    build: {image: "busybox:test"}\n    kind: job\n'
    engine.behave("seed", Behaviour(exit_after=0.01))
    project = Project.open(make_project(config), engine=engine)
    await project.setup()
    cleaned = await project.clean()
    assert _actions(cleaned.containers) == {
        "api": "force_removed",
        "worker": "force_removed",
        "seed": "removed",
    }


@pytest.mark.parametrize("labels_free", [True, False], ids=["labelled", "legacy-builder"])
async def test_clean_with_images_removes_what_this_checkout_built_and_nothing_else(
    make_project: Callable[..., Path], engine: FakeEngine, labels_free: bool
) -> None:
    engine.labels_free = labels_free
    built = """
    project: {name: shop}
    services:
      api:
        build: {image: "shop-api:e2e", dockerfile: Dockerfile}
    """
    mine = make_project(built, files={"Dockerfile": "FROM busybox\n"}, name="mine")
    other = make_project(
        built.replace("shop-api", "other-api"), files={"Dockerfile": "FROM busybox\n"}, name="o"
    )
    await Project.open(other, engine=engine).build()
    project = Project.open(mine, engine=engine)
    await project.build()
    # Labelled with its checkout where labels are free; else known by the id in the build record.
    assert engine.image_labels["shop-api:e2e"].get("preflight.root") == (str(mine) if labels_free else None)

    kept = await project.clean()
    assert kept.images == [] and "shop-api:e2e" in engine.images, "images stay unless asked for"
    cleaned = await project.clean(images=True)
    assert [(i.name, i.action) for i in cleaned.images] == [("shop-api:e2e", "removed")]
    assert "shop-api:e2e" not in engine.images and "other-api:e2e" in engine.images
    again = await project.clean(images=True)
    assert again.images == []


def _order(engine: FakeEngine) -> list[str]:
    return [call for _, call, _ in engine.calls if call in ("remove", "network-detach", "network-remove")]


async def test_the_network_goes_with_its_containers_when_the_engine_detaches_them(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(make_project(TWO), engine=engine)
    setup = await project.setup()
    engine.calls.clear()
    cleaned = await project.clean()
    assert _order(engine)[0] == "network-detach", (
        "the containers leave the network before anything is removed"
    )
    assert _order(engine).count("network-remove") == 1, "removed once, with its containers, not tried again"
    assert cleaned.network == CleanAction(name=setup.network.name, action="removed")
    assert engine.containers == {} and engine.networks == {}


async def test_an_engine_that_does_not_detach_removes_the_network_after_every_container(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.detaches = False
    project = Project.open(make_project(TWO), engine=engine)
    await project.setup()
    engine.calls.clear()
    cleaned = await project.clean()
    order = _order(engine)
    assert order.count("network-remove") == 1 and order[-1] == "network-remove"
    assert cleaned.network is not None and cleaned.network.action == "removed"
    assert engine.containers == {} and engine.networks == {}


async def test_a_container_this_process_did_not_start_keeps_the_network_until_it_is_removed(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    root = make_project(TWO)
    project = Project.open(root, engine=engine)
    setup = await project.setup()
    # Left on the network by a process that was killed: found by its label, never detached.
    api = next(c for c in engine.containers.values() if c.spec.name.endswith("-api"))
    await engine.run(msgspec.structs.replace(api.spec, name=f"{api.spec.name}-left"))
    engine.calls.clear()
    cleaned = await project.clean()
    order = _order(engine)
    assert order.count("network-remove") == 1 and order[-1] == "network-remove", order
    assert cleaned.network == CleanAction(name=setup.network.name, action="removed")
    assert f"{api.spec.name}-left" in {c.name for c in cleaned.containers}
    assert engine.containers == {} and engine.networks == {}
