"""What setup starts from: what it is given, and what it observes before planning.

`Given` is handed over by the caller once (the loaded configuration, the session, the engine,
the mocks this process serves); `observe` reads the rest (the build record, the images, the
running containers, the mocks' ports) into `Observed`, the only input of planning (see `plan`).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.engine.base import BuildSpec, ContainerInfo, ContainerSpec, Engine, ImageInfo

from ..images.inputs import BuildInputs, InputsRecord, build_inputs, read_record
from ..mockhost.host import mock_route, mocks_alive
from ..session.state import MockRecord, SessionState
from .specs import build_spec, container_spec, network_name

if TYPE_CHECKING:
    from preflight_sdk.config.engine_target import EngineTarget
    from preflight_sdk.mocks import MockHost

__all__ = ["Given", "Observed", "inspect_images", "observe"]


@dataclass(frozen=True)
class Given:
    """What a setup is given by its caller, read once.

    `mocks`: the mock server this process runs (None when it runs none); `stale`: e2e.yaml changed
    while the environment of its previous version runs; `engine_fields`: the session fields that
    name the engine (`engine_host`, `engine_context`).
    """

    loaded: LoadedConfig
    session: SessionState
    engine: Engine
    target: EngineTarget
    mocks: MockHost | None
    stale: bool
    engine_fields: dict[str, Any]
    detach_mocks: bool = False


class Observed(msgspec.Struct, frozen=True, kw_only=True):
    """The facts a plan is computed from.

    `running`: the running environment's containers by service, None when there is none to keep
    (then everything is created). `specs`: each service's container as it would be made now
    (only with a running environment). `mock_ports`: the port each mock serves on after setup;
    `images`: the images the plan decides on (see `_planned_images`), None for one that is absent;
    `mocks_served_here`: the ports of the mocks this process serves (None: it serves none);
    `mocks_detached`: the process serving them is a detached mock host (it kept them after the
    command that set the environment up exited), which setup may replace.
    """

    loaded: LoadedConfig
    session: SessionState
    record: InputsRecord
    stale: bool = False
    network: str
    build_specs: dict[str, BuildSpec] = msgspec.field(default_factory=dict)
    build_inputs: dict[str, BuildInputs] = msgspec.field(default_factory=dict)
    images: dict[str, ImageInfo | None] = msgspec.field(default_factory=dict)
    running: dict[str, ContainerInfo] | None = None
    specs: dict[str, ContainerSpec] = msgspec.field(default_factory=dict)
    mock_ports: dict[str, int] = msgspec.field(default_factory=dict)
    mock_address: str = "host-gateway"
    mock_binds: list[str] = msgspec.field(default_factory=list)
    mocks_served_here: dict[str, int] | None = None
    mocks_served_elsewhere: bool = False
    mocks_detached: bool = False


async def observe(given: Given) -> Observed:
    """Read what a plan needs: build inputs (hashing the files), images, containers, mocks."""
    loaded, session, engine = given.loaded, given.session, given.engine
    record = await anyio.to_thread.run_sync(read_record, loaded.state_root)
    build_specs, hashed = await anyio.to_thread.run_sync(_hash_builds, loaded)
    images: dict[str, ImageInfo | None] = {}
    running: dict[str, ContainerInfo] | None = None
    route: tuple[str, list[str]] = ("host-gateway", [])

    async def containers() -> None:
        nonlocal running
        running = await _running(engine, loaded, session)

    async def reach_mocks() -> None:
        nonlocal route
        found = await mock_route(engine, given.target)
        route = found.address, list(found.binds)

    async with anyio.create_task_group() as tg:
        tg.start_soon(inspect_images, engine, _planned_images(loaded, session), images)
        if session.state == "running":
            tg.start_soon(containers)
        if loaded.config.mocks and loaded.services:
            tg.start_soon(reach_mocks)
    host = given.mocks
    served = {name: host.port(name) for name in host.names} if host is not None and host.running() else None
    elsewhere = detached = False
    if running is not None and served is None and session.mocks and loaded.config.mocks:
        alive = await mocks_alive(session.mocks)
        elsewhere = all(alive.get(name) for name in loaded.config.mocks)
        detached = elsewhere and await anyio.to_thread.run_sync(_detached, session.mocks, loaded.state_root)
    observed = Observed(
        loaded=loaded,
        session=session,
        record=record,
        stale=given.stale,
        network=session.network
        if running is not None and session.network
        else network_name(loaded, session.session_id),
        build_specs=build_specs,
        build_inputs=hashed,
        images=images,
        running=running,
        mock_address=route[0],
        mock_binds=route[1],
        mocks_served_here=served,
        mocks_served_elsewhere=elsewhere,
        mocks_detached=detached,
    )
    if running is None:
        return observed
    ports = _mock_ports(observed)
    specs = {
        s.name: container_spec(
            loaded,
            s,
            session=session.session_id,
            network=observed.network,
            mocks=ports,
            mock_address=observed.mock_address,
        )
        for s in loaded.services
    }
    return msgspec.structs.replace(observed, mock_ports=ports, specs=specs)


async def inspect_images(engine: Engine, refs: Iterable[str], into: dict[str, ImageInfo | None]) -> None:
    """Inspect every image of `refs` at once, into `into` (None for one that is absent)."""

    async def one(ref: str) -> None:
        into[ref] = await engine.inspect_image(ref)

    async with anyio.create_task_group() as tg:
        for ref in sorted(set(refs)):
            tg.start_soon(one, ref)


def _planned_images(loaded: LoadedConfig, session: SessionState) -> set[str]:
    """The images a plan decides on: all of them while an environment runs (its containers are
    compared with them), else those built or pulled when missing. The others only go into the
    containers' labels: setup inspects them while it creates the network (`execute`)."""
    return {
        s.build.image
        for s in loaded.services
        if session.state == "running" or s.build.dockerfile is not None or s.build.pull == "missing"
    }


def _hash_builds(loaded: LoadedConfig) -> tuple[dict[str, BuildSpec], dict[str, BuildInputs]]:
    """Each built service's build spec and the hash of its inputs (blocking: reads files)."""
    specs = {
        s.name: build_spec(loaded, s, no_cache=False)
        for s in loaded.services
        if s.build.dockerfile is not None
    }
    return specs, {name: build_inputs(spec, loaded.root) for name, spec in specs.items()}


async def _running(
    engine: Engine, loaded: LoadedConfig, session: SessionState
) -> dict[str, ContainerInfo] | None:
    """The running environment's containers by service, or None when it cannot be reused."""
    if not loaded.services:
        return {} if not session.containers else None  # mocks only: nothing to inspect
    if session.network is None or session.network != network_name(loaded, session.session_id):
        return None
    records = {r.service: r for r in session.containers}
    infos = {i.id: i for i in await engine.inspect([r.id for r in records.values()])}
    current = {name: infos[r.id] for name, r in records.items() if r.id in infos}
    if not current and records:
        return None  # everything is gone: start from nothing
    return current


def _mock_ports(observed: Observed) -> dict[str, int]:
    """The port each mock serves on once setup is done: a fixed one, else the one it has now, else
    a free one picked here (so the containers' specs, which name the ports, are known beforehand)."""
    served = observed.mocks_served_here or {}
    recorded = {r.name: r.port for r in observed.session.mocks}
    return {
        name: mock.port or served.get(name) or recorded.get(name) or _free_port()
        for name, mock in observed.loaded.config.mocks.items()
    }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _detached(records: list[MockRecord], root: str) -> bool:
    """Whether a detached mock host serving this very environment serves the mocks."""
    from preflight_sdk.mocks.detached import is_detached_host

    from ..session.state import state_path

    return any(is_detached_host(r.pid, str(state_path(root))) for r in records if r.pid)
