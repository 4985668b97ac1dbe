"""Hints in each face's own words: one neutral form written once, rendered per face.

A hint (`PreflightError.hint`, the envelope's `error.hint`) names an operation as its method name
in backticks, e.g. "call `build` first", "`list_runs` shows them", and a part of the error's
details as `details.logTail`. Written that way it is rendered here, and only here, for whoever
reads it:

| face | "call `build` first" | "`list_runs` shows them" | "read details.logTail" |
|---|---|---|---|
| `sdk` | call `project.build()` first | `project.list_runs()` shows them | read details.logTail (the error's `details`) |
| `mcp` | call `preflight_build` first | `preflight_list_runs` shows them | read details.logTail |
| `cli` | run `preflight build` first | `preflight runs` shows them | read logTail (shown with this error) |

A name in backticks that is not an operation (a YAML key such as `ports`) is left as it is. The
names are those `@operation` registered: any code that raises these errors runs a `Project`, so
the class (and with it every name) is defined by then.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["OPERATION_NAMES", "Face", "for_face"]

Face = Literal["sdk", "mcp", "cli"]

OPERATION_NAMES: set[str] = set()
"""The names of the `Project` operations (filled by `@operation` as the class is defined)."""

# The CLI spells a few operations as subcommands of `preflight runs`.
_CLI_COMMANDS = {
    "list_runs": "runs",
    "get_run": "runs show",
    "diff_runs": "runs diff",
    "resume_run": "runs resume",
    "cancel_run": "runs cancel",
    "get_artifact": "runs artifact",
    "prune_runs": "runs prune",
}
_CALL = re.compile(r"\bcall `([a-z_]+)`")
_NAME = re.compile(r"`([a-z_]+)`")
_DETAIL = re.compile(r"\bdetails\.([A-Za-z_]+)(\[\])?(?:\.([A-Za-z_]+))?")


def for_face(text: str, face: Face) -> str:
    """Return `text` (a hint in the neutral form above) as `face` says it."""
    if "`" not in text and "details." not in text:
        return text

    def call(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in OPERATION_NAMES:
            return match.group(0)
        return f"{'run' if face == 'cli' else 'call'} `{_spelled(name, face)}`"

    def name(match: re.Match[str]) -> str:
        found = match.group(1)
        return f"`{_spelled(found, face)}`" if found in OPERATION_NAMES else match.group(0)

    text = _NAME.sub(name, _CALL.sub(call, text))
    if face == "cli":
        text = _DETAIL.sub(lambda m: f"{m.group(3) or m.group(1)} (shown with this error)", text)
    return text


def _spelled(name: str, face: Face) -> str:
    if face == "mcp":
        return f"preflight_{name}"
    if face == "cli":
        return f"preflight {_CLI_COMMANDS.get(name, name.replace('_', '-'))}"
    return f"project.{name}()"
