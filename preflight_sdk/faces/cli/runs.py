"""`preflight runs`: the run store for a person at a terminal.

    preflight runs [--status failed] [--limit 20]     the runs, newest first
    preflight runs show ID [--wait 30s]               one run (the report, as `run` prints it)
    preflight runs diff BASE HEAD                     what changed between two runs
    preflight runs resume ID                          run again what did not pass
    preflight runs cancel ID                          stop a run, from any process
    preflight runs artifact ID NAME                   one file of a run
    preflight runs prune [--keep N] [--max-age 7d]    delete old runs
    preflight runs calls [--limit 50]                 every operation call, on any face

Each subcommand is the generated command of its operation under a shorter name, so options,
output and exit codes are those of `preflight get-run`, `preflight diff-runs`…
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from preflight_sdk.faces.reflection.registry import Operation

from .app import command_help, execute, global_options, operation_command
from .extensions import EXTENSIONS
from .output import Output
from .words import RUNS_SUBCOMMANDS

__all__ = ["runs_group", "subcommand"]


def runs_group(ops: dict[str, Operation]) -> click.Group:
    """The `runs` group (needs `list_runs` and the operations of `RUNS_SUBCOMMANDS`)."""
    listing = operation_command(ops["list_runs"], EXTENSIONS.get("list_runs", ()))
    assert listing.callback is not None
    show_list = listing.callback

    def callback(**values: Any) -> None:
        if click.get_current_context().invoked_subcommand is None:
            show_list(**values)

    group = click.Group(
        "runs",
        params=listing.params,
        callback=callback,
        invoke_without_command=True,
        help="The project's runs, newest first; subcommands show, diff, resume, cancel, prune them.",
        short_help="List, show, diff, resume and cancel runs.",
    )
    for name, op_name in RUNS_SUBCOMMANDS.items():
        if op_name in ops:
            group.add_command(subcommand(ops[op_name], name, "runs", reshape=_positional))
    group.add_command(_calls_command())
    return group


def subcommand(
    op: Operation,
    name: str,
    group: str,
    *,
    reshape: Callable[[list[click.Parameter]], list[click.Parameter]] | None = None,
) -> click.Command:
    """The generated command of `op` as `preflight GROUP NAME`, its parameters rewritten by `reshape`
    (its help follows them)."""
    command = operation_command(op, EXTENSIONS.get(op.name, ()))
    command.name = name
    if reshape is not None:
        command.params = reshape(command.params)
    command.help = command_help(op, command.params, ["preflight", group, name])
    return command


def _positional(params: list[click.Parameter]) -> list[click.Parameter]:
    """Every required option as a positional argument, in order: `preflight runs diff BASE HEAD`."""
    out: list[click.Parameter] = []
    for param in params:
        if isinstance(param, click.Option) and param.required and param.name:
            out.append(click.Argument([param.name], type=param.type, metavar=param.name.upper()))
        else:
            out.append(param)
    return out


def _calls_command() -> click.Command:
    def callback(limit: int) -> None:
        from preflight_sdk.runs.queries import operation_log

        async def work(project: Any, out: Output) -> Any:
            await project.init()
            return await operation_log(project._runs, limit)

        execute(click.get_current_context(), work)

    return click.Command(
        "calls",
        callback=callback,
        params=[
            click.Option(["--limit"], type=click.IntRange(1, 10_000), default=50, show_default=True),
            *global_options(),
        ],
        help="Every operation call on this project (any face: CLI, MCP, SDK), newest first.",
    )
