"""`build`: build every service image from its Dockerfile (or check a ready-made image exists)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Literal

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, ServiceConfig
from preflight_sdk.core.errors import InfrastructureError, InputError, PreflightError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.lifecycle import BuildResult, DockerfileLine, ServiceBuild
from preflight_sdk.engine.base import BuildSpec, Engine

from ..session.state import SessionState
from ..setup.specs import build_spec
from .build_order import image_dependencies
from .inputs import LABEL_BUILD_INPUTS, BuildInputs, build_inputs, read_record, write_record

__all__ = ["build_images", "build_services", "built"]

_TAIL = 30
# Two parallel builds keep both cores busy; more only make each slower on small machines.
_PARALLEL_BUILDS = 2


async def build_services(
    engine: Engine,
    loaded: LoadedConfig,
    service: str | None,
    *,
    no_cache: bool,
    pull: bool,
    reporter: Reporter,
) -> BuildResult:
    """Build the images of the project, or of one `service` (see `Project.build`)."""
    return await build_images(
        engine, loaded, _targets(loaded, service), no_cache=no_cache, pull=pull, reporter=reporter
    )


def built(
    session: SessionState, loaded: LoadedConfig, result: BuildResult, *, service: str | None
) -> SessionState:
    """The session once `result`'s images are built: `built` when every service has its image."""
    images = {**session.images, **{r.name: r.image for r in result.services}}
    complete = service is None or all(s.name in images for s in loaded.services)
    state = session.state if session.state == "running" or not complete else "built"
    return msgspec.structs.replace(session, state=state, images=images)


async def build_images(
    engine: Engine,
    loaded: LoadedConfig,
    targets: Sequence[ServiceConfig],
    *,
    no_cache: bool,
    pull: bool,
    reporter: Reporter,
    inputs: Mapping[str, BuildInputs] | None = None,
) -> BuildResult:
    """Build the images of `targets` (or check a ready-made image exists; `pull` fetches it).

    `inputs` are their build inputs when the caller already hashed them. Each built image's id
    and inputs go in the record (`inputs.json`); where labels are free, the image also carries
    its inputs' hash. A failed build raises BUILD_FAILED (NOT_BUILT for a missing image).
    """
    # DOCKERFILE_NOT_FOUND is reported before docker is called at all.
    specs = {
        s.name: build_spec(loaded, s, no_cache=no_cache) for s in targets if s.build.dockerfile is not None
    }
    hashed = await anyio.to_thread.run_sync(_hash_builds, specs, inputs or {}, loaded.root)
    record = await anyio.to_thread.run_sync(read_record, loaded.state_root)
    specs = {
        name: msgspec.structs.replace(
            spec,
            labels={**spec.labels, LABEL_BUILD_INPUTS: hashed[name].digest},
            replaces=(last.image or None) if (last := record.builds.get(name)) is not None else None,
        )
        for name, spec in specs.items()
    }
    image_ids: dict[str, str] = {}
    await engine.info()  # DOCKER_ERROR (with how to start Docker) before any work
    started = anyio.current_time()
    results: dict[str, ServiceBuild] = {}
    limiter = anyio.CapacityLimiter(_PARALLEL_BUILDS)
    total = len(targets)
    needs = await anyio.to_thread.run_sync(image_dependencies, specs)
    finished = {name: anyio.Event() for name in specs}

    async def one(svc: ServiceConfig) -> None:
        try:
            for dependency in sorted(needs.get(svc.name, ())):
                await finished[dependency].wait()
            async with limiter:
                await build_or_check(svc)
        finally:
            if svc.name in finished:
                finished[svc.name].set()

    async def build_or_check(svc: ServiceConfig) -> None:
        if svc.name in specs:  # a ready-made image says "pulling" once it is not found locally
            reporter.step(f"building {svc.name}", scope=svc.name, done=len(results), total=total)
        broken = [
            d for d in sorted(needs.get(svc.name, ())) if d not in results or results[d].status != "success"
        ]
        if broken:
            results[svc.name] = _Outcome(svc, specs[svc.name].image, reporter).failure(
                "built", f"not built: its Dockerfile uses the image of `{broken[0]}`, whose build failed"
            )
        elif svc.name in specs:
            results[svc.name] = await _build_one(engine, loaded, svc, specs[svc.name], reporter, image_ids)
        else:
            pulling = partial(reporter.step, f"pulling {svc.name} ({svc.build.image})", scope=svc.name)
            results[svc.name] = await _use_image(
                engine, loaded, svc, pull=pull, reporter=reporter, pulling=pulling
            )
        outcome = results[svc.name]
        reporter.step(
            f"{svc.name}: {outcome.status} ({outcome.duration} ms)",
            scope=svc.name,
            status="ok" if outcome.status == "success" else "failed",
            done=len(results),
            total=total,
        )

    # Builds first: a service without a Dockerfile may use an image another service builds.
    async with anyio.create_task_group() as tg:
        for svc in targets:
            if svc.name in specs:
                tg.start_soon(one, svc)
    async with anyio.create_task_group() as tg:
        for svc in targets:
            if svc.name not in specs:
                tg.start_soon(one, svc)

    ordered = [results[s.name] for s in targets]
    result = BuildResult(services=ordered, total_duration=_ms(anyio.current_time() - started))
    built = {
        r.name: msgspec.structs.replace(hashed[r.name], image=image_ids[r.name], tag=r.image)
        for r in ordered
        if r.status == "success" and r.name in image_ids
    }
    if built:
        await anyio.to_thread.run_sync(_remember, loaded.state_root, built)
    failed = [r for r in ordered if r.status == "failed"]
    if failed:
        raise _failure(failed, result)
    return result


def _hash_builds(
    specs: Mapping[str, BuildSpec], known: Mapping[str, BuildInputs], project_root: str
) -> dict[str, BuildInputs]:
    return {name: known.get(name) or build_inputs(spec, project_root) for name, spec in specs.items()}


def _remember(root: str, built: Mapping[str, BuildInputs]) -> None:
    """Keep each built image's id and the parts of its inputs (what is up to date, and why not)."""
    record = read_record(root)
    record.builds.update(built)
    write_record(root, record)


def _targets(loaded: LoadedConfig, service: str | None) -> Sequence[ServiceConfig]:
    if service is None:
        return loaded.services
    chosen = loaded.service(service)
    if chosen is None:
        names = [s.name for s in loaded.services]
        raise InputError(
            f"no service named `{service}`",
            hint=f"valid services: {', '.join(names) or '(none)'}",
            details={"service": service, "valid": names},
        )
    return [chosen]


class _Outcome:
    """Collects a service's output tail and turns the way its image came to be into a ServiceBuild."""

    def __init__(
        self, svc: ServiceConfig, image: str, reporter: Reporter, redactor: Redactor = DEFAULT
    ) -> None:
        self.svc = svc
        self.image = image
        self.reporter = reporter
        self.redactor = redactor  # build output can echo a build argument or a secret variable
        self.started = anyio.current_time()
        self.tail: list[str] = []

    def line(self, line: str) -> None:
        """Keep the last lines and report each as it comes (secrets replaced)."""
        line = self.redactor.text(line)
        self.tail.append(line)
        del self.tail[:-_TAIL]
        self.reporter.log(line, scope=self.svc.name)

    def success(self, source: Literal["built", "local", "pulled"]) -> ServiceBuild:
        return ServiceBuild(
            name=self.svc.name, image=self.image, status="success", duration=self._ms(), source=source
        )

    def failure(
        self,
        source: Literal["built", "pulled", "none"],
        error: str,
        *,
        hint: str | None = None,
        buildkit_only: list[DockerfileLine] | None = None,
    ) -> ServiceBuild:
        return ServiceBuild(
            name=self.svc.name,
            image=self.image,
            status="failed",
            duration=self._ms(),
            source=source,
            error=self.redactor.text(error),
            log_tail=list(self.tail) if self.tail else None,
            hint=hint,
            buildkit_only=buildkit_only,
        )

    def _ms(self) -> int:
        return _ms(anyio.current_time() - self.started)


async def _build_one(
    engine: Engine,
    loaded: LoadedConfig,
    svc: ServiceConfig,
    spec: BuildSpec,
    reporter: Reporter,
    ids: dict[str, str],
) -> ServiceBuild:
    outcome = _Outcome(svc, spec.image, reporter, loaded.redactor)
    try:
        ids[svc.name] = await engine.build(spec, outcome.line)
    except PreflightError as exc:
        if exc.code not in ("BUILD_FAILED", "DOCKER_ERROR") or (exc.code == "DOCKER_ERROR" and exc.retryable):
            raise  # the daemon went away (or worse): not a build failure
        found = (exc.details or {}).get("buildkitOnly")
        lines = msgspec.convert(found, list[DockerfileLine]) if found else None
        return outcome.failure(
            "built", exc.message, hint=exc.hint_for() if lines else None, buildkit_only=lines
        )
    return outcome.success("built")


async def _use_image(
    engine: Engine,
    loaded: LoadedConfig,
    svc: ServiceConfig,
    *,
    pull: bool,
    reporter: Reporter,
    pulling: Callable[[], None],
) -> ServiceBuild:
    outcome = _Outcome(svc, svc.build.image, reporter, loaded.redactor)
    if await engine.inspect_image(svc.build.image) is not None:
        # Built a moment ago for another service (a job on the same image), or present locally.
        shared = any(s.build.image == svc.build.image and s.build.dockerfile for s in loaded.services)
        return outcome.success("built" if shared else "local")
    if not pull and svc.build.pull != "missing":
        return outcome.failure(
            "none", f"image {svc.build.image} is not present locally (this service has no Dockerfile)"
        )
    pulling()
    try:
        await engine.pull(svc.build.image, outcome.line)
    except PreflightError as exc:
        return outcome.failure("pulled", exc.message.removeprefix(f"cannot pull {svc.build.image}: "))
    return outcome.success("pulled")


def _failure(failed: list[ServiceBuild], result: BuildResult) -> InfrastructureError:
    first = failed[0]
    names = ", ".join(f.name for f in failed)
    if first.source == "none":
        return InfrastructureError(
            f"image {first.image} of service `{first.name}` is not present locally",
            code="NOT_BUILT",
            hint="build or pull it yourself, add a `build.dockerfile`, or call `build` with pull=true to pull it",
            details=_details(result),
        )
    if first.source == "pulled":
        return InfrastructureError(
            f"image {first.image} of service `{first.name}` could not be pulled: {first.error}",
            code="NOT_BUILT",
            hint="provide the image another way: build it (a `build:` with a Dockerfile), `docker load -i "
            "<file>.tar` it, or push it to a registry this engine reaches (a local one: `image: "
            "localhost:5000/<name>`)",
            details=_details(result),
        )
    return InfrastructureError(
        f"build failed for {names}: {first.error}",
        code="BUILD_FAILED",
        hint=first.hint or "details.services[].logTail holds the last 30 lines of each failed build",
        details=_details(result),
    )


def _details(result: BuildResult) -> dict[str, object]:
    data = result.to_dict()
    return {"services": data["services"], "totalDuration": data["totalDuration"]}


def _ms(seconds: float) -> int:
    return int(seconds * 1000)
