"""Extra options of generated commands that are not parameters of their operation.

An entry maps an operation name to `Extension`s: each adds one Click option to that operation's
command and may change the command's arguments before they are validated (for example an option
that fills in another argument). Keep per-command behaviour here, never in the generator.
"""

from __future__ import annotations

from typing import Any

import click

from .cli_params import Extension

__all__ = ["EXTENSIONS"]


def _self(value: Any, args: dict[str, Any]) -> None:
    if value:
        args["self_check"] = True


EXTENSIONS: dict[str, tuple[Extension, ...]] = {
    # `preflight verify --self`: the spelling users know for `--self-check`.
    "verify": (
        Extension(
            option=click.Option(["--self", "self_"], is_flag=True, help="Same as --self-check."),
            apply=_self,
        ),
    ),
}
