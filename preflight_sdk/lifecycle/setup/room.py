"""Making room for a setup's containers: the network, leftovers of a killed process, and the
containers being replaced (moved aside so their successors start while they are removed)."""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import InfrastructureError, PreflightError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.engine.base import ContainerInfo, Engine

from ..clean import remove_labelled
from .labels import LABEL_MANAGED, LABEL_ROOT
from .plan import SetupPlan
from .specs import session_labels
from .start import Started

__all__ = ["create_network", "make_room", "remove_leftovers", "remove_retired"]


async def create_network(
    engine: Engine, loaded: LoadedConfig, session_id: str, name: str, started: Started, reporter: Reporter
) -> None:
    """Create the session's network (one left by a crash of this very session is used as it is)."""
    labels = {**session_labels(loaded.project_name, loaded.label_root, session_id), LABEL_MANAGED: "true"}
    reporter.step(f"creating network {name}", scope="network")
    try:
        await engine.create_network(name, labels)
    except InfrastructureError as exc:
        if "already exists" not in str(exc.details):
            raise
    started.network = name


async def remove_leftovers(engine: Engine, loaded: LoadedConfig, keep_network: str) -> None:
    """Remove containers (and then networks) an earlier, killed process left for this checkout.

    Only containers can hold names and host ports, so one cheap listing decides; networks
    without containers are left for `clean` rather than listed on every setup.
    """
    if await engine.list_containers({LABEL_ROOT: loaded.label_root}, detail=False):
        await remove_labelled(engine, loaded.label_root, None, force=True, keep_network=keep_network)


async def make_room(engine: Engine, plan: SetupPlan, running: Mapping[str, ContainerInfo]) -> set[str]:
    """Move aside the containers the plan replaces and may overlap; remove the others at once.

    Returns the ids moved aside: `remove_retired` removes them while their successors start.
    """
    changed = [step for step in plan.changed() if step.replaces is not None]
    retired = await _retire(engine, [running[s.name] for s in changed if s.overlap and s.name in running])
    first = [s.replaces for s in changed if s.replaces is not None and s.replaces not in retired]
    first += plan.remove
    if first:
        await engine.remove_containers(first, force=True)
    return retired


async def _retire(engine: Engine, infos: list[ContainerInfo]) -> set[str]:
    """Rename containers out of their successors' way; return the ids that were.

    Removing a running container takes about 150 ms (the daemon kills it and releases its
    network endpoint and ports); renamed, it goes while its successor is created and started.
    """
    retired: set[str] = set()

    async def one(info: ContainerInfo) -> None:
        try:
            if await engine.rename_container(info.id, f"{info.name}-replaced-{info.id[:12]}"):
                retired.add(info.id)
        except PreflightError:
            pass  # gone already, or not renamable: removed first, as before

    async with anyio.create_task_group() as tg:
        for info in infos:
            tg.start_soon(one, info)
    return retired


async def remove_retired(engine: Engine, refs: set[str], reporter: Reporter) -> None:
    """Remove the containers moved aside (shielded: a failed start must not leave them running)."""
    with anyio.CancelScope(shield=True):
        try:
            outcomes = await engine.remove_containers(sorted(refs), force=True)
        except PreflightError as exc:
            outcomes = []
            reporter.step(f"could not remove the replaced containers: {exc.message}", status="failed")
        for outcome in outcomes:
            if outcome.action == "failed":
                reporter.step(
                    f"could not remove the replaced container {outcome.ref}: {outcome.error}", status="failed"
                )
