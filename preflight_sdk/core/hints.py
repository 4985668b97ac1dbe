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

Two things only the face knows, it says: what "the same call" was (`RETRY`, "then make the same
call again": a config error met by `preflight run` says "then run `preflight run` again", not
`init`), passed as `again`; and which details it shows beside the hint (`shown`: the CLI prints
non-empty lists such as `logTail` under the error, and a detail it does not print stays
`details.logTail`). Without them: "then try again", and `details.X`.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["OPERATION_NAMES", "RETRY", "Face", "for_face"]

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
RETRY = "then make the same call again"
"""The neutral words for calling again whatever failed; the face names the call (`again`)."""

_CALL = re.compile(r"\bcall `([a-z_]+)`")
_NAME = re.compile(r"`([a-z_]+)`")
_DETAIL = re.compile(r"\bdetails\.([A-Za-z_]+)(\[\])?(?:\.([A-Za-z_]+))?")


def for_face(text: str, face: Face, *, again: str | None = None, shown: frozenset[str] | None = None) -> str:
    """Return `text` (a hint in the neutral form above) as `face` says it.

    `again` is how the face says the call that failed ("run `preflight run`"); `shown` the
    details it prints beside the hint (None: the CLI's default, every detail).
    """
    if RETRY in text:
        text = text.replace(RETRY, f"then {again} again" if again else "then try again")
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

        def detail(match: re.Match[str]) -> str:
            if shown is not None and match.group(1) not in shown:
                return match.group(0)
            return f"{match.group(3) or match.group(1)} (shown with this error)"

        text = _DETAIL.sub(detail, text)
    return text


def _spelled(name: str, face: Face) -> str:
    if face == "mcp":
        return f"preflight_{name}"
    if face == "cli":
        return f"preflight {_CLI_COMMANDS.get(name, name.replace('_', '-'))}"
    return f"project.{name}()"
