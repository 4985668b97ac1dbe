"""A small stand-in for `Project`: the planned operation signatures, with observable behaviour.

Every instance records its calls, so tests can check what a face passed (arguments, the progress
sink) without Docker. `Gate` lets a test hold an operation open until it has seen progress or
cancelled it.
"""

from __future__ import annotations

import os
import signal
from typing import Any, ClassVar, Literal

import anyio
import msgspec

from preflight_sdk.core.errors import ConfigError, EnvironmentError_, InputError, StateError
from preflight_sdk.core.operations import operation
from preflight_sdk.core.progress import ProgressArg, ProgressEvent
from preflight_sdk.core.results.base import Result
from preflight_sdk.faces.mcp.aliases import AliasSpec


class Echo(Result, frozen=True, kw_only=True):
    """What an operation received."""

    operation: str
    path: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)


class State(Result, frozen=True, kw_only=True):
    """The lifecycle state."""

    state: Literal["initialized", "built", "running", "stopped"]


class Outcome(Result, frozen=True, kw_only=True):
    """A run: `passed` false makes the result not ok."""

    run_id: str
    passed: bool
    failed_cases: int = 0

    @property
    def ok(self) -> bool:
        return self.passed


class AskInput(msgspec.Struct, frozen=True, kw_only=True):
    """Arguments of the `ask_question` alias (another project's shape).

    Attributes:
        user_intention: what the user wants.
        repo_path: the repository (default: the server's project).
    """

    user_intention: str
    repo_path: str | None = None


class AskReply(msgspec.Struct, frozen=True, kw_only=True):
    """Reply of the `ask_question` alias."""

    status: Literal["completed"]
    summary: str


ASK = AliasSpec(
    name="ask_question",
    input_type=AskInput,
    to_kwargs=lambda a, base: {"intention": a.user_intention, "project_path": a.repo_path},
    output_type=AskReply,
    from_result=lambda r: AskReply(status="completed", summary=f"asked: {r.arguments['intention']}"),
    description="Ask a question (the shape another server used).",
    from_error=lambda e: {"status": "error", "error": {"code": e.code, "recovery_hint": e.hint}},
)

COUNT = AliasSpec(
    name="count_words",
    input_type=AskInput,
    to_kwargs=lambda a, base: {"intention": a.user_intention},
    output_type=int,
    from_result=lambda r: len(str(r.arguments["intention"]).split()),
    description="Count the words of an intention.",
    group="words",
)


class Gate:
    """Lets a test wait until an operation runs, and see whether it was cancelled."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()


class Demo:
    """A project stand-in with the planned signatures."""

    __mcp_aliases__: ClassVar[dict[str, tuple[AliasSpec, ...]]] = {"clarify": (ASK, COUNT)}

    gate: Gate | None = None
    running = False

    def __init__(self, path: str, config_file: str | None = None) -> None:
        self.path = path
        self.config_file = config_file
        self.calls: list[tuple[str, dict[str, object]]] = []
        self.sinks: list[object] = []

    def _echo(self, name: str, **arguments: object) -> Echo:
        self.calls.append((name, arguments))
        return Echo(operation=name, path=self.path, arguments=arguments)

    @operation(title="Load the project", idempotent=True, group="environment")
    async def init(self) -> Echo:
        """Load and validate the project's configuration.

        Returns:
            What was loaded.

        Example:
            `await demo.init()`

        Tips:
            Call it again after editing the file.
        """
        if self.path.endswith("broken"):
            raise ConfigError("e2e.yaml is invalid", hint="fix it", details={"problems": []})
        return self._echo("init", config_file=self.config_file)

    @operation(title="Build images", group="environment")
    async def build(
        self,
        no_cache: bool = False,
        service: str | None = None,
        pull: bool = False,
        progress: ProgressArg = None,
    ) -> Echo:
        """Build the images.

        Args:
            no_cache: build without the layer cache.
            service: build only this service.
            pull: pull base images first.
            progress: where progress goes.
        """
        self.sinks.append(progress)
        if service == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
            await anyio.sleep_forever()
        if callable(progress):
            for index in range(1, 4):
                progress(ProgressEvent(kind="log", message=f"step {index}", scope="api"))
        return self._echo("build", no_cache=no_cache, service=service, pull=pull)

    @operation(title="Start the environment", idempotent=True, group="environment")
    async def setup(self, timeout: str | None = None, progress: ProgressArg = None) -> Echo:
        """Start the environment.

        Args:
            timeout: health deadline, e.g. `90s`.
            progress: where progress goes.
        """
        self.sinks.append(progress)
        if timeout == "sigterm":  # delivered at the caller's next await: once the environment is up
            os.kill(os.getpid(), signal.SIGTERM)
        if self.gate is not None:
            self.gate.entered.set()
            try:
                await self.gate.release.wait()
            except anyio.get_cancelled_exc_class():
                self.gate.cancelled.set()
                raise
        return self._echo("setup", timeout=timeout)

    @operation(title="Run the suites", group="runs")
    async def run(
        self,
        filter: str | None = None,
        parallel: bool | None = None,
        keep: bool = True,
        fresh: bool = False,
        progress: ProgressArg = None,
    ) -> Outcome:
        """Run the suites.

        Args:
            filter: suite ids, comma-separated.
            parallel: override the parallel setting.
            keep: leave the environment up.
            fresh: rebuild from nothing.
            progress: where progress goes.
        """
        self.calls.append(("run", {"filter": filter, "parallel": parallel, "keep": keep, "fresh": fresh}))
        if filter == "docker-down":
            raise EnvironmentError_("Docker went away", hint="start Docker")
        if filter == "interrupt":
            raise KeyboardInterrupt
        if filter == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
            await anyio.sleep_forever()
        if callable(progress):
            progress(ProgressEvent(kind="case", message="case a", done=1, total=2))
            progress(ProgressEvent(kind="case", message="case b", done=2, total=2))
        return Outcome(run_id="r-1", passed=filter != "failing", failed_cases=int(filter == "failing"))

    @operation(title="Run one suite", group="runs")
    async def run_suite(self, suite_id: str, progress: ProgressArg = None) -> Outcome:
        """Run one suite.

        Args:
            suite_id: the suite's id.
            progress: where progress goes.
        """
        if suite_id == "nope":
            raise InputError("no suite `nope`", code="SUITE_NOT_FOUND", hint="one of: smoke")
        return Outcome(run_id="r-2", passed=True)

    @operation(title="Show the status", read_only=True, group="environment")
    async def status(self) -> State:
        """Show the state of the environment."""
        self.calls.append(("status", {}))
        return State(state="running" if self.running else "initialized")

    @operation(title="Read logs", read_only=True, group="environment")
    async def logs(
        self,
        container: str,
        lines: int = 100,
        since: str | None = None,
        follow: bool = False,
        progress: ProgressArg = None,
    ) -> Echo:
        """Read a container's logs.

        Args:
            container: service or container name.
            lines: how many lines from the end.
            since: only lines newer than this (`5m`).
            follow: keep streaming.
            progress: where progress goes.
        """
        if container == "docker-down":
            raise EnvironmentError_("Docker does not answer", hint="start Docker")
        if container == "bug":
            raise KeyError("boom")
        if container == "unhinted":
            raise StateError("the environment is not running")
        return self._echo("logs", container=container, lines=lines, since=since, follow=follow)

    @operation(title="Clean up", destructive=True, idempotent=True, group="environment")
    async def clean(self, force: bool = True) -> Echo:
        """Remove everything the environment started.

        Args:
            force: force-remove stuck containers.
        """
        return self._echo("clean", force=force)

    @operation(title="Clarify an intention", read_only=True, group="clarify")
    async def clarify(
        self,
        intention: str,
        answers: dict[str, str | list[str]] | None = None,
        session_id: str | None = None,
        force_adr: bool = False,
    ) -> Echo:
        """Clarify an intention.

        Args:
            intention: what the user wants.
            answers: answers by question id.
            session_id: the session to continue.
            force_adr: always write an ADR.
        """
        return self._echo(
            "clarify", intention=intention, answers=answers, session_id=session_id, force_adr=force_adr
        )

    async def _private(self) -> None:
        """Not an operation."""

    def sync_helper(self) -> None:
        """Not a coroutine."""
