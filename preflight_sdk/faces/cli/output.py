"""What the CLI prints: progress lines on stderr, then a summary or the envelope JSON on stdout.

Exit codes: 0 success, 1 a completed operation whose outcome is a failure (failed tests, a failed
verification) or an internal error, 2 a configuration or usage error, 3 an environment error
(Docker, a build, a health check), 130 cancelled.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import click
import msgspec

from preflight_sdk.core.errors import (
    ConfigError,
    InfrastructureError,
    InputError,
    MockError,
    OperationCancelled,
    PreflightError,
    StateError,
)
from preflight_sdk.core.progress import ProgressEvent
from preflight_sdk.faces.reflection.outcome import envelope_of, error_envelope, internal, told_once

from .words import CLI

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_ENVIRONMENT",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Output",
    "error_text",
    "exit_code_of",
    "internal_error",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_CANCELLED = 130
# The first class an error is an instance of decides; anything else (INTERNAL) exits 1.
_EXIT_BY_CLASS: tuple[tuple[type[PreflightError], int], ...] = (
    (OperationCancelled, EXIT_CANCELLED),
    (InfrastructureError, EXIT_ENVIRONMENT),
    (ConfigError, EXIT_USAGE),
    (InputError, EXIT_USAGE),
    (StateError, EXIT_USAGE),
    (MockError, EXIT_USAGE),
)

_MARKS = {"started": "▸", "ok": "✓", "failed": "✗", "skipped": "-"}
_COLORS = {"ok": "green", "failed": "red", "skipped": "yellow"}


class Output:
    """Prints for one command, as JSON (`--json`) or for a human."""

    def __init__(self, *, json: bool) -> None:
        self.json = json

    # -- progress ----------------------------------------------------------------------------

    def progress(self, event: ProgressEvent) -> None:
        """Print one progress event as a line on stderr (the sink given to operations)."""
        scope = f"{event.scope} | " if event.scope else ""
        if event.kind == "log":
            click.echo(click.style(f"  {scope}{event.message}", dim=True), err=True)
            return
        mark = _MARKS.get(event.status or "", "•")
        count = ""
        if event.done is not None:  # no total while it is not known yet: it would change mid-run
            count = f" ({event.done}/{event.total})" if event.total else f" ({event.done})"
        line = f"{mark} {scope}{event.message}{count}"
        click.echo(click.style(line, fg=_COLORS.get(event.status or "")), err=True)

    def sink(self) -> Any:
        """The `progress=` argument for operations: printed lines, or nothing with `--json`."""
        return False if self.json else self.progress

    def note(self, text: str) -> None:
        """A human remark on stderr (nothing with `--json`)."""
        if not self.json:
            click.echo(text, err=True)

    # -- outcome -----------------------------------------------------------------------------

    def result(self, result: Any) -> int:
        """Print a result; return its exit code (1 when its outcome is a failure)."""
        ok = bool(getattr(result, "ok", True))
        if self.json:
            click.echo(msgspec.json.encode(envelope_of(told_once(result))).decode())
        else:
            from preflight_sdk.faces.notebook.static import render_text  # lazy: only needed for human output

            click.echo(render_text(result))
        return EXIT_OK if ok else EXIT_FAILED

    def error(self, error: PreflightError) -> int:
        """Print an error; return its exit code."""
        again = _command()
        if self.json:
            click.echo(msgspec.json.encode(error_envelope(error, CLI, again=again)).decode())
        else:
            click.echo(click.style(f"error: {error_text(error, again=again)}", fg="red"), err=True)
        return exit_code_of(error)

    def cancelled(self) -> int:
        """Report a cancellation (Ctrl-C); return 130."""
        return self.error(OperationCancelled("cancelled", hint="`preflight status` shows what still runs"))


def _command() -> str | None:
    """How the hint says the command that failed: run `preflight run` (None outside a command)."""
    ctx = click.get_current_context(silent=True)
    return f"run `{ctx.command_path}`" if ctx is not None else None


def _shown(error: PreflightError) -> frozenset[str]:
    """The details `error_text` prints under the error (a hint may say they are shown)."""
    details = error.details or {}
    shown = {key for key in _SHOWN_DETAILS if isinstance(details.get(key), list) and details[key]}
    if isinstance(error, ConfigError) and error.problems:
        shown.add("problems")
    services = details.get("services")
    if isinstance(services, list) and any(isinstance(s, dict) and s.get("logTail") for s in services):
        shown.add("services")
    return frozenset(shown)


def error_text(error: PreflightError, *, again: str | None = None) -> str:
    """The error as the CLI prints it: code, message, problems, the hint in CLI words, and the
    details a hint may point at (log lines, stderr), which the text form would otherwise hide.

    `again` names the command that failed, for a hint that says to make the same call again.
    """
    lines = [f"[{error.code}] {error.message}"]
    if isinstance(error, ConfigError):
        lines.extend(f"  - {p.render()}" for p in error.problems)
    lines.append(f"hint: {error.hint_for(CLI, again=again, shown=_shown(error))}")
    for key, value in (error.details or {}).items():
        if key in _SHOWN_DETAILS and isinstance(value, list) and value:
            lines.append(f"{key}:" if len(value) <= 30 else f"{key} (the last 30 of {len(value)} lines):")
            lines.extend(f"  | {line}" for line in value[-30:])
        elif key == "services" and isinstance(value, list):
            for service in value:
                if isinstance(service, dict) and service.get("logTail"):
                    lines.append(f"logTail of {service.get('name', '?')}:")
                    lines.extend(f"  | {line}" for line in service["logTail"][-30:])
    page = (error.details or {}).get("report")
    if isinstance(page, str) and page:  # the run this error ended has its page too
        lines.append(f"view:   {Path(page).absolute().as_uri()}")
    return "\n".join(lines)


_SHOWN_DETAILS = ("logTail", "lines", "stderr")
"""The detail lists a hint sends the reader to; printed under the error in the text form."""


def exit_code_of(error: PreflightError) -> int:
    """The process exit status for an error: 2 usage or configuration, 3 environment, 130 cancelled, else 1."""
    return next((code for kind, code in _EXIT_BY_CLASS if isinstance(error, kind)), EXIT_FAILED)


def internal_error(exc: BaseException) -> PreflightError:
    """Wrap an unexpected exception as INTERNAL, with its traceback printed on stderr."""
    traceback.print_exception(exc, file=sys.stderr)
    return internal(exc, where="preflight")
