"""Results of init, build, setup, status, logs and clean (the shapes of seed 000, extended).

Durations and uptimes are whole milliseconds; timestamps are ISO 8601 strings in UTC.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .base import Part, Result
from .recording import MockRecording

__all__ = [
    "BuildProgress",
    "BuildResult",
    "CleanAction",
    "CleanResult",
    "ContainerStatus",
    "DockerfileLine",
    "EnvironmentUse",
    "InitMock",
    "InitResult",
    "InitService",
    "InitSuite",
    "LifecycleState",
    "LogLine",
    "LogsResult",
    "MockSetup",
    "MockStatus",
    "NetworkSetup",
    "NetworkStatus",
    "PortMapping",
    "PortStatus",
    "ProbeOutcome",
    "Readiness",
    "ResetHow",
    "ServiceAction",
    "ServiceBuild",
    "ServiceSetup",
    "ServiceStatus",
    "SetupResult",
    "StatusResult",
]

LifecycleState = Literal["initialized", "built", "running", "stopped"]
ContainerStatus = Literal[
    "created", "running", "paused", "restarting", "removing", "exited", "dead", "missing", "unknown"
]


# -- init -------------------------------------------------------------------------------------


class InitService(Part, frozen=True, kw_only=True):
    """A configured service."""

    name: str
    image: str
    ports: list[str]
    has_healthcheck: bool
    kind: Literal["service", "job"] = "service"
    depends_on: list[str] = msgspec.field(default_factory=list)
    builds: bool = True


class InitMock(Part, frozen=True, kw_only=True):
    """A configured mock."""

    name: str
    port: int
    route_count: int


class InitSuite(Part, frozen=True, kw_only=True):
    """A configured suite."""

    id: str
    name: str
    runner: str
    file: str | None = None


class InitResult(Result, frozen=True, kw_only=True):
    """What `init` loaded: the project, its services, mocks and suites, and the session state."""

    project_name: str
    config_path: str
    services: list[InitService]
    mocks: list[InitMock]
    suites: list[InitSuite]
    schema_version: str
    session_id: str
    state: LifecycleState
    reloaded: bool = False
    warnings: list[str] = msgspec.field(default_factory=list)


# -- build ------------------------------------------------------------------------------------


class DockerfileLine(Part, frozen=True, kw_only=True):
    """A line of a Dockerfile that only BuildKit builds (`RUN <<EOF`, `RUN --mount`, `# syntax=`).

    `line` (to `lastLine`, for a heredoc or continued lines) is 1-based; `needs` says what in it
    is BuildKit's, `instead` how to write it for Docker's legacy builder.
    """

    line: int
    text: str
    needs: str
    instead: str
    last_line: int | None = None


class ServiceBuild(Part, frozen=True, kw_only=True):
    """One service's image: built, found locally, pulled, or failed.

    A failed build's `hint` says what to do about it; `buildkitOnly` lists the lines of its
    Dockerfile that Docker's legacy builder (used when the client has no buildx) cannot build,
    the one its error is about first.
    """

    name: str
    image: str
    status: Literal["success", "failed", "skipped"]
    duration: int
    source: Literal["built", "local", "pulled", "none"] = "built"
    error: str | None = None
    log_tail: list[str] | None = None
    hint: str | None = None
    buildkit_only: list[DockerfileLine] | None = None


class BuildProgress(Part, frozen=True, kw_only=True):
    """Where a build or setup that outlasted its `wait` budget stands: it goes on, follow it with get_run."""

    status: Literal["queued", "running"]
    phase: str | None = None
    done: int = 0
    total: int = 0


class BuildResult(Result, frozen=True, kw_only=True):
    """The outcome of `build`, per service.

    When the build outlasts the call's `wait`, `pending` says so and `services` holds what has
    finished so far; `runId` then names the run to follow with get_run.
    """

    services: list[ServiceBuild]
    total_duration: int
    run_id: str | None = None
    pending: BuildProgress | None = None


# -- setup ------------------------------------------------------------------------------------


class PortMapping(Part, frozen=True, kw_only=True):
    """A published port: host side and container side."""

    host: int
    container: int


class ProbeOutcome(Part, frozen=True, kw_only=True):
    """One readiness probe: when (ms after the container started), and what it found."""

    at: int
    ok: bool
    detail: str


class Readiness(Part, frozen=True, kw_only=True):
    """How a service was found ready: which probe, how many attempts, how long.

    `probe` is `http` (GET on the health path), `tcp` (connect), `port` (connect to the first
    published port, for services without a health check), `docker` (Docker's own health check,
    from a compose file), `running` (nothing to probe), or `exit` (a job that must finish with
    status 0).
    """

    probe: Literal["http", "tcp", "port", "docker", "running", "exit"]
    target: str
    attempts: int
    ready: bool
    time_to_ready: int | None = None
    last_outcomes: list[ProbeOutcome] = msgspec.field(default_factory=list)


# What setup did with a service, as its plan decided (docs/setup-plan.md): kept the running
# container (`reused`), built its image and created or replaced the container (`rebuilt`),
# replaced it from the same image (`recreated`), created it (`started`), or brought the kept
# one back to its state after setup because a run used it (`reset`, how in `reset`).
ServiceAction = Literal["reused", "rebuilt", "recreated", "started", "reset"]
# How a service was reset: its container recreated, a command run in it, jobs run again, or its
# named volumes restored from the snapshot taken at setup (then the container recreated).
ResetHow = Literal["recreate", "exec", "jobs", "snapshot"]


class ServiceSetup(Part, frozen=True, kw_only=True):
    """One service (or job) of the environment: how it was brought up, and why (`action`, `reason`)."""

    name: str
    container_id: str
    container_name: str
    status: Literal["running", "healthy", "unhealthy", "failed", "completed"]
    ports: list[PortMapping]
    readiness: Readiness
    url: str | None = None
    health_check_duration: int | None = None
    error: str | None = None
    action: ServiceAction | None = None
    reason: str | None = None
    reset: ResetHow | None = None

    @property
    def done(self) -> str:
        """What was done with the service before the suites, in a word or two (`reset (exec)`)."""
        if self.action == "reset" and self.reset is not None:
            return f"reset ({self.reset})"
        return self.action or "started"


class EnvironmentUse(Part, frozen=True, kw_only=True):
    """A kept environment's use: the run that set it up, how many runs it served before this one,
    and why it was reset first (`reset`: e.g. "served run 01J… since setup"; absent: it was not)."""

    set_up_by: str | None = None
    runs_served: int = 0
    reset: str | None = None

    def describe(self) -> str:
        """One line: kept, set up by which run, how many runs it served, reset first or not."""
        by = f"set up by run {self.set_up_by}" if self.set_up_by else "set up outside a run"
        served = f"served {self.runs_served} run{'' if self.runs_served == 1 else 's'} before this one"
        reset = f"reset first ({self.reset})" if self.reset else "not reset"
        return f"environment: kept, {by}, {served}, {reset}"


class MockSetup(Part, frozen=True, kw_only=True):
    """One started mock; `hosts`: the real host names it answers over HTTPS (port 443) for containers."""

    name: str
    port: int
    status: Literal["running", "failed"]
    route_count: int
    url: str
    action: Literal["started", "reused", "reloaded"] | None = None
    hosts: list[str] = msgspec.field(default_factory=list)


class NetworkSetup(Part, frozen=True, kw_only=True):
    """The project's private network."""

    name: str
    created: bool


class SetupResult(Result, frozen=True, kw_only=True):
    """The environment `setup` started: network, mocks and services, each ready.

    When setup outlasts the call's `wait`, `pending` says so (and `network` is absent); `runId`
    then names the run to follow with get_run.
    """

    services: list[ServiceSetup]
    mocks: list[MockSetup]
    total_duration: int
    network: NetworkSetup | None = None
    run_id: str | None = None
    pending: BuildProgress | None = None
    warnings: list[str] = msgspec.field(default_factory=list)
    environment: EnvironmentUse | None = None

    def environment_line(self) -> str:
        """One line: set up for this run (a new network), or kept and how it was used (see
        `EnvironmentUse.describe`)."""
        use = self.environment
        if use is None or (self.network is not None and self.network.created):
            return "environment: set up for this run"
        return use.describe()


# -- status -----------------------------------------------------------------------------------


class PortStatus(Part, frozen=True, kw_only=True):
    """A published port and whether a TCP connect to it from the host succeeded just now."""

    host: int
    container: int
    accessible: bool


class ServiceStatus(Part, frozen=True, kw_only=True):
    """A service's container as Docker reports it now."""

    name: str
    status: ContainerStatus
    ports: list[PortStatus]
    container_id: str | None = None
    container_name: str | None = None
    health: Literal["healthy", "unhealthy", "starting", "none"] | None = None
    uptime: int | None = None
    exit_code: int | None = None
    url: str | None = None


class MockStatus(Part, frozen=True, kw_only=True):
    """A mock and how many requests it has recorded."""

    name: str
    port: int
    status: Literal["running", "stopped"]
    request_count: int
    url: str | None = None


class NetworkStatus(Part, frozen=True, kw_only=True):
    """The project's network and whether it exists."""

    name: str
    exists: bool


class StatusResult(Result, frozen=True, kw_only=True):
    """The project's state and what is running, read from Docker (works from any process)."""

    state: LifecycleState
    services: list[ServiceStatus]
    mocks: list[MockStatus]
    session_id: str | None = None
    network: NetworkStatus | None = None
    owner_pid: int | None = None
    warnings: list[str] = msgspec.field(default_factory=list)


# -- logs -------------------------------------------------------------------------------------


class LogLine(Part, frozen=True, kw_only=True):
    """One log line with its stream and Docker timestamp."""

    timestamp: str
    stream: Literal["stdout", "stderr"]
    text: str


class LogsResult(Result, frozen=True, kw_only=True):
    """A container's recent output: stdout and stderr in the daemon's time order.

    Each line is whole (Docker's 16 KB fragments joined) and comes once, with its stream and
    timestamp. `truncated` says lines were left out or cut to keep the reply bounded.
    """

    container: str
    lines: list[LogLine]
    line_count: int
    container_status: ContainerStatus
    truncated: bool = False


# -- clean ------------------------------------------------------------------------------------


class CleanAction(Part, frozen=True, kw_only=True):
    """What clean did to one resource, truthfully."""

    name: str
    action: Literal["removed", "not_found", "force_removed", "failed", "stopped", "not_running"]
    error: str | None = None


class CleanResult(Result, frozen=True, kw_only=True):
    """Everything clean removed (found by label, not only by memory); `recordings`: the routes
    written by a recording that `setup(record=...)` began and the clean ended."""

    containers: list[CleanAction]
    mocks: list[CleanAction]
    network: CleanAction | None
    networks: list[CleanAction]
    session_removed: bool
    images: list[CleanAction] = msgspec.field(default_factory=list)
    recordings: list[MockRecording] = msgspec.field(default_factory=list)
