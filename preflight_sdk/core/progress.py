"""Progress events: what long operations report while they work.

A sink is a plain callable taking a `ProgressEvent`; it is called on the event loop's thread and
must return quickly. The MCP face turns events into `notifications/progress`, the notebook into
progress bars and a live log, the CLI into lines on stderr. Every `Project` method that accepts
`progress=` also takes `False` (report nothing) or `None` (the default: whatever a face installed
in `face_hooks.default_progress`: the notebook face's live view inside Jupyter, nothing elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import msgspec

from . import face_hooks

__all__ = ["ProgressArg", "ProgressEvent", "ProgressSink", "Reporter", "fan_out", "resolve_sink"]


class ProgressEvent(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One thing that happened during an operation.

    Attributes:
        kind: `log` (a whole output line), `step` (a stage began or ended), `case` (a test case
            finished), `done` (the operation finished).
        message: text for a human or an agent.
        scope: what it is about: a service, mock or suite name.
        done: units of `scope` finished so far (for bars), when known.
        total: units of `scope` in all, when known.
        status: for `step` and `case`: `started`, `ok`, `failed`, `skipped`.
        operation: the method that reports (`build`, `setup`, `run`…).
    """

    kind: Literal["log", "step", "case", "done"]
    message: str
    scope: str | None = None
    done: int | None = None
    total: int | None = None
    status: Literal["started", "ok", "failed", "skipped"] | None = None
    operation: str | None = None


ProgressSink = Callable[[ProgressEvent], None]
ProgressArg = ProgressSink | bool | None
"""What `progress=` accepts: a sink, `False` for none, `None` for the default (live view in Jupyter)."""


def fan_out(sinks: Sequence[ProgressSink]) -> ProgressSink:
    """Return one sink that forwards every event to each of `sinks`."""

    def emit(event: ProgressEvent) -> None:
        for sink in sinks:
            sink(event)

    return emit


def resolve_sink(progress: ProgressArg, operation: str) -> ProgressSink | None:
    """Return the sink for a `progress=` argument.

    A callable is used as it is; `False` reports nothing; `None` and `True` mean the default sink a
    face provides (`face_hooks.default_progress`), if any.
    """
    if callable(progress):
        return progress
    hook = None if progress is False else face_hooks.default_progress()
    if hook is None:
        return None
    sink: ProgressSink | None = hook(operation)
    return sink


class Reporter:
    """The helper an operation reports through: stamps its name and never lets a sink break it."""

    def __init__(self, sink: ProgressSink | None, operation: str) -> None:
        self._sink = sink
        self.operation = operation
        self.finished = False

    @property
    def active(self) -> bool:
        """Whether anyone listens."""
        return self._sink is not None

    def emit(
        self,
        kind: Literal["log", "step", "case", "done"],
        message: str,
        *,
        scope: str | None = None,
        done: int | None = None,
        total: int | None = None,
        status: Literal["started", "ok", "failed", "skipped"] | None = None,
    ) -> None:
        """Send one event (a failing sink is ignored: progress must never fail the work)."""
        if kind == "done":
            self.finished = True
        if self._sink is None:
            return
        event = ProgressEvent(
            kind=kind,
            message=message,
            scope=scope,
            done=done,
            total=total,
            status=status,
            operation=self.operation,
        )
        try:
            self._sink(event)
        except Exception:
            pass

    def log(self, line: str, *, scope: str | None = None) -> None:
        """Report one whole output line."""
        self.emit("log", line, scope=scope)

    def step(
        self,
        message: str,
        *,
        scope: str | None = None,
        status: Literal["started", "ok", "failed", "skipped"] = "started",
        done: int | None = None,
        total: int | None = None,
    ) -> None:
        """Report that a stage started or ended."""
        self.emit("step", message, scope=scope, status=status, done=done, total=total)

    def finish(self, *, ok: bool, message: str | None = None) -> None:
        """Report the end of the operation (once; a `done` already sent by the work counts)."""
        if not self.finished:
            self.emit("done", message or ("done" if ok else "failed"), status="ok" if ok else "failed")
