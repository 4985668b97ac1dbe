"""The command line's words: an operation is the command a person runs (`preflight runs show`).

The CLI shows an error's details below it, so a hint's `details.logTail` reads "logTail (shown
with this error)". No click here: the pytest plugin words its hints this way too.
"""

from __future__ import annotations

from preflight_sdk.core.hints import Wording

__all__ = ["CLI", "RUNS_SUBCOMMANDS", "command_of"]

RUNS_SUBCOMMANDS = {
    "show": "get_run",
    "diff": "diff_runs",
    "resume": "resume_run",
    "cancel": "cancel_run",
    "artifact": "get_artifact",
    "prune": "prune_runs",
}
"""The operations the CLI spells as subcommands of `preflight runs` (`list_runs` is `runs` itself)."""

_COMMANDS = {"list_runs": "runs", **{op: f"runs {name}" for name, op in RUNS_SUBCOMMANDS.items()}}


def command_of(operation: str) -> str:
    """The command that runs an operation, as typed at a terminal."""
    return f"preflight {_COMMANDS.get(operation, operation.replace('_', '-'))}"


CLI = Wording(operation=command_of, call="run", detail=lambda name: f"{name} (shown with this error)")
