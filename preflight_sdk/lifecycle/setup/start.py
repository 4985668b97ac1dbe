"""Start services in dependency order, each waited on until ready (or, for a job, finished).

Independent services start at the same time; a service waits only for its `dependsOn` (ready
services, finished jobs). A container that exits while it is waited on fails at once (the
engine's event stream tells, no polling).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from contextlib import aclosing
from datetime import datetime

import anyio

from preflight_sdk.config import LoadedConfig, ServiceConfig
from preflight_sdk.core.errors import InfrastructureError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import ServiceSetup
from preflight_sdk.engine.base import ContainerSpec, Engine

from ..health.probe import Prober, prober_for
from ..health.readiness import await_ready, run_job
from ..session.state import ContainerRecord
from .labels import LABEL_ROOT, LABEL_SESSION
from .specs import container_spec

__all__ = ["Stamp", "Started", "start_services"]

# Adds the inputs label to a service's container spec just before it is created.
Stamp = Callable[[ServiceConfig, ContainerSpec], Awaitable[ContainerSpec]]


class Started:
    """What one setup has started so far (for its clean-up on failure)."""

    def __init__(self) -> None:
        self.network: str | None = None
        self.containers: dict[str, ContainerRecord] = {}


async def start_services(
    engine: Engine,
    loaded: LoadedConfig,
    session_id: str,
    net: str,
    started: Started,
    *,
    mocks: dict[str, int],
    mock_address: str,
    since: datetime,
    override: float | None,
    reporter: Reporter,
    only: Collection[str] | None = None,
    stamp: Stamp | None = None,
) -> list[ServiceSetup]:
    """Start the services (or `only` those: the others are taken as ready) in dependency order."""
    chosen = [s for s in loaded.services if only is None or s.name in only]
    if not chosen:
        return []
    ready = {s.name: anyio.Event() for s in loaded.services}
    for service in loaded.services:
        if service not in chosen:
            ready[service.name].set()
    exited: dict[str, anyio.Event] = {}
    dead: set[str] = set()
    results: dict[str, ServiceSetup] = {}
    prober: Prober = prober_for(engine)
    total = len(chosen)

    waiting = anyio.Event()

    async def watch(scope: anyio.CancelScope) -> None:
        # Started once a service is not ready at its first probe (`since` replays the exits that
        # came before): a service ready at once never needs it, and its request would share the
        # event loop with the probes (about 2 ms of a one-service setup).
        await waiting.wait()
        labels = {LABEL_ROOT: loaded.label_root, LABEL_SESSION: session_id}
        async with aclosing(engine.watch_exits(labels, since=since)) as stream:
            async for container_id in stream:
                dead.add(container_id)
                if container_id in exited:
                    exited[container_id].set()

    async def start(service: ServiceConfig) -> None:
        for dependency in service.depends_on:
            await ready[dependency].wait()
        reporter.step(f"starting {service.name}", scope=service.name, done=len(results), total=total)
        spec = container_spec(
            loaded, service, session=session_id, network=net, mocks=mocks, mock_address=mock_address
        )
        if stamp is not None:
            spec = await stamp(service, spec)
        try:
            container_id = await engine.run(spec)
        except InfrastructureError as exc:
            if "already in use" not in str(exc.details):
                raise
            # A container of this very session survived a crash: replace it.
            await engine.remove_containers([spec.name], force=True)
            container_id = await engine.run(spec)
        started.containers[service.name] = ContainerRecord(
            service=service.name, name=spec.name, id=container_id, kind=service.kind
        )
        event = exited.setdefault(container_id, anyio.Event())
        if container_id in dead:
            event.set()
        if service.kind == "job":
            results[service.name] = await run_job(
                engine, service, spec.name, container_id, override, event, loaded.redactor
            )
        else:
            results[service.name] = await await_ready(
                engine,
                service,
                spec.name,
                container_id,
                net,
                override,
                event,
                prober,
                loaded.redactor,
                waiting=waiting.set,
            )
        outcome = results[service.name]
        reporter.step(
            f"{service.name} {outcome.status} in {outcome.health_check_duration or 0} ms",
            scope=service.name,
            status="ok",
            done=len(results),
            total=total,
        )
        ready[service.name].set()

    async with anyio.create_task_group() as outer:
        watcher = anyio.CancelScope()

        async def run_watch() -> None:
            with watcher:
                await watch(watcher)

        outer.start_soon(run_watch)
        async with anyio.create_task_group() as tg:
            for service in chosen:
                tg.start_soon(start, service)
        watcher.cancel()
    return [results[s.name] for s in chosen]
