"""Hints in one neutral form, each face wording them its own way.

A hint (`PreflightError.hint`, the envelope's `error.hint`) names an operation as its method name
in backticks, e.g. "call `build` first", "`list_runs` shows them", and a part of the error's
details as `details.logTail`. Written that way, it is worded for whoever reads it by a `Wording`:
how that face names an operation, the verb it calls it with, and how it points at a detail.

| wording | "call `build` first" | "`list_runs` shows them" | "read details.logTail" |
|---|---|---|---|
| `SDK` (here: `PreflightError.hint`) | call `project.build()` first | `project.list_runs()` shows them | read details.logTail |
| the MCP face's (`faces/mcp/words.py`) | the tool's name | the tool's name | read details.logTail |
| the CLI's (`faces/cli/words.py`) | run the command | the command | read logTail (shown with this error) |

The core knows no face's words: each face passes its own `Wording` where it shows an error or
an operation's tips. A name in backticks that is not an operation (a YAML key such as `ports`)
is left as it is. The names are those `@operation` registered: any code that raises these errors
runs a `Project`, so the class (and with it every name) is defined by then.

Two things only the face knows, it says: what "the same call" was (`RETRY`, "then make the same
call again": a config error met by the CLI's `run` names that command, not `init`), passed as
`again`; and which details it shows beside the hint (`shown`: a detail it does not print stays
`details.logTail`). Without them: "then try again", and `details.X`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["OPERATION_NAMES", "RETRY", "SDK", "Wording", "word"]

OPERATION_NAMES: set[str] = set()
"""The names of the `Project` operations (filled by `@operation` as the class is defined)."""

RETRY = "then make the same call again"
"""The neutral words for calling again whatever failed; the face names the call (`again`)."""

_CALL = re.compile(r"\bcall `([a-z_]+)`")
_NAME = re.compile(r"`([a-z_]+)`")
_DETAIL = re.compile(r"\bdetails\.([A-Za-z_]+)(\[\])?(?:\.([A-Za-z_]+))?")


@dataclass(frozen=True)
class Wording:
    """How one face says a hint.

    Attributes:
        operation: the face's name of an operation, from its method name (`build`).
        call: the verb before an operation to use ("call", "run").
        detail: how it points at a detail it shows beside the error (given the detail's
            innermost name, `logTail`), or None to keep `details.logTail` as written.
    """

    operation: Callable[[str], str]
    call: str = "call"
    detail: Callable[[str], str] | None = None


SDK = Wording(operation=lambda name: f"project.{name}()")
"""The SDK's words: operations as the methods a script calls."""


def word(
    text: str, wording: Wording, *, again: str | None = None, shown: frozenset[str] | None = None
) -> str:
    """Return `text` (a hint in the neutral form above) in `wording`'s words.

    `again` is how the face says the call that failed (its own command or tool); `shown` the
    details it prints beside the hint (None: every detail, where the face points at them).
    """
    if RETRY in text:
        text = text.replace(RETRY, f"then {again} again" if again else "then try again")
    if "`" not in text and "details." not in text:
        return text

    def call(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in OPERATION_NAMES:
            return match.group(0)
        return f"{wording.call} `{wording.operation(name)}`"

    def name(match: re.Match[str]) -> str:
        found = match.group(1)
        return f"`{wording.operation(found)}`" if found in OPERATION_NAMES else match.group(0)

    text = _NAME.sub(name, _CALL.sub(call, text))
    detail = wording.detail
    if detail is not None:

        def pointed(match: re.Match[str]) -> str:
            if shown is not None and match.group(1) not in shown:
                return match.group(0)
            return detail(match.group(3) or match.group(1))

        text = _DETAIL.sub(pointed, text)
    return text
