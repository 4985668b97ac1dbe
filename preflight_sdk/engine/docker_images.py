"""Images on a Docker daemon: inspect, pull, build (buildx or the legacy builder), list and remove."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import aclosing
from functools import partial
from typing import Any, Literal

from ..errors import EnvironmentError_
from . import cli
from .api import quoted
from .base import BuildSpec, EngineInfo, ImageInfo, LineSink, RemoveOutcome
from .docker_calls import DockerCalls, first_line, translated
from .errors import is_daemon_down, translate
from .output import BuildLines

__all__ = ["LABEL_MANAGED", "DockerImages"]

_BUILD_TAIL = 30
LABEL_MANAGED = "preflight.managed"  # on every image preflight builds (and its containers)
_BUILDER_CACHE: dict[tuple[str, ...], Literal["buildx", "legacy"]] = {}


class DockerImages(DockerCalls):
    """The image half of `DockerEngine`."""

    async def info(self) -> EngineInfo:
        """The daemon's facts (`DockerEngine.info`); a build asks them first."""
        raise NotImplementedError

    async def _builder(self, info: EngineInfo) -> Literal["buildx", "legacy"]:
        """buildx when the CLI has the plugin, else the legacy builder (asked once per process)."""
        if info.builder is not None:
            return info.builder
        key = self._info_key()
        if key not in _BUILDER_CACHE:
            client = await self._whales()
            try:
                await self._call(client.buildx.version, action="ask the daemon")
                _BUILDER_CACHE[key] = "buildx"
            except EnvironmentError_:
                _BUILDER_CACHE[key] = "legacy"
        return _BUILDER_CACHE[key]

    async def image_exists(self, ref: str) -> bool:
        client = await self._whales()
        exists: bool = await self._call(
            lambda: client.image.exists(ref), action=f"inspect image {ref}", subject=ref
        )
        return exists

    async def image_id(self, ref: str) -> str | None:
        """Return the id of image `ref`, or None when there is none."""
        from python_on_whales.exceptions import NoSuchImage

        if (api := self._api()) is not None:
            found = await api.api.inspect("image", ref)
            return None if found is None else str(found.get("Id", ""))
        client = await self._whales()

        def ask() -> str | None:
            try:
                return str(client.image.inspect(ref).id)
            except NoSuchImage:
                return None

        return await self._call(ask, action=f"inspect image {ref}", subject=ref)

    async def inspect_image(self, ref: str) -> ImageInfo | None:
        from python_on_whales.exceptions import NoSuchImage

        if (api := self._api()) is not None:
            found = await api.api.inspect("image", ref)
            if found is None:
                return None
            labels = (found.get("Config") or {}).get("Labels") or {}
            return ImageInfo(
                id=str(found.get("Id", "")), labels=dict(labels), tags=list(found.get("RepoTags") or [])
            )
        client = await self._whales()

        def ask() -> ImageInfo | None:
            try:
                image = client.image.inspect(ref)
            except NoSuchImage:
                return None
            return ImageInfo(
                id=str(image.id), labels=dict(image.config.labels or {}), tags=list(image.repo_tags or [])
            )

        return await self._call(ask, action=f"inspect image {ref}", subject=ref)

    async def pull(self, ref: str, on_line: LineSink) -> None:
        # The client's command line: `image.pull(stream_logs=True)` starts the CLI from a thread
        # pool of its own, out of reach of the cancellation of this call.
        argv = await self._cmd("image", "pull", ref)
        lines = BuildLines(on_line, tail=_BUILD_TAIL)
        try:
            async for source, raw in self._stream(argv, action=f"pull {ref}", subject=ref):
                lines.feed(raw, source)
        except EnvironmentError_:
            raise translate("\n".join(lines.tail), action=f"pull {ref}", subject=ref) from None

    def _labels_cost_steps(self, builder: Literal["buildx", "legacy"]) -> bool:
        """Whether each build label is a build step of its own (Docker's legacy builder)."""
        return builder == "legacy"

    async def build(self, spec: BuildSpec, on_line: LineSink) -> str:
        from python_on_whales.exceptions import DockerException

        builder = await self._builder(await self.info())
        before = await self.inspect_image(spec.image)
        lines = BuildLines(on_line, tail=_BUILD_TAIL, legacy=builder == "legacy")
        labels = {} if self._labels_cost_steps(builder) else dict(spec.labels)
        # The client's command line, run as a child that cancelling kills: `buildx.build` and
        # `image.legacy_build` run the CLI out of reach of a cancel, and the latter prints its
        # output instead of yielding it and has no `--force-rm` (the legacy builder otherwise
        # keeps the intermediate container of a failed step).
        if builder == "buildx":
            argv = await self._cmd(
                "buildx", "build", "--progress", "plain", "--load", "--file", spec.dockerfile
            )
            env = {"DOCKER_CLI_EXPERIMENTAL": "enabled"}
        else:
            argv = await self._cmd("build", "--force-rm", "-f", spec.dockerfile)
            env = {"DOCKER_BUILDKIT": "0"}
        argv += ["--tag", spec.image]
        argv += ["--no-cache"] if spec.no_cache else []
        argv += ["--target", spec.target] if spec.target else []
        argv += [a for k, v in spec.args.items() for a in ("--build-arg", f"{k}={v}")]
        argv += [a for k, v in labels.items() for a in ("--label", f"{k}={v}")]
        argv.append(spec.context)
        failure: DockerException | None = None
        try:
            with translated(f"build {spec.image}", spec.image, keep=DockerException):
                async with aclosing(cli.lines([str(a) for a in argv], env=env)) as pairs:
                    async for source, raw in pairs:
                        lines.feed(raw, source)
        except DockerException as exc:
            failure = exc
        lines.flush()
        if failure is None:
            after = await self.inspect_image(spec.image)
            if after is None:
                return ""  # removed already, by someone else: the next run builds it again
            await self._drop_replaced(spec, before, after)
            return after.id
        tail = lines.tail
        error = translate(
            "\n".join(tail) or (failure.stderr or ""), action=f"build {spec.image}", subject=spec.image
        )
        # Only an unreachable daemon is retryable: any other docker failure is the build's.
        if error.code == "DOCKER_ERROR" and not error.retryable:
            raise EnvironmentError_(
                f"docker build of {spec.image} failed (exit {failure.return_code}): "
                f"{lines.last_error or (tail[-1] if tail else 'no output')}",
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

    async def _drop_replaced(self, spec: BuildSpec, before: ImageInfo | None, after: ImageInfo) -> None:
        """Remove the image a build took the tag from, when preflight built it and nothing else names it.

        Rebuilding a tag (another checkout, changed labels or sources) leaves the former image
        dangling (`<none>`); one a container still uses stays, as Docker refuses to remove it.
        Preflight built it when it carries the managed label, or is the one `spec.replaces` names.
        """
        from python_on_whales.exceptions import DockerException

        if before is None or after.id == before.id:
            return
        if before.labels.get(LABEL_MANAGED) != "true" and before.id != spec.replaces:
            return
        ref = spec.image
        if (api := self._api()) is not None:
            # Two requests instead of two docker processes (about 45 ms) after each rebuild.
            found = await api.api.inspect("image", before.id)
            if found is not None and not found.get("RepoTags"):
                await api.api.send(
                    "DELETE", f"/images/{quoted(before.id)}", action=f"remove the image {ref} replaced"
                )
            return
        client = await self._whales()

        def drop() -> None:
            try:
                if not client.image.inspect(before.id).repo_tags:
                    client.image.remove(before.id, prune=True)
            except DockerException:
                pass  # in use by a container, or gone already: nothing to tidy

        await self._call(drop, action=f"remove the image {ref} replaced")

    async def list_images(self, labels: Mapping[str, str]) -> list[ImageInfo]:
        client = await self._whales()
        filters: Any = [("label", f"{key}={value}") for key, value in labels.items()]

        def ask() -> list[ImageInfo]:
            # `image.list` gives ids; each image's tags are one inspect (a project has a few).
            return [
                ImageInfo(
                    id=str(image.id), labels=dict(image.config.labels or {}), tags=list(image.repo_tags or [])
                )
                for image in client.image.list(filters=filters)
            ]

        return sorted(await self._call(ask, action="list images"), key=lambda i: (i.tags, i.id))

    async def remove_images(self, refs: Sequence[str]) -> list[RemoveOutcome]:
        """Remove images (not forced: an image a container still uses stays, reported as failed)."""
        from python_on_whales.exceptions import DockerException, NoSuchImage

        client = await self._whales()

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

        outcomes: list[RemoveOutcome] = []
        for ref in refs:  # one at a time: `docker rmi` of many stops at the first in use
            outcomes.append(await self._call(partial(remove, ref), action="remove images"))
        return outcomes
