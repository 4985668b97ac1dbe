"""`preflight mocks`: a project's mocks for a person at a terminal.

    preflight mocks check MOCK [--upstream URL] [-H "Name: value"]   drift against the real service
    preflight mocks requests [--mock-name M] [--since 5m]           what the mocks received

Each subcommand is the generated command of its operation under a shorter name (`check-mock`,
`mock-requests`), so options, output and exit codes are theirs: `check` exits 1 unless every
route still agrees.
"""

from __future__ import annotations

import click

from preflight_sdk.faces.reflection.registry import Operation

from .runs import subcommand

__all__ = ["mocks_group"]

_SUBCOMMANDS = {"check": "check_mock", "requests": "mock_requests"}


def mocks_group(ops: dict[str, Operation]) -> click.Group:
    """The `mocks` group, with a subcommand for each operation of `_SUBCOMMANDS` that `ops` has."""
    group = click.Group(
        "mocks",
        help="The project's HTTP mocks: check them against the real services, read what they received.",
        short_help="Check mocks for drift, read their traffic.",
    )
    for name, op_name in _SUBCOMMANDS.items():
        if op_name in ops:
            group.add_command(subcommand(ops[op_name], name, "mocks"))
    return group
