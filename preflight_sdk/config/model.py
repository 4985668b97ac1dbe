"""The `e2e.yaml` format as msgspec Structs: the original Preflight schema, strict about unknown keys.

Keys are camelCase on disk (`dependsOn`, `startPeriod`) and snake_case in Python. Every Struct
forbids unknown fields, so a typo such as `healthCheck:` is reported with a did-you-mean instead of
silently vanishing. Field descriptions here become the JSON Schema under `docs/schema/`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, field

from ._meta import Duration
from .compat import (
    DashboardConfig,
    HistoryConfig,
    IsolationConfig,
    Preset,
    PresetEndpoint,
    RepoConfig,
    ResilienceConfig,
)
from .run_options import RunOptions

__all__ = [
    "BuildConfig",
    "ComposeConfig",
    "ContainerConfig",
    "ContractMode",
    "DashboardConfig",
    "DockerHealthcheckConfig",
    "HealthcheckConfig",
    "HistoryConfig",
    "IsolationConfig",
    "McpConfig",
    "McpToolDecl",
    "MockConfig",
    "MockResponse",
    "MockRoute",
    "MockWhen",
    "NetworkConfig",
    "ParallelConfig",
    "Preset",
    "PresetEndpoint",
    "ProjectConfig",
    "ProjectInfo",
    "RecordedOrigin",
    "RepoConfig",
    "ResetMode",
    "ResetSteps",
    "ResilienceConfig",
    "RetryPolicy",
    "Scalar",
    "ServedContract",
    "ServiceBody",
    "ServiceConfig",
    "ShellExpect",
    "SingleServiceConfig",
    "SuiteConfig",
    "TestsConfig",
]


Scalar = str | int | float | bool


class _Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """Base of every e2e.yaml section."""


class ProjectInfo(_Config, frozen=True, kw_only=True):
    """What the project is called; the name labels every container and network it starts."""

    name: Annotated[str, Meta(min_length=1, description="Project name, used in labels and network names.")]
    description: Annotated[str | None, Meta(description="Free text.")] = None
    version: Annotated[str | None, Meta(description="The project's own version (free text).")] = None


class BuildConfig(_Config, frozen=True, kw_only=True):
    """How to get the service's image: build it from a Dockerfile, or use an existing image."""

    image: Annotated[str, Meta(min_length=1, description="Image name and tag, e.g. `api:e2e`.")]
    dockerfile: Annotated[
        str | None,
        Meta(
            description="Dockerfile path, relative to the e2e.yaml directory (or to `context`). "
            "Leave it out to use `image` as it is (it must exist locally, or be pulled on request)."
        ),
    ] = None
    context: Annotated[str, Meta(description="Build context, relative to the e2e.yaml directory.")] = "."
    args: Annotated[dict[str, Scalar], Meta(description="Build arguments (`--build-arg K=V`).")] = field(
        default_factory=dict
    )
    target: Annotated[str | None, Meta(description="Multi-stage build target.")] = None
    pull: Annotated[
        Literal["missing", "never"],
        Meta(
            description="`missing` pulls `image` when it is not present locally (compose's default for "
            "an image without a build); `never` (the default) asks for it to be built or pulled first."
        ),
    ] = "never"


class HealthcheckConfig(_Config, frozen=True, kw_only=True):
    """How preflight decides the service is ready: probed from the host, never inside the image.

    `path` probes HTTP on the host port mapped to `port` (default: the first container port) and is
    ready on a status below 400; `tcp` only connects to the host port mapped to that container port.
    Without either, an open mapped port means ready.
    """

    path: Annotated[str | None, Meta(description="HTTP path to GET, e.g. `/health`; ready on a 2xx/3xx.")] = (
        None
    )
    tcp: (
        Annotated[int, Meta(ge=1, le=65535, description="Container port that must accept TCP connections.")]
        | None
    ) = None
    port: (
        Annotated[
            int, Meta(ge=1, le=65535, description="Container port for the HTTP probe (default: first port).")
        ]
        | None
    ) = None
    interval: Annotated[str | int, Duration("Kept for compatibility; probing is adaptive (from ~20 ms).")] = (
        "10s"
    )
    timeout: Annotated[str | int, Duration("Timeout of one probe.")] = "5s"
    retries: Annotated[
        int, Meta(ge=0, description="With `startPeriod` and `interval`, sets the readiness deadline.")
    ] = 10
    start_period: Annotated[str | int, Duration("Grace time before failed probes count.")] = "30s"


class DockerHealthcheckConfig(_Config, frozen=True, kw_only=True):
    """A health check Docker runs inside the container (as compose's `healthcheck`)."""

    test: Annotated[
        list[str],
        Meta(min_length=2, description="`[CMD, program, args...]` or `[CMD-SHELL, command]`."),
    ]
    interval: Annotated[str | int, Duration("Time between checks.")] = "1s"
    timeout: Annotated[str | int, Duration("Timeout of one check.")] = "30s"
    retries: Annotated[int, Meta(ge=1, description="Failures in a row that make it unhealthy.")] = 3
    start_period: Annotated[str | int, Duration("Grace time before failures count.")] = "0s"


class ContainerConfig(_Config, frozen=True, kw_only=True):
    """How the service's container runs."""

    name: Annotated[str | None, Meta(description="Container name; also its network alias.")] = None
    ports: Annotated[
        list[str],
        Meta(
            description="Published ports `host:container` (`0:8080` picks a free host port) or `container`."
        ),
    ] = field(default_factory=list)
    environment: Annotated[dict[str, Scalar], Meta(description="Environment variables.")] = field(
        default_factory=dict
    )
    volumes: Annotated[
        list[str],
        Meta(description="Volumes `src:dst[:ro]`; a relative `src` is relative to the e2e.yaml directory."),
    ] = field(default_factory=list)
    healthcheck: Annotated[
        HealthcheckConfig | None, Meta(description="Readiness probe, run from the host.")
    ] = None
    command: Annotated[
        str | list[str] | None, Meta(description="Override the image's command (a list is used as argv).")
    ] = None
    entrypoint: Annotated[
        str | list[str] | None,
        Meta(
            description="Override the image's entrypoint (a list: the program, then arguments before `command`)."
        ),
    ] = None
    working_dir: Annotated[str | None, Meta(description="Working directory inside the container.")] = None
    user: Annotated[str | None, Meta(description="User to run as (`uid[:gid]` or a name).")] = None
    aliases: Annotated[list[str], Meta(description="Extra network aliases.")] = field(default_factory=list)
    init: Annotated[bool, Meta(description="Run an init process as PID 1 (`docker run --init`).")] = False
    read_only: Annotated[bool, Meta(description="Mount the container's root filesystem read-only.")] = False
    docker_healthcheck: Annotated[
        DockerHealthcheckConfig | None,
        Meta(
            description="Docker's own health check, run inside the container; setup waits until Docker "
            "reports it healthy. Prefer `healthcheck` (probed from the host, much faster) where it fits."
        ),
    ] = None
    options: Annotated[
        RunOptions, Meta(description="Further `docker run` options: capabilities, sysctls, limits, tmpfs...")
    ] = field(default_factory=RunOptions)


class ResetSteps(_Config, frozen=True, kw_only=True):
    """A reset done in place: a command run in the running container, or jobs run again. Exactly one."""

    exec: Annotated[
        str | list[str] | None,
        Meta(
            description="Run this in the running container (a string goes to `sh -c`, a list is argv); "
            "it must exit 0, e.g. `psql -U postgres -c 'TRUNCATE orders RESTART IDENTITY'`."
        ),
    ] = None
    jobs: Annotated[
        list[str] | None,
        Meta(
            description="Jobs (`kind: job`) to run again, in dependency order, e.g. `[seed]` for a seed "
            "that empties and refills its tables.",
        ),
    ] = None
    timeout: (
        Annotated[
            str | int,
            Duration(
                "How long `exec` may run; past it the reset fails, the command is killed and the "
                "service's container is recreated by the next run (default 60s)."
            ),
        ]
        | None
    ) = None


# How a kept service gets back to the state it had when set up, before each run that follows
# another (docs/e2e-yaml.md, "Reset between runs"): `auto` (the default) recreates its container,
# restoring its named volumes from the snapshot taken at setup when it has any.
ResetMode = Literal["auto", "recreate", "snapshot", "none"]


class ServedContract(_Config, frozen=True, kw_only=True):
    """A contract the running service serves itself, read after setup."""

    served: Annotated[str, Meta(pattern=r"^/", description="The path it is served at, e.g. `/openapi.json`.")]


# What a contract violation does: fail its case (the default), be a warning of its suite while a
# team adopts the contract, or nothing at all (`off`).
ContractMode = Literal["fail", "warn", "off"]


class _ServiceFields(_Config, frozen=True, kw_only=True):
    """What every form of a service has: its image, its container, its vars and its reset."""

    build: Annotated[BuildConfig, Meta(description="Image to build or use.")]
    container: Annotated[ContainerConfig, Meta(description="How the container runs.")] = field(
        default_factory=ContainerConfig
    )
    vars: Annotated[dict[str, Scalar], Meta(description="Values for `{{config.X}}` templates.")] = field(
        default_factory=dict
    )
    reset: Annotated[
        ResetMode | ResetSteps,
        Meta(
            description="How the service gets back to its state after setup before a run on a kept "
            "environment that served a run: `auto` (default: recreate the container, restoring its named "
            "volumes from the snapshot taken at setup), `recreate`, `snapshot`, `{exec: command}`, "
            "`{jobs: [seed]}`, or `none` (keep what earlier runs left). Jobs run again after a service "
            "they depend on is recreated."
        ),
    ] = "auto"
    contract: Annotated[
        str | ServedContract | None,
        Meta(
            description="The service's OpenAPI 3.0/3.1 document (JSON or YAML, `$ref`s across files allowed): "
            "a file relative to e2e.yaml, or `{served: /openapi.json}`, a path the running service serves "
            "(fetched after setup). Every answer a YAML test step receives from the service is checked against it."
        ),
    ] = None


class ServiceBody(_ServiceFields, frozen=True, kw_only=True):
    """One service of a multi-service project (the map form keys it by name)."""

    depends_on: Annotated[
        list[str], Meta(description="Services that must be ready (or jobs done) first.")
    ] = field(default_factory=list)
    kind: Annotated[
        Literal["service", "job"],
        Meta(description="`job` runs to completion (exit 0) before its dependents start: migrations, seeds."),
    ] = "service"


class ServiceConfig(ServiceBody, frozen=True, kw_only=True):
    """A service with its name (the list form of `services`)."""

    name: Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Service name.")]


class SingleServiceConfig(_ServiceFields, frozen=True, kw_only=True):
    """The single-service form (`service:`), as in the original Preflight."""

    name: (
        Annotated[
            str,
            Meta(
                pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                description="Service name (default: the container name, else `app`).",
            ),
        ]
        | None
    ) = None


class MockResponse(_Config, frozen=True, kw_only=True):
    """What a mock route answers. String values may hold per-request templates."""

    status: Annotated[int, Meta(ge=100, le=599, description="HTTP status.")] = 200
    headers: Annotated[dict[str, str], Meta(description="Response headers (templates allowed).")] = field(
        default_factory=dict
    )
    body: Annotated[Any, Meta(description="JSON value, or a string sent as text.")] = None
    delay: Annotated[str | int, Duration("Wait before answering.")] | None = None
    fault: Annotated[
        Literal["reset", "timeout"] | None,
        Meta(description="`reset` closes the connection; `timeout` never answers."),
    ] = None
    proxy: Annotated[
        str | None, Meta(description="Forward the request to this base URL and relay its answer.")
    ] = None
    body_file: Annotated[
        str | None,
        Meta(
            description="A file holding the body, relative to the file that declares the route: `.json` is "
            "sent as JSON (templates allowed), anything else as it is (set `Content-Type`)."
        ),
    ] = None


class RecordedOrigin(_Config, frozen=True, kw_only=True):
    """Where a recorded route came from (`preflight run --record`): when, and one request it answered."""

    at: Annotated[str, Meta(description="When the route was recorded (ISO 8601, UTC).")]
    example: Annotated[
        str | None, Meta(description="The path and query of one recorded request (`mocks check` sends it).")
    ] = None
    example_body: Annotated[
        Any,
        Meta(description="That request's JSON body (secrets masked), when the route has no body conditions."),
    ] = None
    calls: Annotated[int, Meta(ge=1, description="How many recorded calls the route stands for.")] = 1


class MockWhen(_Config, frozen=True, kw_only=True):
    """Extra conditions for a route: all must hold (body is a deep partial match with operators)."""

    body: Annotated[
        Any, Meta(description="Deep partial match on the JSON body; assertion operators allowed.")
    ] = None
    headers: Annotated[dict[str, Any], Meta(description="Header conditions (names case-insensitive).")] = (
        field(default_factory=dict)
    )
    query: Annotated[dict[str, Any], Meta(description="Query-string conditions.")] = field(
        default_factory=dict
    )


class MockRoute(_Config, frozen=True, kw_only=True):
    """One route: the first route (in file order) whose method, path and `when` match answers."""

    path: Annotated[str, Meta(description="Path with `:param` and `*` segments, e.g. `/orders/:id`.")]
    method: Annotated[str, Meta(description="HTTP method, or `ANY`.")] = "GET"
    when: Annotated[MockWhen | None, Meta(description="Conditions on query, headers and body.")] = None
    response: Annotated[MockResponse | None, Meta(description="The answer.")] = None
    sequence: Annotated[
        list[MockResponse] | None,
        Meta(description="Answers served in order (e.g. 500, 500, 200); then the last repeats, or `loop`."),
    ] = None
    loop: Annotated[bool, Meta(description="Start the sequence over after its last answer.")] = False
    times: (
        Annotated[int, Meta(ge=1, description="Match at most this many times, then let later routes answer.")]
        | None
    ) = None
    name: Annotated[str | None, Meta(description="A name to refer to the route in reports.")] = None
    recorded: Annotated[
        RecordedOrigin | None,
        Meta(description="Set on recorded routes: when and from what they were recorded."),
    ] = None


class MockConfig(_Config, frozen=True, kw_only=True):
    """An HTTP mock service run by preflight on the host; containers reach it as `http://<name>:<port>`."""

    port: Annotated[int, Meta(ge=0, le=65535, description="Host port to listen on (0 picks a free one).")]
    container_port: Annotated[int | None, Meta(description="Kept for compatibility with image mocks.")] = None
    image: Annotated[
        str | None, Meta(description="Kept for compatibility; image mocks are run as services.")
    ] = None
    routes: Annotated[list[MockRoute], Meta(description="Routes, tried in order.")] = field(
        default_factory=list
    )
    proxy: Annotated[str | None, Meta(description="Forward unmatched requests to this base URL.")] = None
    journal_limit: Annotated[
        int, Meta(ge=1, description="Requests kept in the journal (oldest dropped).")
    ] = 10000
    max_body_bytes: Annotated[
        int, Meta(ge=1, description="Largest request body accepted; a larger one gets 413 (default 10 MiB).")
    ] = 10 * 1024 * 1024
    header_timeout: Annotated[
        str | int, Duration("Time a client has to send a request's head before the connection is closed.")
    ] = "10s"
    hosts: Annotated[
        list[str],
        Meta(
            description="Real host names the mock stands in for over HTTPS (port 443), e.g. `api.stripe.com`: "
            "containers resolve them to the mock and trust the project's CA."
        ),
    ] = field(default_factory=list)
    contract: Annotated[
        str | None,
        Meta(
            description="The OpenAPI 3.0/3.1 document of the API this mock stands in for (a file relative to "
            "e2e.yaml, e.g. the provider's published document): a route whose answer it forbids is reported "
            "when the configuration loads, and each request the mock receives is checked against it."
        ),
    ] = None


class RetryPolicy(_Config, frozen=True, kw_only=True):
    """Retry a failing case, every case of a suite, or every case of the run."""

    max_attempts: Annotated[int, Meta(ge=1, le=10, description="Total attempts, the first included.")]
    delay: Annotated[str | int, Duration("Wait before the second attempt.")] = "1s"
    backoff: Annotated[
        Literal["fixed", "linear", "exponential"] | None,
        Meta(description="Waits: fixed d,d,d; linear d,2d,3d; exponential d,2d,4d (with multiplier 2)."),
    ] = None
    backoff_multiplier: Annotated[float, Meta(gt=0, description="Growth factor for exponential backoff.")] = (
        2.0
    )


class ShellExpect(_Config, frozen=True, kw_only=True):
    """Expectations on a shell suite's process."""

    exit_code: Annotated[int, Meta(description="Expected exit status.")] = 0
    stdout: Annotated[Any, Meta(description="Assertion on stdout (a string means `contains`).")] = None
    stderr: Annotated[Any, Meta(description="Assertion on stderr (a string means `contains`).")] = None


class SuiteConfig(_Config, frozen=True, kw_only=True):
    """A test suite: a YAML test file, a pytest target, or a shell command/script."""

    id: Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Suite identifier.")]
    name: Annotated[str | None, Meta(description="Display name (default: the id).")] = None
    file: Annotated[
        str | None, Meta(description="Test file or directory, relative to the e2e.yaml directory.")
    ] = None
    runner: Annotated[
        Literal["yaml", "pytest", "shell", "exec", "playwright", "fuzz"],
        Meta(
            description="`yaml` (default), `pytest`, `shell` (a script `file` or a `command`; `exec` too), "
            "`playwright` (the project's Playwright tests: `file` is the directory of playwright.config.*), or "
            "`fuzz`: property-based cases from a service's contract (needs `preflight-sdk[contracts]`)."
        ),
    ] = "yaml"
    command: Annotated[
        str | list[str] | None, Meta(description="Shell runner command (argv list, or a string).")
    ] = None
    shell: Annotated[
        bool, Meta(description="Run a string `command` through `sh -c` (default: split, no shell).")
    ] = False
    config: Annotated[str | None, Meta(description="Runner config file (pytest: `-c`).")] = None
    python: Annotated[
        str | None,
        Meta(
            description="pytest suites: the Python that runs pytest: an interpreter (a path, or a "
            "command on PATH such as `python3.12`) or a virtualenv directory (its `bin/python`), "
            "relative to the e2e.yaml directory. Default: the Python preflight runs on."
        ),
    ] = None
    args: Annotated[list[str], Meta(description="Extra runner arguments (pytest).")] = field(
        default_factory=list
    )
    env: Annotated[dict[str, Scalar], Meta(description="Extra environment for pytest and shell suites.")] = (
        field(default_factory=dict)
    )
    expect: Annotated[ShellExpect | None, Meta(description="Shell runner expectations.")] = None
    service: Annotated[
        str | None,
        Meta(
            description="pytest, shell and playwright suites: the service whose URL is BASE_URL (default: the "
            "first); fuzz suites: the service whose contract drives the cases."
        ),
    ] = None
    junit: Annotated[
        str | list[str] | None,
        Meta(
            description="Shell suites: the JUnit XML report(s) the command writes, a glob (or a list of "
            "them) relative to the e2e.yaml directory; each `<testcase>` becomes a case."
        ),
    ] = None
    retry: Annotated[RetryPolicy | None, Meta(description="Retry policy for this suite's cases.")] = None
    parallel: Annotated[bool, Meta(description="May run at the same time as other parallel suites.")] = False
    concurrency: (
        Annotated[int, Meta(ge=1, description="Kept for compatibility (see tests.parallel).")] | None
    ) = None
    timeout: Annotated[str | int, Duration("Deadline for the whole suite (default 5m).")] | None = None
    touches: Annotated[
        list[str] | None,
        Meta(
            description="The services and mocks this suite's cases reach (names). pytest and shell "
            "cases count as reaching every service and mock without it, so any edit runs them "
            "again; YAML cases are observed, and these are added to what they reach."
        ),
    ] = None
    contract: Annotated[
        ContractMode | None,
        Meta(
            description="Contract violations in this suite: `fail` their case, `warn`, or `off` (default: tests.contract)."
        ),
    ] = None
    max_examples: Annotated[
        int, Meta(ge=1, le=10000, description="Fuzz suites: examples tried per operation (default 50).")
    ] = 50


class ParallelConfig(_Config, frozen=True, kw_only=True):
    """Run suites marked `parallel` concurrently."""

    enabled: Annotated[bool, Meta(description="Turn parallel suites on.")] = True
    concurrency: Annotated[int, Meta(ge=1, description="How many suites at once.")] = 4


class TestsConfig(_Config, frozen=True, kw_only=True):
    """The project's test suites."""

    suites: Annotated[
        list[SuiteConfig], Meta(description="Suites, run in order (parallel ones together).")
    ] = field(default_factory=list)
    retry: Annotated[RetryPolicy | None, Meta(description="Default retry policy for every case.")] = None
    parallel: Annotated[
        ParallelConfig | bool | None, Meta(description="Parallel suites: `true` or `{enabled, concurrency}`.")
    ] = None
    base_url_contract: Annotated[
        str | None,
        Meta(
            description="Test-only mode: the OpenAPI 3.0/3.1 document of the API at BASE_URL (a file relative "
            "to e2e.yaml); every answer of a `path` request is checked against it."
        ),
    ] = None
    contract: Annotated[
        ContractMode,
        Meta(
            description="What a contract violation does in every suite: `fail` its case (default), `warn` "
            "(a suite warning, while a team adopts a contract; a mock route its contract forbids is then a "
            "load warning), or `off`."
        ),
    ] = "fail"


class NetworkConfig(_Config, frozen=True, kw_only=True):
    """The private network's name (default `pf-<project>-<session>`, unique per run)."""

    name: Annotated[str | None, Meta(description="Base name; a session suffix keeps runs apart.")] = None


class McpToolDecl(_Config, frozen=True, kw_only=True):
    """A tool the MCP server under `mcp:` promises to serve (and, optionally, how to call it)."""

    name: Annotated[str, Meta(description="Tool name.")]
    schema: Annotated[
        str | dict[str, Any] | None,
        Meta(description="Expected inputSchema: a JSON file path (relative to e2e.yaml) or inline."),
    ] = None
    example_arguments: Annotated[
        dict[str, Any] | None,
        Meta(
            description="Arguments known to work: with --call-readonly the tool is called with them, "
            "even when not annotated read-only, and its result is checked."
        ),
    ] = None


class McpConfig(_Config, frozen=True, kw_only=True):
    """An MCP server this project provides, for `preflight verify`."""

    start: Annotated[str | list[str], Meta(description="Command that starts the server on stdio (no shell).")]
    cwd: Annotated[str | None, Meta(description="Working directory, relative to the e2e.yaml directory.")] = (
        None
    )
    env: Annotated[dict[str, str], Meta(description="Extra environment for the server.")] = field(
        default_factory=dict
    )
    tools: Annotated[list[McpToolDecl], Meta(description="Tools it must serve.")] = field(
        default_factory=list
    )


class ComposeConfig(_Config, frozen=True, kw_only=True):
    """Compose files whose services this project runs."""

    files: Annotated[
        list[str],
        Meta(min_length=1, description="Compose files, relative to e2e.yaml, merged in order (like `-f`)."),
    ]
    profiles: Annotated[
        list[str],
        Meta(description="Active profiles (added to `COMPOSE_PROFILES`); others' services are left out."),
    ] = field(default_factory=list)
    host_ports: Annotated[
        Literal["ephemeral", "asWritten"],
        Meta(
            description="`ephemeral` (default) publishes each port on a free host port, so sessions run side "
            "by side; `asWritten` uses the host ports the compose file names."
        ),
    ] = "ephemeral"
    override: Annotated[
        dict[str, Any] | None,
        Meta(
            description="Compose keys laid over the files before they are read, like an override file: "
            "mappings merge, any other value replaces, `null` drops the key (`services: {db: {restart: null}}`)."
        ),
    ] = None


class EngineSettings(_Config, frozen=True, kw_only=True):
    """Where the environment runs: a Docker engine other than the local one, or a Docker Swarm."""

    kind: Annotated[Literal["docker", "podman"], Meta(description="`docker` (default) or `podman`.")] = (
        "docker"
    )
    host: Annotated[
        str | None,
        Meta(
            description="Engine address, as DOCKER_HOST: `unix:///path`, `tcp://host:2375`, `ssh://user@host`."
        ),
    ] = None
    context: Annotated[str | None, Meta(description="A `docker context` name (instead of `host`).")] = None
    swarm: Annotated[
        bool, Meta(description="Deploy the services as Docker Swarm services on the engine's swarm.")
    ] = False
    mock_host: Annotated[
        str | None,
        Meta(
            description="Address of this machine as the engine's containers reach it (mocks listen "
            "there). Default: found from the route to the engine."
        ),
    ] = None


class ProjectConfig(_Config, frozen=True, kw_only=True):
    """An `e2e.yaml` file: services to build and run, mocks, and the suites to run against them.

    Top-level keys starting with `x-` are ignored: a place for YAML anchors (`x-env: &env {...}`).
    """

    project: Annotated[ProjectInfo, Meta(description="Project identity.")]
    version: Annotated[str | int, Meta(description="Config format version.")] = "1"
    engine: Annotated[
        Literal["docker", "podman"] | EngineSettings,
        Meta(
            description="Container engine: `docker` (default), `podman`, or `{host|context|swarm}`; "
            "`PREFLIGHT_ENGINE` overrides the kind."
        ),
    ] = "docker"
    registry: Annotated[
        str | None,
        Meta(
            description="Registry the swarm pulls built images from (`host:port`), for `engine: {swarm: true}`."
        ),
    ] = None
    compose: Annotated[
        str | list[str] | ComposeConfig | None,
        Meta(
            description="Compose file(s) defining the services; entries under `services` with the same "
            "name add to or override them (health checks, images, jobs)."
        ),
    ] = None
    service: Annotated[SingleServiceConfig | None, Meta(description="Single-service form.")] = None
    services: Annotated[
        list[ServiceConfig] | dict[str, ServiceBody] | None,
        Meta(description="Services: a list with `name`, or a map keyed by name."),
    ] = None
    mocks: Annotated[dict[str, MockConfig], Meta(description="HTTP mock services by name.")] = field(
        default_factory=dict
    )
    tests: Annotated[TestsConfig | None, Meta(description="Test suites.")] = None
    network: Annotated[NetworkConfig | None, Meta(description="Private network settings.")] = None
    dashboard: Annotated[DashboardConfig | None, Meta(description="Original dashboard settings (kept).")] = (
        None
    )
    repos: Annotated[list[RepoConfig] | None, Meta(description="Original dashboard repositories (kept).")] = (
        None
    )
    mcp: Annotated[McpConfig | None, Meta(description="An MCP server to check with `preflight verify`.")] = (
        None
    )
    redact: Annotated[
        list[str],
        Meta(
            description="Extra header, parameter and field names whose values every output hides "
            "(besides any name containing auth, token, secret, password, key, cookie or session)."
        ),
    ] = field(default_factory=list)
    history: Annotated[HistoryConfig | None, Meta(description="Run-history settings (kept).")] = None
    resilience: Annotated[ResilienceConfig | None, Meta(description="Restart and port settings (kept).")] = (
        None
    )
    isolation: Annotated[IsolationConfig | None, Meta(description="Name and port isolation (kept).")] = None
