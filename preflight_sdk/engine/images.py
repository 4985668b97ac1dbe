"""`Images`: the engine's images part (pull, build with buildx or the legacy builder, inspect, list,
remove), through the client's command line on every engine, except inspecting an image and tidying
the one a rebuild replaced: requests of the engine's lane (on this machine's socket, one each).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from functools import partial
from typing import Any, Literal

from preflight_sdk.core.errors import InfrastructureError

from . import cli
from .base import BuildSpec, EngineInfo, ImageInfo, LineSink, RemoveOutcome
from .buildkit import legacy_build_error
from .errors import first_line, is_daemon_down, pull_error, translate
from .lane import ImageObject, Lane
from .output import BuildLines
from .whales import CliLane, translated

__all__ = ["LABEL_MANAGED", "Images"]

_BUILD_TAIL = 30
LABEL_MANAGED = "preflight.managed"  # on every image preflight builds (and its containers)
_BUILDER_CACHE: dict[tuple[str, ...], Literal["buildx", "legacy"]] = {}


class Images:
    """The images of one engine (the `Engine` methods of the same names): `lane` for inspecting, `cli`
    for everything else, `info` for its facts."""

    def __init__(self, lane: Lane, cli: CliLane, info: Callable[[], Awaitable[EngineInfo]]) -> None:
        self.lane = lane
        self.cli = cli
        self.info = info

    async def _builder(self, info: EngineInfo) -> Literal["buildx", "legacy"]:
        """buildx when the CLI has the plugin, else the legacy builder (asked once per process)."""
        if info.builder is not None:
            return info.builder
        key = self.cli.key()
        if key not in _BUILDER_CACHE:
            client = await self.cli.client()
            try:
                await self.cli.call(client.buildx.version, action="ask the daemon")
                _BUILDER_CACHE[key] = "buildx"
            except InfrastructureError:
                _BUILDER_CACHE[key] = "legacy"
        return _BUILDER_CACHE[key]

    async def inspect_image(self, ref: str) -> ImageInfo | None:
        found = await self.lane.inspect(ImageObject, [ref])
        if not found:
            return None
        image = found[0]
        labels = image.config.labels if image.config else None
        return ImageInfo(id=image.id, labels=dict(labels or {}), tags=list(image.repo_tags or []))

    async def pull(self, ref: str, on_line: LineSink) -> None:
        # The client's command line, as a child that cancelling kills: `image.pull(stream_logs=True)`
        # starts the CLI from a thread pool of its own, out of reach of a cancel.
        lines = BuildLines(on_line, tail=_BUILD_TAIL)
        try:
            argv = await self.cli.cmd("image", "pull", ref)
            async for source, raw in self.cli.stream(argv, action=f"pull {ref}", subject=ref):
                lines.feed(raw, source)
        except InfrastructureError:
            lines.flush()
            raise pull_error(ref, lines.tail, lines.last_error) from None

    async def build(self, spec: BuildSpec, on_line: LineSink) -> str:
        from python_on_whales.exceptions import DockerException

        info = await self.info()
        builder = await self._builder(info)
        before = await self.inspect_image(spec.image)
        lines = BuildLines(on_line, tail=_BUILD_TAIL, legacy=builder == "legacy")
        # Docker's legacy builder turns each label into a build step (about 70 ms apiece);
        # buildah (Podman) sets them all on the image it commits at the end.
        labels = dict(spec.labels) if builder == "buildx" or info.name == "podman" else {}
        # The client's command line, as a child that cancelling kills: `buildx.build` and
        # `image.legacy_build` run out of reach of a cancel, and the latter prints its output and
        # has no `--force-rm` (else a failed step's intermediate container is kept).
        if builder == "buildx":
            argv = ["buildx", "build", "--progress", "plain", "--load"]
            env = {"DOCKER_CLI_EXPERIMENTAL": "enabled"}
        else:
            argv, env = ["build", "--force-rm"], {"DOCKER_BUILDKIT": "0"}
        argv += ["--file", spec.dockerfile, "--tag", spec.image]
        argv += ["--no-cache"] if spec.no_cache else []
        argv += ["--target", spec.target] if spec.target else []
        argv += [a for k, v in spec.args.items() for a in ("--build-arg", f"{k}={v}")]
        argv += [a for k, v in labels.items() for a in ("--label", f"{k}={v}")]
        command = await self.cli.cmd(*argv, spec.context)
        failure: DockerException | None = None
        try:
            with translated(f"build {spec.image}", spec.image, keep=DockerException):
                async with aclosing(cli.lines(command, env=env)) as pairs:
                    async for source, raw in pairs:
                        lines.feed(raw, source)
        except DockerException as exc:
            failure = exc
        lines.flush()
        if failure is None:
            after = await self.inspect_image(spec.image)
            if after is None:
                return ""  # removed already, by someone else: the next run builds it again
            if before is not None and _replaced(spec, before, after):
                # Left without a tag, it goes (with its untagged parents); one in use stays.
                old = await self.inspect_image(before.id)
                if old is not None and not old.tags:
                    await self.lane.remove("image", [old.id])
            return after.id
        tail = lines.tail
        error = translate(
            "\n".join(tail) or (failure.stderr or ""), action=f"build {spec.image}", subject=spec.image
        )
        # Only an unreachable daemon is retryable: any other docker failure is the build's.
        if error.code == "DOCKER_ERROR" and not error.retryable:
            said = lines.last_error or (tail[-1] if tail else "no output")
            if builder == "legacy" and info.name != "podman":
                legacy = await legacy_build_error(spec, said, failure.return_code, tail)
                if legacy is not None:
                    raise legacy from failure
            raise InfrastructureError(
                f"docker build of {spec.image} failed (exit {failure.return_code}): {said}",
                code="BUILD_FAILED",
                hint="read details.logTail (the last 30 lines of the build); fix the Dockerfile or the context",
                details={
                    "image": spec.image,
                    "dockerfile": spec.dockerfile,
                    "exitCode": failure.return_code,
                    "logTail": list(tail),
                },
            ) from failure
        raise error from failure

    async def list_images(self, labels: Mapping[str, str]) -> list[ImageInfo]:
        client = await self.cli.client()
        filters: Any = [("label", f"{key}={value}") for key, value in labels.items()]

        def ask() -> list[ImageInfo]:
            # `image.list` gives ids; each image's tags are one inspect (a project has a few).
            return [
                ImageInfo(
                    id=str(image.id), labels=dict(image.config.labels or {}), tags=list(image.repo_tags or [])
                )
                for image in client.image.list(filters=filters)
            ]

        return sorted(await self.cli.call(ask, action="list images"), key=lambda i: (i.tags, i.id))

    async def remove_images(self, refs: Sequence[str]) -> list[RemoveOutcome]:
        """Remove images (not forced: an image a container still uses stays, reported as failed)."""
        from python_on_whales.exceptions import DockerException, NoSuchImage

        client = await self.cli.client()

        def remove(ref: str) -> RemoveOutcome:
            try:
                client.image.remove(ref, prune=True)
            except NoSuchImage:
                return RemoveOutcome(ref=ref, action="not_found")
            except DockerException as exc:
                if is_daemon_down(exc.stderr or ""):
                    raise
                return RemoveOutcome(ref=ref, action="failed", error=first_line(exc.stderr or str(exc)))
            return RemoveOutcome(ref=ref, action="removed")

        # One at a time: `docker rmi` of many stops at the first in use.
        return [await self.cli.call(partial(remove, ref), action="remove images") for ref in refs]


def _replaced(spec: BuildSpec, before: ImageInfo, after: ImageInfo) -> bool:
    """Whether the image a rebuild took the tag from (left dangling, `<none>`) is preflight's to tidy:
    it carries the managed label, or is the one `spec.replaces` names."""
    if after.id == before.id:
        return False
    return before.labels.get(LABEL_MANAGED) == "true" or before.id == spec.replaces
