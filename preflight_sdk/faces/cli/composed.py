"""Commands that compose operations for people at a terminal: `run`, `up`, `init`, `schema`, `mcp`.

Their options come from the operations they call (`preflight run --no-cache --filter smoke`), so
they follow the registry like every generated command.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import click

from preflight_sdk.core.errors import InputError, OperationCancelled, PreflightError
from preflight_sdk.faces.reflection.outcome import unwrap
from preflight_sdk.faces.reflection.registry import Operation, Registry

from .app import Settings, command_help, defer, execute, follow_to_the_end, global_options, operation_command
from .extensions import EXTENSIONS
from .output import Output
from .params import click_params, collect_arguments, hide_replaced
from .starter import ignore_state, write_compose_starter, write_starter

__all__ = ["add_composed"]


def add_composed(group: click.Group, registry: Registry) -> None:
    """Add the composed commands whose operations `registry` has (each built when asked for)."""
    ops = {op.name: op for op in registry}
    if {"run", "clean", "status"} <= ops.keys():
        defer(group, "run", partial(_run_command, ops))
    if {"build", "setup", "clean"} <= ops.keys():
        defer(group, "up", partial(_up_command, ops))
    if "run" in ops:
        defer(group, "watch", partial(_watch_command, ops["run"]))
    if "init" in ops:
        defer(group, "init", partial(_init_command, ops["init"]))
    defer(group, "schema", _schema_command)
    defer(group, "mcp", _mcp_command)
    if {"list_runs", "get_run"} <= ops.keys():
        defer(group, "runs", partial(_runs_group, ops))
    from .groups import GROUPS, short_names_group

    for names in GROUPS:
        if any(op_name in ops for op_name in names.subcommands.values()):
            defer(group, names.name, partial(short_names_group, names, ops))


def _runs_group(ops: dict[str, Operation]) -> click.Command:
    from .runs import runs_group

    return runs_group(ops)


def _settings(ctx: click.Context) -> Settings:
    settings = ctx.find_object(Settings)
    assert settings is not None
    return settings


def _phase_params(ops: list[Operation]) -> list[click.Parameter]:
    """The options of several operations (no positionals; a shared name appears once)."""
    # `preflight run` stays blocking and makes a new run each time: no wait budget, no key.
    seen: set[str] = {"wait", "idempotency_key"}
    params: list[click.Parameter] = []
    for op in ops:
        for param in click_params(op, positional=False):
            if param.name not in seen:
                seen.add(param.name or "")
                params.append(param)
    return params


def _arguments(ctx: click.Context, op: Operation, values: dict[str, Any]) -> dict[str, Any]:
    extensions = EXTENSIONS.get(op.name, ())
    names = {p.name for p in op.parameters} | {e.option.name for e in extensions}
    try:
        return collect_arguments(op, {k: v for k, v in values.items() if k in names}, extensions)
    except InputError as exc:
        ctx.exit(Output(json=_settings(ctx).json).error(exc))


async def _call(project: Any, op: Operation, kwargs: dict[str, Any], out: Output) -> Any:
    out.note(click.style(f"» {op.title}", bold=True))
    method = getattr(project, op.name)
    return await (method(**kwargs, progress=out.sink()) if op.progress else method(**kwargs))


async def _clean(project: Any, op: Operation, out: Output) -> Any:
    """Clean even while the command is being cancelled; a failing clean is reported, not raised."""
    with anyio.CancelScope(shield=True):
        try:
            return await _call(project, op, {}, out)
        except Exception as exc:
            out.note(click.style(f"clean failed: {exc}", fg="red"))
            return None


def _failed(result: Any) -> bool:
    return not bool(getattr(result, "ok", True))


async def _until_signal(body: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
    """Run `body`; the first SIGINT or SIGTERM cancels it. Return its result and whether it was stopped.

    A CI runner stops a job with SIGTERM, a person with Ctrl-C: both must let `body` clean up.
    """
    outcome: list[Any] = []
    stopped = False
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal stopped
                async for _ in signals:
                    stopped = True
                    tg.cancel_scope.cancel()
                    return

            tg.start_soon(watch)
            outcome.append(await body())
            tg.cancel_scope.cancel()
    return (outcome[0] if outcome else None), stopped


def _cancelled() -> OperationCancelled:
    return OperationCancelled("cancelled", hint="`preflight status` shows anything still running")


def _run_command(ops: dict[str, Operation]) -> click.Command:
    run, clean = ops["run"], ops["clean"]
    own = {p.name for p in run.parameters}

    def callback(keep: bool, **values: Any) -> None:
        ctx = click.get_current_context()
        arguments = _arguments(ctx, run, values)
        if "keep" in own:
            arguments["keep"] = True  # the clean-up below is this command's, also on Ctrl-C

        async def work(project: Any, out: Output) -> Any:
            project.keep_warm = False  # one run, then this process exits: nothing to keep warm for

            async def body() -> Any:
                if arguments.get("shards"):
                    # Each engine's copy is removed by the run itself; the project's own is not touched.
                    return await follow_to_the_end(
                        project, await _call(project, run, arguments, out), arguments, out
                    )
                running = getattr(await project.status(), "state", None) == "running"
                if running:
                    out.note("The environment is already running: it is brought up to date and stays up.")
                try:
                    return await follow_to_the_end(
                        project, await _call(project, run, arguments, out), arguments, out
                    )
                finally:
                    if keep:
                        out.note("--keep: the environment stays up; `preflight clean` removes it.")
                    elif not running:
                        await _clean(project, clean, out)

            began = anyio.current_time()
            result, stopped = await _until_signal(body)
            if stopped:
                raise _cancelled()
            # The report's duration is the run's (environment and suites); this is the command's.
            out.note(
                f"preflight run took {anyio.current_time() - began:.1f} s in all (build, setup, tests, clean)"
            )
            return result

        execute(ctx, work)

    keep = click.Option(
        ["--keep"],
        is_flag=True,
        default=False,
        help="Leave the environment running afterwards: the next run rebuilds only what changed.",
    )
    params = [p for p in click_params(run, positional=False) if p.name != "keep"]
    params += [e.option for e in EXTENSIONS.get(run.name, ())]
    hide_replaced(params, EXTENSIONS.get(run.name, ()))
    return click.Command(
        "run",
        callback=callback,
        params=[*params, keep, *global_options()],
        short_help="Bring the environment up to date, test, and clean up.",
        help=(
            "Build and start only what is missing or changed, run the suites, then clean up "
            "(always, even on failure, Ctrl-C or SIGTERM). With --keep the environment stays up "
            "and the next run reuses every unchanged service; --fresh rebuilds from nothing. If "
            "the environment was already running, it stays running. `preflight watch` re-runs "
            "on every change."
        ),
    )


def _up_command(ops: dict[str, Operation]) -> click.Command:
    build, setup, clean = (ops[n] for n in ("build", "setup", "clean"))

    def callback(**values: Any) -> None:
        ctx = click.get_current_context()
        phases = {op.name: _arguments(ctx, op, values) for op in (build, setup)}

        async def work(project: Any, out: Output) -> Any:
            up: list[Any] = []
            cleaned: list[Any] = []
            removed: list[bool] = []

            async def body() -> Any:
                built = await _call(project, build, phases["build"], out)
                if _failed(built):
                    return built
                try:
                    started = await _call(project, setup, phases["setup"], out)
                    if _failed(started):
                        return started
                    _announce(started, out)
                    up.append(started)
                    # A target that can tell when its environment is removed elsewhere (a clean
                    # from another process) ends the wait then; otherwise wait for a signal.
                    until_removed = getattr(project, "until_removed", None)
                    await (until_removed() if until_removed is not None else anyio.sleep_forever())
                    removed.append(True)
                    out.note("The environment was removed by another process: stopping.")
                finally:
                    cleaned.append(await _clean(project, clean, out))

            result, stopped = await _until_signal(body)
            if removed:
                return cleaned[0]
            if not stopped:
                return result
            if not up:
                raise _cancelled()
            out.note("Stopped.")
            return cleaned[0]

        execute(ctx, work)

    return click.Command(
        "up",
        callback=callback,
        params=[
            *_phase_params([build, setup]),
            *(e.option for e in EXTENSIONS.get("setup", ())),
            *global_options(),
        ],
        short_help="Build and start the environment; keep it up until Ctrl-C.",
        help=(
            "Build the images and start the environment, print its URLs, then wait in the "
            "foreground until Ctrl-C (or SIGTERM) and clean up. Mocks run inside this process, so "
            "the environment lives as long as the command. With --json, the setup envelope is "
            "printed when the environment is up and the clean envelope when it stops."
        ),
    )


def _watch_command(run: Operation) -> click.Command:
    def callback(filter: str | None, keep: bool) -> None:
        ctx = click.get_current_context()
        codes: list[int] = []

        async def work(project: Any, out: Output) -> None:
            async def body() -> None:
                out.note(click.style("» Watching: every change re-runs the suites (Ctrl-C stops)", bold=True))
                watching = project.watch(filter=filter, keep=keep, progress=out.sink())
                async with contextlib.aclosing(watching) as runs:
                    async for outcome in runs:
                        printed = (
                            out.error(outcome) if isinstance(outcome, PreflightError) else out.result(outcome)
                        )
                        codes.append(printed)
                        out.note(click.style("» Waiting for changes (Ctrl-C stops)", dim=True))

            _, stopped = await _until_signal(body)
            if stopped:
                out.note("Stopped." if keep else "Stopped: the environment was removed.")

        # Each verdict is printed as it comes (not once more at the end); the exit code is the last one's.
        settings = _settings(ctx)
        out = Output(json=settings.json)
        try:
            anyio.run(work, settings.open(), out)
        except (Exception, KeyboardInterrupt, BaseExceptionGroup) as exc:
            error = unwrap(exc)
            if isinstance(error, PreflightError):
                ctx.exit(out.error(error))
            if isinstance(error, KeyboardInterrupt):
                ctx.exit(out.cancelled())
            raise
        ctx.exit(codes[-1] if codes else 0)

    return click.Command(
        "watch",
        callback=callback,
        params=[
            click.Option(
                ["--filter"], default=None, help="Suite ids to run, comma-separated (default: all)."
            ),
            click.Option(
                ["--keep"], is_flag=True, default=False, help="Leave the environment running when stopped."
            ),
            *global_options(),
        ],
        short_help="Run the suites again on every file change, until Ctrl-C.",
        help=(
            "Bring the environment up to date and run the suites, then again each time a file of "
            "the project or of a build context changes (grouped until the files are quiet). Only "
            "what changed is rebuilt or restarted; a change to one suite's file re-runs that suite "
            "alone. A file changed while a run goes on (by its suites, most often) starts no "
            "run: a line says so, and another names the file that started each run. The verdict "
            "is printed each time; a failing build or crashing service is "
            "printed too, and the next change retries. Ctrl-C (or SIGTERM) stops and cleans up, "
            "as `up` does, unless --keep. The exit code is the last verdict's."
        ),
    )


def _announce(result: Any, out: Output) -> None:
    if out.json:
        out.result(result)
        return
    lines = ["The environment is up:"]
    for kind in ("services", "mocks"):
        for item in getattr(result, kind, None) or []:
            url = getattr(item, "url", None)
            if url:
                lines.append(f"  {getattr(item, 'name', '?')}: {url}")
    lines.append("Press Ctrl-C to stop and clean up.")
    click.echo("\n".join(lines))


def _init_command(op: Operation) -> click.Command:
    command = operation_command(op, EXTENSIONS.get(op.name, ()))
    validate = command.callback
    assert validate is not None

    def callback(from_compose: str | None = None, **values: Any) -> None:
        from preflight_sdk.config import CONFIG_NAMES
        from preflight_sdk.config.compose import COMPOSE_NAMES

        settings = _settings(click.get_current_context())
        directory = Path(settings.project)
        if settings.config is None and not directory.is_file():
            # A compose file alone is a project already: `init` loads it, writing nothing.
            names = CONFIG_NAMES if from_compose else (*CONFIG_NAMES, *COMPOSE_NAMES)
            if not any((directory / name).exists() for name in names):
                out = Output(json=settings.json)
                made = (
                    write_compose_starter(directory, Path(from_compose))
                    if from_compose
                    else write_starter(directory, base=_local_base(settings))
                )
                ignored = ignore_state(directory)
                for path in [*made, *([ignored] if ignored is not None else [])]:
                    # Before the summary and on its stream (stdout): a reader that shows stdout
                    # first still reads them in order. With --json stdout is the envelope alone.
                    click.echo(f"wrote {path}", err=out.json)
        validate(**values)

    command.callback = callback
    command.short_help = "Write a starter e2e.yaml (if there is none), then load and validate it."
    command.help = command_help(
        op,
        command.params,
        description=(
            "Without an e2e.yaml in the directory, first write a starter project: e2e.yaml, "
            "web/Dockerfile (starting FROM a busybox image already on this machine) and "
            "tests/smoke.yaml, never overwriting a file, and add `.preflight/` (runs, store, session) "
            "to .gitignore; with --from-compose FILE, an e2e.yaml whose services come from that "
            "compose file instead. Then load and validate e2e.yaml and open the project's session: "
            "with an unchanged file that is cheap and gives the same session; after an edit it "
            "reloads, unless the environment is running (then clean first)."
        ),
    )
    return command


def _local_base(settings: Settings) -> str:
    """The starter's base image: a busybox image the engine that builds has (it then builds offline)."""
    from preflight_sdk.core.errors import PreflightError
    from preflight_sdk.engine.docker import DockerEngine

    from .starter import BASE_CANDIDATES, DEFAULT_BASE, pick_base

    async def present() -> list[str]:
        engine = DockerEngine(host=settings.engine_host, context=settings.context)
        return [ref for ref in BASE_CANDIDATES if await engine.inspect_image(ref) is not None]

    try:
        return pick_base(anyio.run(present))
    except (PreflightError, OSError):  # no Docker here: the first build fetches the default
        return DEFAULT_BASE


def _schema_command() -> click.Command:
    def callback(test: bool) -> None:
        from preflight_sdk.config import json_schema

        click.echo(json.dumps(json_schema("test" if test else "e2e"), indent=2))

    return click.Command(
        "schema",
        callback=callback,
        params=[click.Option(["--test"], is_flag=True, default=False, help="The schema of YAML test files.")],
        short_help="Print the JSON Schema of e2e.yaml (or of test files).",
        help="Print the JSON Schema (2020-12) of e2e.yaml, or with --test of YAML test files.",
    )


def _mcp_command() -> click.Command:
    from preflight_sdk.faces.mcp import launcher as mcp_launcher

    def callback(
        project: str | None, engine_host: str | None, docker_context: str | None, **options: Any
    ) -> None:
        settings = _settings(click.get_current_context())
        if project is None and settings.project_given:
            project = settings.project
        engine = mcp_launcher.engine_options(
            engine_host or settings.engine_host, docker_context or settings.context
        )
        mcp_launcher.run_server(project=project, **options, **engine)

    return click.Command(
        "mcp",
        callback=callback,
        params=[p for p in mcp_launcher.command.params if p.name != "version"],
        short_help="Serve the tools to an MCP client over stdio (= preflight-mcp).",
        help=mcp_launcher.command.help,
    )
