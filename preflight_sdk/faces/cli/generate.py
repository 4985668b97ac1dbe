"""`preflight generate`: files written from what the project already has.

    preflight generate cases --service orders [--output tests/orders.yaml]

`cases` is the generated command of `generate_cases` under a shorter name, so its options,
output and exit codes are those of `preflight generate-cases`.
"""

from __future__ import annotations

import click

from preflight_sdk.faces.reflection.registry import Operation

from .app import command_help
from .runs import subcommand

__all__ = ["generate_group"]

_SUBCOMMANDS = {"cases": "generate_cases"}


def generate_group(ops: dict[str, Operation]) -> click.Group:
    """The `generate` group (its subcommands are the operations of `_SUBCOMMANDS` that `ops` has)."""
    group = click.Group(
        "generate",
        help="Write files from what the project already has: `cases` from a service's OpenAPI contract.",
        short_help="Generate test cases from a contract.",
    )
    for name, op_name in _SUBCOMMANDS.items():
        if op_name in ops:
            command = subcommand(ops[op_name], name, "generate")
            command.params = _as_options(command.params)
            command.help = command_help(ops[op_name], command.params, ["preflight", "generate", name])
            group.add_command(command)
    return group


def _as_options(params: list[click.Parameter]) -> list[click.Parameter]:
    """Positional arguments as required options: `generate cases --service orders` reads as it does."""
    return [_as_option(p) for p in params]


def _as_option(param: click.Parameter) -> click.Parameter:
    if isinstance(param, click.Argument) and param.name:
        flag = "--" + param.name.replace("_", "-")
        return click.Option([flag, param.name], type=param.type, required=True, help=f"the {param.name}")
    return param
