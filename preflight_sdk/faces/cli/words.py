"""The command line's words: an operation is the command a person runs (`preflight runs show`).

The CLI shows an error's details below it, so a hint's `details.logTail` reads "logTail (shown
with this error)". No click here: the pytest plugin words its hints this way too.
"""

from __future__ import annotations

from preflight_sdk.core.hints import Wording

__all__ = ["CLI", "command_of"]

# The CLI spells a few operations as subcommands of `preflight runs`.
_COMMANDS = {
    "list_runs": "runs",
    "get_run": "runs show",
    "diff_runs": "runs diff",
    "resume_run": "runs resume",
    "cancel_run": "runs cancel",
    "get_artifact": "runs artifact",
    "prune_runs": "runs prune",
}


def command_of(operation: str) -> str:
    """The command that runs an operation, as typed at a terminal."""
    return f"preflight {_COMMANDS.get(operation, operation.replace('_', '-'))}"


CLI = Wording(operation=command_of, call="run", detail=lambda name: f"{name} (shown with this error)")
