"""Command groups that give operations shorter names for a person at a terminal.

    preflight mocks check MOCK [--upstream URL] [-H "Name: value"]   drift against the real service
    preflight mocks requests [--mock-name M] [--since 5m]           what the mocks received
    preflight generate cases --service orders [--output tests/orders.yaml]

Each subcommand is the generated command of its operation under a shorter name (`check-mock`,
`mock-requests`, `generate-cases`), so options, output and exit codes are theirs: `mocks check`
exits 1 unless every route still agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import click
import msgspec

from preflight_sdk.faces.reflection.registry import Operation

from .runs import subcommand

__all__ = ["GROUPS", "ShortNames", "short_names_group"]


def _as_options(params: list[click.Parameter]) -> list[click.Parameter]:
    """Positional arguments as required options: `generate cases --service orders` reads as it does."""
    return [_as_option(p) for p in params]


def _as_option(param: click.Parameter) -> click.Parameter:
    if isinstance(param, click.Argument) and param.name:
        flag = "--" + param.name.replace("_", "-")
        return click.Option([flag, param.name], type=param.type, required=True, help=f"the {param.name}")
    return param


class ShortNames(msgspec.Struct, frozen=True, kw_only=True):
    """A group `preflight NAME`: `subcommands` maps each short name to its operation; `reshape`
    rewrites a subcommand's parameters (its help follows them)."""

    name: str
    help: str
    short_help: str
    subcommands: Mapping[str, str]
    reshape: Callable[[list[click.Parameter]], list[click.Parameter]] | None = None


GROUPS = (
    ShortNames(
        name="mocks",
        help="The project's HTTP mocks: check them against the real services, read what they received.",
        short_help="Check mocks for drift, read their traffic.",
        subcommands={"check": "check_mock", "requests": "mock_requests"},
    ),
    ShortNames(
        name="generate",
        help="Write files from what the project already has: `cases` from a service's OpenAPI contract.",
        short_help="Generate test cases from a contract.",
        subcommands={"cases": "generate_cases"},
        reshape=_as_options,
    ),
)


def short_names_group(names: ShortNames, ops: dict[str, Operation]) -> click.Group:
    """The group `names` describes, with a subcommand for each of its operations that `ops` has."""
    group = click.Group(names.name, help=names.help, short_help=names.short_help)
    for name, op_name in names.subcommands.items():
        if op_name in ops:
            group.add_command(subcommand(ops[op_name], name, names.name, reshape=names.reshape))
    return group
