"""Bring the environment up to date: build and start only what is missing or changed.

Like an incremental build. Each image carries the hash of its build inputs and each container
the hash of its resolved spec (see `inputs`). A running environment of this checkout is kept;
only services whose hash changed are rebuilt or recreated, then the services that `dependsOn`
them (in dependency order: a recreated database gets its seeding job run again). Mocks whose
routes changed reload in place. Every service's result says what was done and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import anyio
import msgspec

from ..config import LoadedConfig, ServiceConfig
from ..durations import parse_duration
from ..engine.base import BuildSpec, ContainerInfo, ContainerSpec, ImageInfo
from ..errors import PreflightError
from ..progress import Reporter
from ..results.lifecycle import MockSetup, NetworkSetup, ServiceAction, ServiceSetup, SetupResult
from . import build as _build
from . import setup as _setup
from .clean import clean, remove_labelled, stop_mocks
from .context import ProjectContext
from .inputs import (
    LABEL_BUILD_INPUTS,
    LABEL_INPUTS,
    BuildInputs,
    InputsRecord,
    ServiceInputs,
    build_inputs,
    build_reasons,
    mock_digest,
    read_record,
    service_inputs,
    spec_reasons,
    write_record,
)
from .mockhost import ensure_mocks, mock_records, mock_route, start_mocks
from .specs import build_spec, container_spec, network_name
from .status import running_service

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

__all__ = ["bring_up_to_date", "reset_mocks"]

MockAction = Literal["started", "reused", "reloaded"]


class _Stage(Reporter):
    """A reporter for a stage of a larger operation: its end is a step, not the operation's `done`."""

    def __init__(self, outer: Reporter) -> None:
        super().__init__(None, outer.operation)
        self._outer = outer

    def emit(self, kind: Literal["log", "step", "case", "done"], message: str, **fields: Any) -> None:
        self._outer.emit("step" if kind == "done" else kind, message, **fields)


async def bring_up_to_date(
    ctx: ProjectContext,
    *,
    build: bool,
    fresh: bool,
    timeout: str | None,
    reporter: Reporter,
    stage: bool = False,
) -> SetupResult:
    """Make the running environment match the project's files, doing only what changed.

    `build`: also build images that do not exist yet (setup alone reports them NOT_BUILT).
    `fresh`: remove the environment first and rebuild every image without Docker's cache.
    `stage`: this is a stage of another operation (run): its end is reported as a step.
    """
    if stage:
        reporter = _Stage(reporter)
    loaded = await ctx.ensure_loaded()
    if fresh:
        reporter.step("fresh: removing the environment and rebuilding from nothing", status="started")
        await clean(ctx, force=True)
        loaded = await ctx.ensure_loaded()
    record = await anyio.to_thread.run_sync(read_record, loaded.state_root)
    plans = await anyio.to_thread.run_sync(_build_plans, loaded)
    images = await _inspect_images(ctx, {spec.image for spec, _ in plans.values()})
    rebuild = _stale_images(plans, images, record, build=build, fresh=fresh)
    if rebuild:
        for name, why in rebuild.items():
            reporter.step(f"rebuilding {name}: {why}", scope=name)
        await _build.build(
            ctx,
            no_cache=fresh,
            service=None,
            pull=False,
            reporter=reporter,
            only=set(rebuild),
            inputs={name: plans[name][1] for name in rebuild},
        )
        images.update(await _inspect_images(ctx, {plans[name][0].image for name in rebuild}))
    await _pull_missing(ctx, loaded, reporter)
    stamper = _Stamper(ctx, images)
    session = ctx.require_session()
    current = await _current(ctx, loaded) if session.state == "running" else None
    if current is not None:
        result = await _incremental(ctx, loaded, current, rebuild, stamper, record, timeout, reporter)
    else:
        result = await _from_nothing(ctx, loaded, rebuild, stamper, timeout, reporter)
    record.builds = {**record.builds, **_built(plans, images, rebuild)}
    record.services = {**record.services, **stamper.stamped}
    record.mocks = {name: mock_digest(mock) for name, mock in loaded.config.mocks.items()}
    await anyio.to_thread.run_sync(write_record, loaded.state_root, record)
    return result


async def reset_mocks(ctx: ProjectContext) -> None:
    """Start the mocks' journals, sequences and counters over, wherever they are served.

    A run on a reused environment then sees its mocks as a fresh setup would.
    """
    host = ctx.mocks
    if host is not None and host.running():
        host.reset()
        return
    session = ctx.session
    if session is None or not session.mocks:
        return
    import httpx  # lazy: httpx pulls in click, which `import preflight_sdk` must not

    async with httpx.AsyncClient(timeout=2.0) as client:
        for mock in session.mocks:
            try:
                await client.post(f"http://127.0.0.1:{mock.port}/_mock/reset")
            except httpx.HTTPError:
                pass  # not served: the run reports the mock's absence itself


# -- images ----------------------------------------------------------------------------------


async def _pull_missing(ctx: ProjectContext, loaded: LoadedConfig, reporter: Reporter) -> None:
    """Pull the ready-made images that are to be pulled when missing (`build.pull: missing`)."""
    wanted = {
        s.name: s.build.image
        for s in loaded.services
        if s.build.dockerfile is None and s.build.pull == "missing"
    }
    if not wanted:
        return
    present = await _inspect_images(ctx, set(wanted.values()))
    missing = {name for name, image in wanted.items() if present.get(image) is None}
    if missing:
        await _build.build(ctx, no_cache=False, service=None, pull=True, reporter=reporter, only=missing)


def _build_plans(loaded: LoadedConfig) -> dict[str, tuple[BuildSpec, BuildInputs]]:
    """Each built service's build spec and the hash of its inputs (blocking: reads files)."""
    plans: dict[str, tuple[BuildSpec, BuildInputs]] = {}
    for service in loaded.services:
        if service.build.dockerfile is not None:
            spec = build_spec(loaded, service, no_cache=False)
            plans[service.name] = (spec, build_inputs(spec, loaded.root))
    return plans


async def _inspect_images(ctx: ProjectContext, refs: set[str]) -> dict[str, ImageInfo | None]:
    found: dict[str, ImageInfo | None] = {}

    async def one(ref: str) -> None:
        found[ref] = await ctx.engine.inspect_image(ref)

    async with anyio.create_task_group() as tg:
        for ref in sorted(refs):
            tg.start_soon(one, ref)
    return found


def _stale_images(
    plans: dict[str, tuple[BuildSpec, BuildInputs]],
    images: dict[str, ImageInfo | None],
    record: InputsRecord,
    *,
    build: bool,
    fresh: bool,
) -> dict[str, str]:
    """The services whose image must be built, with why."""
    stale: dict[str, str] = {}
    for name, (spec, inputs) in plans.items():
        image = images.get(spec.image)
        if fresh:
            stale[name] = "fresh build"
        elif image is None:
            if build:
                stale[name] = "no image yet"
        elif not _built_from(image, inputs, last := record.builds.get(name)):
            if last is None:
                labelled = LABEL_BUILD_INPUTS in image.labels
                stale[name] = (
                    "build inputs changed" if labelled else "the image was not built from these inputs"
                )
            elif last.digest == inputs.digest:
                stale[name] = "the image was replaced by another build"
            else:
                stale[name] = ", ".join(build_reasons(last, inputs))
    return stale


def _built_from(image: ImageInfo, inputs: BuildInputs, last: BuildInputs | None) -> bool:
    """Whether `image` was built from `inputs`: its label says so, or this checkout built that very id."""
    label = image.labels.get(LABEL_BUILD_INPUTS)
    if label is not None:
        return label == inputs.digest
    return last is not None and last.image == image.id and last.digest == inputs.digest


def _built(
    plans: dict[str, tuple[BuildSpec, BuildInputs]], images: dict[str, ImageInfo | None], names: Iterable[str]
) -> dict[str, BuildInputs]:
    """The record of the images just built: their inputs and ids."""
    built: dict[str, BuildInputs] = {}
    for name in names:
        spec, inputs = plans[name]
        image = images.get(spec.image)
        built[name] = msgspec.structs.replace(
            inputs, image=image.id if image is not None else "", tag=spec.image
        )
    return built


class _Stamper:
    """Labels each container with the hash of its inputs, and remembers them for the record."""

    def __init__(self, ctx: ProjectContext, images: dict[str, ImageInfo | None]) -> None:
        self.ctx = ctx
        self.images = images
        self.stamped: dict[str, ServiceInputs] = {}
        self._fetching: dict[str, anyio.Event] = {}

    def prefetch(self, tg: TaskGroup, refs: set[str]) -> None:
        """Inspect the images of `refs` in `tg`, while the network is being made (off the critical path)."""
        for ref in sorted(refs):
            if self.images.get(ref) is None and ref not in self._fetching:
                self._fetching[ref] = anyio.Event()
                tg.start_soon(self._fetch, ref)

    async def _fetch(self, ref: str) -> None:
        try:
            self.images[ref] = await self.ctx.engine.inspect_image(ref)
        except PreflightError:
            pass  # `inputs` asks again and the error surfaces there, in its service's context
        finally:
            self._fetching.pop(ref).set()

    async def inputs(self, service: ServiceConfig, spec: ContainerSpec) -> ServiceInputs:
        if spec.image in self._fetching:
            await self._fetching[spec.image].wait()
        if self.images.get(spec.image) is None:
            self.images[spec.image] = await self.ctx.engine.inspect_image(spec.image)
        image = self.images[spec.image]
        return service_inputs(spec, image.id if image is not None else "missing")

    async def stamp(self, service: ServiceConfig, spec: ContainerSpec) -> ContainerSpec:
        inputs = await self.inputs(service, spec)
        self.stamped[service.name] = inputs
        return msgspec.structs.replace(spec, labels={**spec.labels, LABEL_INPUTS: inputs.digest})


# -- from nothing ----------------------------------------------------------------------------


async def _from_nothing(
    ctx: ProjectContext,
    loaded: LoadedConfig,
    rebuilt: dict[str, str],
    stamper: _Stamper,
    timeout: str | None,
    reporter: Reporter,
) -> SetupResult:
    if ctx.stale:
        # The running environment belongs to an older e2e.yaml and is broken: it all goes.
        await stop_mocks(ctx)
        await remove_labelled(ctx, loaded.label_root, force=True)
        await ctx.transition(
            state="stopped", network=None, containers=[], mocks=[], config_digest=loaded.digest
        )
        ctx.stale = False
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        stamper.prefetch(tg, {s.build.image for s in loaded.services})
        try:
            result = await _setup.setup(ctx, timeout=timeout, reporter=reporter, stamp=stamper.stamp)
        except Exception as exc:  # raised below as itself, not in the task group's ExceptionGroup
            failure = exc
    if failure is not None:
        raise failure
    services = [
        msgspec.structs.replace(
            s,
            action="rebuilt" if s.name in rebuilt else "started",
            reason=rebuilt.get(s.name, "not running"),
        )
        for s in result.services
    ]
    mocks = [msgspec.structs.replace(m, action="started") for m in result.mocks]
    return msgspec.structs.replace(result, services=services, mocks=mocks)


# -- incremental -----------------------------------------------------------------------------


async def _current(ctx: ProjectContext, loaded: LoadedConfig) -> dict[str, ContainerInfo] | None:
    """The running environment's containers by service, or None when it cannot be reused."""
    session = ctx.require_session()
    if not loaded.services:
        return {} if not session.containers else None  # mocks only: nothing to inspect
    if session.network is None or session.network != network_name(loaded, session.session_id):
        return None
    records = {r.service: r for r in session.containers}
    infos = {i.id: i for i in await ctx.engine.inspect([r.id for r in records.values()])}
    current = {name: infos[r.id] for name, r in records.items() if r.id in infos}
    if not current and records:
        return None  # everything is gone: start from nothing
    return current


async def _incremental(
    ctx: ProjectContext,
    loaded: LoadedConfig,
    current: dict[str, ContainerInfo],
    rebuilt: dict[str, str],
    stamper: _Stamper,
    record: InputsRecord,
    timeout: str | None,
    reporter: Reporter,
) -> SetupResult:
    begun = anyio.current_time()
    since = datetime.now(UTC) - timedelta(seconds=2)
    session = ctx.require_session()
    net = session.network or network_name(loaded, session.session_id)
    mocks = await _refresh_mocks(ctx, loaded, record, reporter)
    ports = {m.name: m.port for m in mocks}
    mock_address = (await mock_route(ctx)).address if ports and loaded.services else "host-gateway"
    why: dict[str, str] = {}
    actions: dict[str, ServiceAction] = {}
    specs: dict[str, ContainerSpec] = {}
    for service in loaded.services:
        info = current.get(service.name)
        spec = specs[service.name] = _spec(loaded, service, session.session_id, net, ports, mock_address)
        inputs = await stamper.inputs(service, spec)
        if info is None:
            why[service.name], actions[service.name] = "not running", "started"
        elif info.labels.get(LABEL_INPUTS) != inputs.digest:
            if service.name in rebuilt:
                why[service.name], actions[service.name] = rebuilt[service.name], "rebuilt"
            else:
                reasons = spec_reasons(record.services.get(service.name), inputs)
                why[service.name], actions[service.name] = ", ".join(reasons), "recreated"
        elif service.kind == "service" and not info.running:
            why[service.name], actions[service.name] = f"container {info.status}", "started"
        elif service.kind == "job" and info.exit_code != 0:
            why[service.name], actions[service.name] = "its last run failed", "started"
    _add_dependants(loaded, why, actions)
    gone = [r for r in session.containers if loaded.service(r.service) is None]
    replaced = [current[name].id for name in why if name in current] + [r.id for r in gone]
    for name in why:
        reporter.step(f"{name}: {actions[name]} ({why[name]})", scope=name)
    retired = await _retire(ctx, [current[n] for n in why if n in current and _may_overlap(specs[n])])
    first = [ref for ref in replaced if ref not in retired]
    if first:
        await ctx.engine.remove_containers(first, force=True)
    started = _setup.Started()
    started.network = net
    override = parse_duration(timeout, field="timeout") if timeout is not None else None
    kept = {r.service: r for r in session.containers if r.service in current and r.service not in why}
    try:
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            if retired:
                tg.start_soon(_remove_retired, ctx, retired, reporter)
            try:
                fresh = await _setup.start_services(
                    ctx,
                    loaded,
                    net,
                    started,
                    since=since,
                    override=override,
                    reporter=reporter,
                    only=set(why),
                    stamp=stamper.stamp,
                )
            except Exception as exc:  # raised below as itself, not in the task group's ExceptionGroup
                failure = exc
        if failure is not None:
            raise failure
    except BaseException:
        # What runs unchanged stays; what failed to start is removed, so the next run starts it.
        with anyio.CancelScope(shield=True):
            try:
                await ctx.engine.remove_containers([r.id for r in started.containers.values()], force=True)
                await ctx.transition(containers=[kept[s.name] for s in loaded.services if s.name in kept])
            except (PreflightError, OSError):
                pass
        raise
    records = {**kept, **started.containers}
    await ctx.transition(
        state="running",
        network=session.network,
        containers=[records[s.name] for s in loaded.services if s.name in records],
        mocks=mock_records(ctx) or session.mocks,
        config_digest=loaded.digest,
        images={**session.images, **{s.name: s.build.image for s in loaded.services}},
        **ctx.engine_record(),
    )
    ctx.stale = False
    by_name = {s.name: s for s in fresh}
    address = (await ctx.engine.reach())[0] if loaded.services else "127.0.0.1"
    services = [
        msgspec.structs.replace(by_name[s.name], action=actions[s.name], reason=why[s.name])
        if s.name in by_name
        else _reused(s, current[s.name], address)
        for s in loaded.services
    ]
    result = SetupResult(
        network=NetworkSetup(name=net, created=False),
        services=services,
        mocks=mocks,
        total_duration=int((anyio.current_time() - begun) * 1000),
    )
    changed = len(why)
    summary = f"{changed} of {len(services)} service(s) changed" if changed else "nothing changed"
    reporter.emit("done", f"environment up to date in {result.total_duration} ms ({summary})", status="ok")
    return result


def _may_overlap(spec: ContainerSpec) -> bool:
    """Whether a container's successor may start while it is still being removed.

    Not when it publishes a fixed host port (held until the old one is gone) or mounts a named
    volume (two containers must never share a database's files, even for a moment).
    """
    fixed_port = any(port.host for port in spec.ports)
    named_volume = any(not volume.split(":", 1)[0].startswith(("/", ".", "~")) for volume in spec.volumes)
    return not fixed_port and not named_volume


async def _retire(ctx: ProjectContext, infos: list[ContainerInfo]) -> set[str]:
    """Rename containers out of their successors' way; return the ids that were.

    Removing a running container takes about 150 ms (the daemon kills it and releases its
    network endpoint and ports); renamed, it goes while its successor is created and started.
    """
    retired: set[str] = set()

    async def one(info: ContainerInfo) -> None:
        try:
            if await ctx.engine.rename_container(info.id, f"{info.name}-replaced-{info.id[:12]}"):
                retired.add(info.id)
        except PreflightError:
            pass  # gone already, or not renamable: removed first, as before

    async with anyio.create_task_group() as tg:
        for info in infos:
            tg.start_soon(one, info)
    return retired


async def _remove_retired(ctx: ProjectContext, refs: set[str], reporter: Reporter) -> None:
    # Shielded: a failed or cancelled start must not leave the old containers running.
    with anyio.CancelScope(shield=True):
        try:
            outcomes = await ctx.engine.remove_containers(sorted(refs), force=True)
        except PreflightError as exc:
            outcomes = []
            reporter.step(f"could not remove the replaced containers: {exc.message}", status="failed")
        for outcome in outcomes:
            if outcome.action == "failed":
                reporter.step(
                    f"could not remove the replaced container {outcome.ref}: {outcome.error}", status="failed"
                )


def _spec(
    loaded: LoadedConfig,
    service: ServiceConfig,
    session: str,
    net: str,
    ports: dict[str, int],
    mock_address: str,
) -> ContainerSpec:
    return container_spec(
        loaded, service, session=session, network=net, mocks=ports, mock_address=mock_address
    )


def _add_dependants(loaded: LoadedConfig, why: dict[str, str], actions: dict[str, ServiceAction]) -> None:
    """Add every service that depends (transitively) on a changed one, in dependency order."""
    changed = True
    while changed:
        changed = False
        for service in loaded.services:
            if service.name in why:
                continue
            cause = next((d for d in service.depends_on if d in why), None)
            if cause is not None:
                verb = (
                    "re-ran"
                    if (svc := loaded.service(cause)) is not None and svc.kind == "job"
                    else "was recreated"
                )
                why[service.name] = f"depends on {cause}, which {verb}"
                actions[service.name] = "recreated"
                changed = True


def _reused(service: ServiceConfig, info: ContainerInfo, address: str) -> ServiceSetup:
    return msgspec.structs.replace(
        running_service(service, info, address), action="reused", reason="unchanged"
    )


async def _refresh_mocks(
    ctx: ProjectContext, loaded: LoadedConfig, record: InputsRecord, reporter: Reporter
) -> list[MockSetup]:
    """Serve the configured mocks: changed routes reload in place (same port, journal kept)."""
    configs = loaded.config.mocks
    if not configs:
        if ctx.mocks is not None:
            await stop_mocks(ctx)
        return []
    digests = {name: mock_digest(mock) for name, mock in configs.items()}
    changed = {name for name in configs if record.mocks.get(name) != digests[name]}
    host = ctx.mocks
    action: dict[str, MockAction] = {}
    if host is not None and host.running():
        ports = {name: host.port(name) for name in host.names}
        moved = any(mock.port and mock.port != ports.get(name) for name, mock in configs.items())
        if set(host.names) != set(configs) or moved:
            reporter.step("the set of mocks changed: restarting them", scope="mocks")
            await start_mocks(ctx, reporter, ports={n: p for n, p in ports.items() if n in configs})
            action = dict.fromkeys(configs, "started")
        elif changed:
            host.reload({name: configs[name] for name in changed})
            for name in sorted(changed):
                reporter.step(f"mock {name}: routes changed, reloaded in place", scope="mocks")
            action = dict.fromkeys(changed, "reloaded")
    else:
        await ensure_mocks(ctx, reporter)
        if ctx.mocks is not None:
            action = dict.fromkeys(configs, "started")
        elif changed:
            reporter.step(
                f"mock routes changed ({', '.join(sorted(changed))}) but another process serves the mocks: "
                "they keep the old routes until that process stops them (clean, then run)",
                scope="mocks",
                status="failed",
            )
    served = await _served_ports(ctx)
    return [
        MockSetup(
            name=name,
            port=served.get(name, mock.port),
            status="running",
            route_count=len(mock.routes),
            url=f"http://127.0.0.1:{served.get(name, mock.port)}",
            action=action.get(name, "reused"),
        )
        for name, mock in configs.items()
    ]


async def _served_ports(ctx: ProjectContext) -> dict[str, int]:
    host = ctx.mocks
    if host is not None and host.running():
        return {name: host.port(name) for name in host.names}
    session = ctx.require_session()
    return {r.name: r.port for r in session.mocks}
