"""`preflight-mcp`: serve the preflight tools to an MCP client over stdio.

stdout carries protocol messages only: logs go to stderr, and any stray `print` while serving is
redirected there too. When the client goes away (stdin closes) or the process gets SIGTERM or
SIGINT, the server cleans every environment it started (unless `--keep-on-exit`) before exiting.
Heavy modules (mcp, Docker, HTTP) are imported only once the options are parsed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import click

from preflight_sdk._version import __version__

if TYPE_CHECKING:
    from .server import PreflightMcp

__all__ = ["command", "engine_options", "main", "serve"]

logger = logging.getLogger("preflight_sdk.faces.mcp")

LOG_LEVELS = ("debug", "info", "warning", "error")


def configure_logging(level: str) -> None:
    """Send log records to stderr (never stdout, which belongs to the protocol)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


async def serve(app: PreflightMcp) -> None:
    """Serve `app` on stdin/stdout until stdin closes or a termination signal arrives."""
    from mcp.server.stdio import stdio_server

    from .list_cache import EncodedWriteStream
    from .wire_guard import AnsweringReadStream

    async with anyio.create_task_group() as tg:
        serving = anyio.CancelScope()
        tg.start_soon(_on_signal, app, serving)
        handshake, warmed = anyio.Event(), anyio.Event()
        app.server.middleware.append(partial(_after_initialize, handshake, warmed))
        tg.start_soon(_warm_up, app, handshake, warmed)
        async with stdio_server() as (read, write):
            # Inside stdio_server: it has claimed the real stdout for the protocol by then, and a
            # buffered print() flushed at exit would otherwise land on the wire.
            with contextlib.redirect_stdout(sys.stderr), serving:
                answering = AnsweringReadStream(read, write)  # malformed lines get an error reply
                writing = EncodedWriteStream(write, app.list_cache)  # tools/list: its text, encoded once
                await app.server.run(answering, writing, app.server.create_initialization_options())
        logger.info("stdin closed: shutting down")
        await app.shutdown("its client closed stdin")
        tg.cancel_scope.cancel()


# The warm-up is waited for at most this long by a request that needs it (it never takes that long).
WARM_UP_WAIT = 10.0


# How a session opens: 2025 clients send `initialize`; a 2026-07-28 client may ask `server/discover`,
# or send its first request straight away (the protocol version in each request's `_meta`).
HANDSHAKES = frozenset({"initialize", "server/discover"})


async def _after_initialize(handshake: anyio.Event, warmed: anyio.Event, ctx: Any, call_next: Any) -> Any:
    """Middleware: set `handshake` once the session's opening request is answered (the warm-up
    waits for it, so that it never slows the handshake down), or at a first request that is none;
    a `tools/list` or `tools/call` that comes while the warm-up is under way waits for it rather
    than doing its parts again beside it."""
    if ctx.method in HANDSHAKES and not handshake.is_set():
        answer = await call_next(ctx)
        handshake.set()
        return answer
    handshake.set()
    if ctx.method in ("tools/list", "tools/call") and not warmed.is_set():
        with anyio.move_on_after(WARM_UP_WAIT):
            await warmed.wait()
    return await call_next(ctx)


async def _warm_up(app: PreflightMcp, handshake: anyio.Event, warmed: anyio.Event) -> None:
    """Do, while the client is still connecting, what the first tools/list and tool call would pay for.

    Loading the operations and building the tool specs (70 ms of CPU), importing what a call on the
    engine's socket needs (the HTTP client and its transport, the engine, the lifecycle, the store:
    about 100 ms) and describing the config's types (about 90 ms), once per process: done here, in
    a worker thread,
    the first call costs what a later one does plus its own work. A tools/list or call that comes
    sooner waits for the warm-up to end (a client that lists the tools right after `initialize`,
    as the Inspector CLI and the SDK clients do, gets its answer once everything is ready), so
    nothing is done twice at once on one interpreter lock. python-on-whales (0.15 s more) is left to
    the engines that use it (remote, Podman). `warmed` is set at the end, whatever happened.
    """

    def work() -> None:
        import importlib

        from preflight_sdk.config.loader import prepare

        app.tools  # noqa: B018  (builds the specs, with the registry of Project)
        for module in (
            "httpx",
            "httpcore",  # httpx imports it (and h11) only when the first transport is made
            "preflight_sdk.engine.docker",
            "preflight_sdk.lifecycle.status",
            "preflight_sdk.store.calls",
        ):
            importlib.import_module(module)
        prepare()  # the config's types described for validation (the first load's own cost)

    await handshake.wait()
    await anyio.lowlevel.checkpoint()  # let the answer to initialize be written first
    started = anyio.current_time()
    try:
        await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except Exception:  # a warm-up is an optimisation: the first call reports what is wrong
        logger.debug("warm-up failed", exc_info=True)
        return
    finally:
        warmed.set()
    elapsed = round((anyio.current_time() - started) * 1000)
    logger.debug("warmed up in %d ms: tool specs, Docker and HTTP clients ready for the first call", elapsed)


async def _on_signal(app: PreflightMcp, serving: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        name = "a signal"
        async for signum in signals:
            name = signal.Signals(signum).name
            logger.info("%s received: shutting down", name)
            break
    serving.cancel()
    with anyio.CancelScope(shield=True):
        await app.shutdown(f"it got {name}")
    logging.shutdown()
    sys.stderr.flush()
    # The stdin reader is a worker thread blocked in readline(): it can neither be cancelled nor
    # joined until the client writes or closes, so once everything is clean the process leaves.
    os._exit(0)


@click.command(name="preflight-mcp", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--project",
    "-C",
    "project",
    type=click.Path(exists=True, file_okay=True, dir_okay=True),
    default=None,
    help="Default project (directory with e2e.yaml); tools then accept projectPath as optional.",
)
@click.option(
    "--keep-on-exit",
    is_flag=True,
    default=False,
    help="Leave environments started by this server running when it exits.",
)
@click.option(
    "--allow-verify-command",
    is_flag=True,
    default=False,
    help="Let preflight_verify start any command given as an argument (by default it starts only "
    "the MCP servers a project declares).",
)
@click.option(
    "--allow-any-project",
    "allow_other_projects",
    is_flag=True,
    default=False,
    help="Let tools take a projectPath outside --project (by default, with --project, only that "
    "project and its subfolders are served).",
)
@click.option(
    "--call-budget",
    type=click.FloatRange(1, 3600),
    default=45.0,
    show_default=True,
    help="Seconds a tool call may wait for long work (run, build, setup) before answering with its runId.",
)
@click.option(
    "--engine-host",
    metavar="URL",
    default=None,
    help="Docker engine the projects run on (`ssh://user@host`, `tcp://host:2375`); default: e2e.yaml, DOCKER_HOST.",
)
@click.option(
    "--context",
    "docker_context",
    metavar="NAME",
    default=None,
    help="Docker context the projects run on; default: e2e.yaml's `engine:`, DOCKER_CONTEXT.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="warning",
    show_default=True,
    help="Log level (logs go to stderr).",
)
@click.option(
    "--tools",
    "groups",
    metavar="GROUPS",
    default=None,
    help="Serve only these tool groups, comma-separated (e.g. environment,runs,tests,contracts). "
    "Default: all but contracts (served only when named).",
)
@click.option(
    "--without",
    metavar="GROUPS",
    default=None,
    help="Leave out these tool groups, comma-separated (e.g. clarify,verify,preflights).",
)
@click.version_option(__version__, "--version", "-V", prog_name="preflight-mcp")
def command(
    project: str | None,
    keep_on_exit: bool,
    allow_verify_command: bool,
    allow_other_projects: bool,
    call_budget: float,
    engine_host: str | None,
    docker_context: str | None,
    log_level: str,
    groups: str | None,
    without: str | None,
) -> None:
    """Serve preflight's tools to an MCP client over stdio (one tool per Project operation).

    Each tool belongs to a group (environment, runs, clarify, verify…; `preflights` is the
    require_clarification and read_architecture alias pair): an agent that only tests can leave
    the others out. A wrong group name is refused with the list of groups.
    """
    run_server(
        project=project,
        keep_on_exit=keep_on_exit,
        log_level=log_level,
        allow_verify_command=allow_verify_command,
        allow_other_projects=allow_other_projects,
        call_budget=call_budget,
        groups=groups,
        without=without,
        **engine_options(engine_host, docker_context),
    )


def engine_options(engine_host: str | None, context: str | None) -> dict[str, Any]:
    """A project factory on the engine the options name (none: each project's own e2e.yaml)."""
    if not (engine_host or context):
        return {}
    from functools import partial

    from .pool import default_factory

    return {"factory": partial(default_factory, engine_host=engine_host, context=context)}


def run_server(
    *,
    project: str | None,
    keep_on_exit: bool,
    log_level: str,
    groups: str | None = None,
    without: str | None = None,
    **options: Any,
) -> None:
    """Configure logging, build the server and serve until the client goes away."""
    configure_logging(log_level)
    from .server import PreflightMcp

    if groups is not None or without is not None:
        options["groups"], options["without"] = _chosen_groups(groups, without)
    app = PreflightMcp(default_project=project, keep_on_exit=keep_on_exit, **options)
    anyio.run(serve, app)


def _chosen_groups(groups: str | None, without: str | None) -> tuple[list[str] | None, list[str]]:
    """Check `--tools` and `--without` against the registry's groups (a usage error names them)."""
    from preflight_sdk.faces.reflection.registry import reflect

    known = reflect().groups()
    only = _names(groups, known, "--tools") if groups is not None else None
    return only, _names(without, known, "--without") if without is not None else []


def _names(text: str, known: list[str], option: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise click.BadParameter(
            f"unknown tool group {', '.join(unknown) or '(none given)'}; the groups are: {', '.join(known)}",
            param_hint=option,
        )
    return names


def main(argv: list[str] | None = None, prog_name: str | None = None) -> None:
    """Console entry point of `preflight-mcp`."""
    command.main(args=argv, prog_name=prog_name or "preflight-mcp")
