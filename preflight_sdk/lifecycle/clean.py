"""`clean`: remove every container, mock and network of the project, found by label.

Clean never trusts memory alone: it lists what Docker has with the project's labels (any session
of this checkout), so it also removes what a crashed or killed process left behind, and it works
without a session or even with a broken e2e.yaml. Each action is reported as it really went.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import anyio

from preflight_sdk.core.errors import ConfigError, PreflightError, single_error
from preflight_sdk.core.results.lifecycle import CleanAction, CleanResult
from preflight_sdk.processes.groups import stop_groups

from ..config.loader import find_config
from ..engine.base import ContainerInfo, Engine, NetworkInfo, RemoveOutcome
from .images.inputs import read_record
from .mockhost.recording import end_setup_recording
from .session.context import ProjectContext
from .session.state import SessionState, read_state, remove_state
from .setup.labels import LABEL_MANAGED, LABEL_ROOT
from .setup.specs import network_name

__all__ = ["clean", "clean_on_exit", "first_error", "remove_labelled"]


async def clean(ctx: ProjectContext, *, force: bool, images: bool = False) -> CleanResult:
    """Remove the project's environment (see `Project.clean`)."""
    root = await _root(ctx)
    # A shard's copy has labels and a state file of its own (see `shard_copy`).
    labelled = ctx.loaded.label_root if ctx.loaded is not None else root
    state_root = ctx.loaded.state_root if ctx.loaded is not None else root
    session = ctx.session or await anyio.to_thread.run_sync(read_state, state_root)
    recordings = await end_setup_recording(ctx)  # written before the mocks stop
    mocks = await stop_mocks(ctx)
    await ctx.stop_pytest_servers()
    try:
        with first_error():
            async with anyio.create_task_group() as tg:
                # What suites of any process started and left running (their owner killed): see
                # processes/groups.py. Read from /proc while the daemon removes the containers.
                tg.start_soon(anyio.to_thread.run_sync, partial(stop_groups, state_root, orphans_only=False))
                containers, networks = await remove_labelled(ctx.engine, labelled, ctx.session, force=force)
    except PreflightError:
        if ctx.loaded is None or ctx.loaded.services:
            raise
        containers, networks = [], []  # mocks and tests only: Docker was never needed
    main = None
    if session is not None and ctx.loaded is not None:
        wanted = network_name(ctx.loaded, session.session_id)
        main = next((n for n in networks if n.name == wanted), CleanAction(name=wanted, action="not_found"))
    elif networks:
        main = networks[0]
    images_removed = await remove_images(ctx, root, state_root) if images else []
    removed = await anyio.to_thread.run_sync(remove_state, state_root)
    ctx.state_file_removed()
    if ctx.session is not None:
        ctx.session = None if ctx.loaded is None else _stopped(ctx)
    ctx.owns_environment = False
    return CleanResult(
        containers=containers,
        mocks=mocks,
        network=main,
        networks=networks,
        session_removed=removed,
        images=images_removed,
        recordings=recordings,
    )


async def clean_on_exit(ctx: ProjectContext) -> None:
    """Clean when leaving `async with Project.open(...)`, if this object started an environment."""
    if ctx.owns_environment:
        with anyio.CancelScope(shield=True):
            await clean(ctx, force=True)


async def stop_mocks(ctx: ProjectContext) -> list[CleanAction]:
    """Stop the mocks this process serves for the project, and a detached mock host serving them."""
    from .mockhost.host import stop_detached_mocks

    host = ctx.mocks
    ctx.mocks = None
    records = ctx.session.mocks if ctx.session is not None else []
    detached = await stop_detached_mocks(records, ctx.state_root) if records else 0
    if host is None:
        return [CleanAction(name=r.name, action="stopped") for r in records] if detached else []
    actions: list[CleanAction] = await host.stop()
    return actions


async def remove_labelled(
    engine: Engine, root: str, session: SessionState | None, *, force: bool, keep_network: str | None = None
) -> tuple[list[CleanAction], list[CleanAction]]:
    """Remove every container, then every network (but `keep_network`), labelled with `root` (the
    checkout's, or a shard's); `session`'s own containers are removed without waiting for the listing."""
    labels = {LABEL_ROOT: root}
    found: list[ContainerInfo] = []
    nets: list[NetworkInfo] = []
    early: list[RemoveOutcome] = []
    # The containers this process knows it started are removed at once, while Docker is asked
    # for everything labelled with the checkout (what a killed process left behind): the listing
    # is then off clean's critical path.
    known = [c.id for c in session.containers] if force and session is not None else []
    # And, where the engine detaches them cheaply (the socket), each leaves the session's network
    # and is removed at once; the network is removed once they all left it, while they go.
    network = session.network if known and session is not None and session.network != keep_network else None
    listed, detached = anyio.Event(), anyio.Event()
    early_networks: list[RemoveOutcome] = []

    async def containers_of() -> None:
        found.extend(await engine.list_containers(labels, detail=False))
        listed.set()

    async def networks_of() -> None:
        nets.extend(await engine.list_networks(labels))

    async def leave_then_go(network: str, ref: str, left: set[str]) -> None:
        await engine.detach(network, [ref])
        left.add(ref)
        if len(left) == len(known):
            detached.set()
        early.extend(await engine.remove_containers([ref], force=True))

    async def remove_known() -> None:
        if network is None or not await engine.detach(network, []):  # no refs: only asks whether it would
            early.extend(await engine.remove_containers(known, force=True))
            return
        async with anyio.create_task_group() as each:
            left: set[str] = set()
            for ref in known:
                each.start_soon(leave_then_go, network, ref, left)
            each.start_soon(network_with_them, network)

    async def network_with_them(network: str) -> None:
        await detached.wait()
        await listed.wait()
        if not {c.id for c in found} - set(known):  # a container not detached would keep it in use
            early_networks.extend(await engine.remove_networks([network]))

    with first_error():
        async with anyio.create_task_group() as tg:
            tg.start_soon(containers_of)
            tg.start_soon(networks_of)
            if known:
                tg.start_soon(remove_known)
    containers: list[CleanAction] = []
    if found or early:
        running = {c.id for c in found if c.running}
        if known and session is not None and session.state == "running":
            # Removed before the listing saw it: a service of a running session was running.
            seen = {c.id for c in found}
            running |= {c.id for c in session.containers if c.kind != "job" and c.id not in seen}
        names = {c.id: c.name for c in found}
        names.update({c.id: c.name for c in session.containers} if known and session else {})
        done = {o.ref for o in early}
        rest = [c.id for c in found if c.id not in done]
        if force:
            outcomes = [o for o in early if o.action != "not_found" or o.ref in names]
            outcomes += await engine.remove_containers(rest, force=True) if rest else []
        else:
            outcomes = await _stop_then_remove(engine, [c for c in rest if c in running], rest)
        for outcome in outcomes:
            if outcome.action == "not_found" and outcome.ref not in {c.id for c in found}:
                continue  # known from memory but already gone: nothing of it was left to clean
            action = outcome.action
            if action == "removed" and outcome.ref in running and force:
                action = "force_removed"
            containers.append(
                CleanAction(name=names.get(outcome.ref, outcome.ref), action=action, error=outcome.error)
            )
    # A network removed with its containers is done; one that failed (still in use) is tried again.
    gone = [o for o in early_networks if o.action == "removed"]
    rest_networks = [n.name for n in nets if n.name != keep_network and n.name not in {o.ref for o in gone}]
    network_actions = [
        CleanAction(name=o.ref, action=o.action if o.action != "force_removed" else "removed", error=o.error)
        for o in [*gone, *await engine.remove_networks(rest_networks)]
    ]
    return containers, network_actions


async def remove_images(ctx: ProjectContext, root: str, state_root: str) -> list[CleanAction]:
    """Remove the images built by this checkout: labelled with its root, or in its build record.

    Docker's legacy builder leaves labels off (each would be a build step): those images are
    known by the tag and id the record (`inputs.json`) keeps, and their tag is removed (the
    image goes with its last tag: one built from the same files elsewhere is the same image).
    A tag that names another id now was built again elsewhere, and is left to that build.
    """
    found = {i.id: i for i in await ctx.engine.list_images({LABEL_MANAGED: "true", LABEL_ROOT: root})}
    names = {image.id: ", ".join(image.tags) or image.id for image in found.values()}
    record = await anyio.to_thread.run_sync(read_record, state_root)
    for service, built in record.builds.items():
        tag = built.tag or _configured_image(ctx, service)  # records of older versions have no tag
        if built.image and tag and built.image not in found and tag not in names:
            image = await ctx.engine.inspect_image(tag)
            if image is not None and image.id == built.image:
                names[tag] = tag
    outcomes = await ctx.engine.remove_images(list(names))
    return [CleanAction(name=names.get(o.ref, o.ref), action=o.action, error=o.error) for o in outcomes]


def _configured_image(ctx: ProjectContext, service: str) -> str:
    found = ctx.loaded.service(service) if ctx.loaded is not None else None
    return found.build.image if found is not None else ""


@contextmanager
def first_error() -> Iterator[None]:
    """Raise the first `PreflightError` of a task group's exception group as itself.

    Both listings fail at once when the daemon is down: the caller gets one DOCKER_ERROR with
    its code and hint, not an exception group.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        error = single_error(group)
        if not isinstance(error, PreflightError):
            raise
        raise error from None


async def _stop_then_remove(engine: Engine, running: list[str], everything: list[str]) -> list[RemoveOutcome]:
    # Without force, give running containers docker's usual stop grace (SIGTERM, then SIGKILL).
    if running:
        await engine.stop_containers(running)
    return await engine.remove_containers(everything, force=False)


async def _root(ctx: ProjectContext) -> str:
    if ctx.loaded is not None:
        return ctx.loaded.root
    try:
        loaded = await ctx.ensure_loaded(persist=False)
    except ConfigError:
        # A broken or missing e2e.yaml must not prevent clean-up: fall back to the directory.
        try:
            return str(find_config(ctx.path, ctx.config_file).parent)
        except PreflightError:
            path = ctx.path.resolve()
            return str(path if path.is_dir() else path.parent)
    return loaded.root


def _stopped(ctx: ProjectContext):  # type: ignore[no-untyped-def]
    import msgspec

    assert ctx.session is not None
    return msgspec.structs.replace(ctx.session, state="stopped", network=None, containers=[], mocks=[])
