"""A swarm service read as a container, and written from a container spec, without a swarm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from preflight_sdk.config import load_config
from preflight_sdk.config.engine_target import EngineTarget
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.engine.lane import ServiceObject, TaskObject
from preflight_sdk.engine.swarm import SwarmEngine
from preflight_sdk.engine.swarm_text import latest_tasks, mount_arg, publish_arg, service_info
from preflight_sdk.lifecycle.environment import Environment

SERVICE: dict[str, Any] = {
    "ID": "2tx0ynowvs45k282wyjxwzf8t",
    "Spec": {
        "Name": "pf-shop-ab12cd-web",
        "Labels": {"preflight.service": "web"},
        "TaskTemplate": {
            "ContainerSpec": {
                "Image": "127.0.0.1:5000/shop/web:latest@sha256:5289",
                "Healthcheck": {"Test": ["CMD-SHELL", "test -f /ready"]},
            }
        },
    },
    "Endpoint": {"Ports": [{"Protocol": "tcp", "TargetPort": 8080, "PublishMode": "host"}]},
}


_SERVICE = msgspec.convert(SERVICE, ServiceObject)


def _task(state: str, *, created: str = "2026-11-25T00:42:24Z", **status: Any) -> TaskObject:
    return msgspec.convert(
        {
            "ServiceID": SERVICE["ID"],
            "CreatedAt": created,
            "Status": {"Timestamp": "2026-11-25T00:42:25.5Z", "State": state, **status},
            "NetworksAttachments": [
                {"Network": {"Spec": {"Name": "pf-shop-ab12cd"}}, "Addresses": ["10.0.1.2/24"]}
            ],
        },
        TaskObject,
    )


def test_a_running_task_is_a_running_healthy_container_with_its_host_ports() -> None:
    ports = [{"Protocol": "tcp", "TargetPort": 8080, "PublishedPort": 32768, "PublishMode": "host"}] * 2
    info = service_info(
        _SERVICE,
        _task("running", ContainerStatus={"ContainerID": "dff1", "ExitCode": 0}, PortStatus={"Ports": ports}),
    )
    assert (info.id, info.name, info.image) == (
        SERVICE["ID"],
        "pf-shop-ab12cd-web",
        "127.0.0.1:5000/shop/web:latest",
    )
    assert (info.status, info.running, info.health, info.exit_code) == ("running", True, "healthy", None)
    assert [(p.host, p.container) for p in info.ports] == [(32768, 8080)]  # one per address family, once
    assert info.labels == {"preflight.service": "web"}
    # Overlay addresses are reachable only inside the swarm: the probes use the published ports.
    assert info.networks == {"pf-shop-ab12cd": ""}
    assert info.started_at is not None and info.finished_at is None


@pytest.mark.parametrize(
    ("state", "status", "expected"),
    [
        ("complete", {"ContainerStatus": {"ContainerID": "c", "ExitCode": 0}}, ("exited", 0, None)),
        (
            "failed",
            {"ContainerStatus": {"ContainerID": "c", "ExitCode": 3}, "Err": "task: non-zero exit (3)"},
            ("exited", 3, "task: non-zero exit (3)"),
        ),
        (
            "rejected",
            {"Err": "No such image: shop/web:latest"},
            ("dead", None, "No such image: shop/web:latest"),
        ),
        ("starting", {"ContainerStatus": {"ContainerID": "c"}}, ("created", None, None)),
        ("pending", {}, ("created", None, None)),
    ],
)
def test_each_task_state_is_the_container_status_it_amounts_to(
    state: str, status: dict[str, Any], expected: tuple[str, int | None, str | None]
) -> None:
    info = service_info(_SERVICE, _task(state, **status))
    assert (info.status, info.exit_code, info.error) == expected
    assert info.running is False


def test_a_health_check_is_starting_until_the_task_runs_and_a_service_without_a_task_is_pending() -> None:
    assert service_info(_SERVICE, _task("starting")).health == "starting"
    assert service_info(_SERVICE, _task("failed")).health == "unhealthy"
    pending = service_info(_SERVICE, None)
    assert (pending.status, pending.health, pending.ports, pending.networks) == (
        "created",
        "starting",
        [],
        {},
    )


def test_the_newest_task_of_each_service_stands_for_it() -> None:
    old, new = (
        _task("failed", created="2026-11-25T00:40:00Z"),
        _task("running", created="2026-11-25T00:41:00Z"),
    )
    assert latest_tasks([new, old]) == {SERVICE["ID"]: new}


@pytest.mark.parametrize(
    ("volume", "mount"),
    [
        ("/srv/data:/data", "type=bind,source=/srv/data,target=/data"),
        ("/srv/data:/data:ro", "type=bind,source=/srv/data,target=/data,readonly"),
        ("cache:/cache", "type=volume,source=cache,target=/cache"),
        ("/scratch", "type=volume,target=/scratch"),
    ],
)
def test_volumes_are_written_as_mounts(volume: str, mount: str) -> None:
    assert mount_arg(volume) == mount


def test_ports_are_published_on_the_node_that_runs_the_task() -> None:
    assert publish_arg(8080, 0) == "mode=host,target=8080"
    assert publish_arg(8080, 9000) == "mode=host,target=8080,published=9000"


def _context(tmp_path: Path, text: str, target: EngineTarget | None = None) -> Environment:
    (tmp_path / "e2e.yaml").write_text(f"project: {{name: t}}\n{text}\n")
    ctx = Environment(tmp_path, None, None, target)
    ctx._loaded = load_config(tmp_path / "e2e.yaml")  # as its first load would
    return ctx


def test_a_swarm_needs_a_registry(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _context(tmp_path, "engine: {swarm: true}").engine_target()
    assert caught.value.code == "CONFIG_INVALID"
    assert caught.value.hint is not None and "registry:" in caught.value.hint


def test_a_swarm_with_a_registry_is_a_swarm_engine(tmp_path: Path) -> None:
    ctx = _context(tmp_path, "engine: {swarm: true, host: 'tcp://10.0.0.5:2375'}\nregistry: 10.0.0.5:5000")
    assert ctx.engine_target().name == "swarm:tcp://10.0.0.5:2375"
    assert isinstance(ctx.engine, SwarmEngine)


def test_a_host_from_the_caller_names_the_manager_of_the_swarm_e2e_yaml_asks_for(tmp_path: Path) -> None:
    ctx = _context(
        tmp_path, "engine: {swarm: true}\nregistry: r:5000", EngineTarget(host="ssh://ops@manager")
    )
    target = ctx.engine_target()
    assert (target.host, target.swarm, target.registry) == ("ssh://ops@manager", True, "r:5000")
    assert isinstance(ctx.engine, SwarmEngine)
