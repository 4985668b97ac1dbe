"""Extra options of generated commands that are not parameters of their operation.

An entry maps an operation name to `Extension`s: each adds one Click option to that operation's
command and may change the command's arguments before they are validated (for example an option
that fills in another argument). Keep per-command behaviour here, never in the generator.
"""

from __future__ import annotations

from typing import Any

import click

from .cli_params import Extension

__all__ = ["EXTENSIONS", "SHARD_ON"]


def _self(value: Any, args: dict[str, Any]) -> None:
    if value:
        args["self_check"] = True


def _shard_on(value: Any, args: dict[str, Any]) -> None:
    """`--shard-on A,B`: the engines of `shards`, comma-separated."""
    if value is not None:
        args["shards"] = [part.strip() for part in str(value).split(",") if part.strip()]


SHARD_ON = Extension(
    option=click.Option(
        ["--shard-on"],
        metavar="ENGINES",
        default=None,
        help="Split the suites over these engines, comma-separated: `local`, `context:NAME` or a "
        "DOCKER_HOST URL (e.g. `local,ssh://ci@builder`). Each runs its own copy of the environment.",
    ),
    apply=_shard_on,
    replaces="shards",
)


def _written_before(value: Any, args: dict[str, Any]) -> None:
    """The composed `init` command writes the starter before the operation runs."""


EXTENSIONS: dict[str, tuple[Extension, ...]] = {
    # `preflight test --shard-on local,ssh://ci@builder` (and `preflight run`): the readable `--shards`.
    "run": (SHARD_ON,),
    # `preflight init --from-compose FILE`: a starter e2e.yaml whose services come from FILE.
    "init": (
        Extension(
            option=click.Option(
                ["--from-compose"],
                metavar="FILE",
                type=click.Path(exists=True, dir_okay=False),
                help="Write an e2e.yaml whose services come from this compose file (see docs/compose.md).",
            ),
            apply=_written_before,
        ),
    ),
    # `preflight verify --self`: the spelling users know for `--self-check`.
    "verify": (
        Extension(
            option=click.Option(["--self", "self_"], is_flag=True, help="Same as --self-check."),
            apply=_self,
        ),
    ),
}
