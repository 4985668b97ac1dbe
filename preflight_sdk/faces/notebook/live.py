"""The live view an operation shows in its notebook cell while it works.

`live_sink("build")` returns a `LiveView`: a progress sink (call it with `ProgressEvent`s) that,
inside a Jupyter kernel, displays at once in the current cell:

- a header with the operation and, at the end, its outcome and duration;
- one progress bar per scope (a service for build and setup, a suite for run) and an overall bar
  when the events count units (`done`/`total`);
- the current step;
- the live log in a collapsible section, fed with `Output.append_stdout` so it works from any
  thread; at the end the log collapses and every bar is full (green) or shows the failure (red).

Log lines are batched (a few updates a second at most) and the log keeps the last 400 lines, so a
chatty build does not flood the front end. Outside a kernel nothing is displayed and nothing
raises: the widgets are plain objects whose state can be read.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from preflight_sdk.core.progress import ProgressEvent

from .kernel import in_kernel

__all__ = ["LOG_LINES", "LiveView", "live_sink"]

LOG_LINES = 400
"""How many of the last log lines the live log keeps."""
_FLUSH_EVERY = 0.25  # seconds between two log updates sent to the front end
_STYLE = {"description_width": "initial"}
_LAYOUT = {"width": "420px"}
_MARK = {"ok": "✓", "failed": "✗"}


class _Bar:
    """One scope's bar: a unit (a service: 0 → 1) or a count of cases (a suite)."""

    def __init__(self, scope: str, *, counting: bool) -> None:
        self.scope = scope
        self.counting = counting
        self.count = 0
        self.failed = False
        self.finished = False
        self.widget = w.IntProgress(
            value=0, min=0, max=1, description=scope, style=_STYLE, layout=_LAYOUT, bar_style="info"
        )

    def set(self, value: int, maximum: int) -> None:
        maximum = max(maximum, value, 1)
        if maximum >= self.widget.max:  # raise max first: value is clipped to it
            self.widget.max = maximum
            self.widget.value = value
        else:
            self.widget.value = value
            self.widget.max = maximum

    def finish(self, *, failed: bool = False) -> None:
        """Fill the bar: green, or red when this scope failed."""
        self.failed = self.failed or failed
        full = max(self.count, 1) if self.counting else 1
        self.set(full, full)
        self.finished = True
        self.widget.bar_style = "danger" if self.failed else "success"


class LiveView:
    """A progress sink that shows bars, the current step and a live log (see the module docstring).

    Attributes:
        widget: the whole view (a VBox), displayed in the current cell when created in a kernel.
        header: the operation and its outcome (HTML).
        step: the current step (HTML).
        overall: the bar of units done over units in all, when the events carry counts.
        bars: one bar per scope (IntProgress), by scope name.
        log: the live log (Output) inside `accordion`.
        status: None while running, then `ok` or `failed`.
    """

    def __init__(self, operation: str, *, display: bool = True) -> None:
        self.operation = operation
        self.status: str | None = None
        self.step_text = ""
        self.lines = 0
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._shown: list[str] = []
        self._last_flush = 0.0
        self._timer: threading.Timer | None = None
        self._bars: dict[str, _Bar] = {}
        self.header = w.HTML(f"<b>{html.escape(operation)}</b> <i>running…</i>")
        self.overall = w.IntProgress(
            value=0, min=0, max=1, description=operation, style=_STYLE, layout=_LAYOUT, bar_style="info"
        )
        self.overall.layout.display = "none"  # shown once an event carries counts
        self.bar_box = w.VBox([])
        self.step = w.HTML("")
        self.log = w.Output()
        self.accordion = w.Accordion(children=[self.log], titles=("log",), selected_index=0)
        self.accordion.layout.display = "none"  # shown with the first log line
        self.widget = w.VBox([self.header, self.overall, self.bar_box, self.step, self.accordion])
        # Displayed at once (so it lands in the calling cell) but empty until the first event:
        # an operation that reports nothing (a plain `logs` call) leaves no stale view behind.
        self.widget.layout.display = "none"
        self._handle: Any = None
        if display and in_kernel():
            from IPython import display as ipython_display

            show: Callable[..., Any] = ipython_display.display
            self._handle = show(self._bundle(""), raw=True, display_id=True)

    def _bundle(self, text: str) -> dict[str, Any]:
        """The widget, with `text` as what renderers without widgets show (a saved notebook on GitHub)."""
        data: dict[str, Any] = self.widget._repr_mimebundle_()
        data["text/plain"] = text
        return data

    def summary(self) -> str:
        """One line per bar and the outcome, as plain text (empty while nothing happened)."""
        if self.status is None:
            return ""
        lines = [f"{self.operation}: {'failed' if self.status == 'failed' else 'done'} · {self.step_text}"]
        lines += [
            f"  {'✗' if bar.failed else '✓'} {bar.scope}" + (f" ({bar.count})" if bar.counting else "")
            for bar in self._bars.values()
        ]
        return "\n".join(lines)

    @property
    def bars(self) -> dict[str, Any]:
        """The per-scope bars (IntProgress), by scope."""
        return {scope: bar.widget for scope, bar in self._bars.items()}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # -- events -----------------------------------------------------------------------------

    def __call__(self, event: ProgressEvent) -> None:
        """Take one event (the `ProgressSink` interface)."""
        if self.widget.layout.display == "none":
            self.widget.layout.display = None
        if event.kind == "log":
            self._add_line(f"[{event.scope}] {event.message}" if event.scope else event.message)
            return
        self.flush()
        if event.kind == "done":
            self._done(event)
            return
        if event.total is not None and event.done is not None:
            self.overall.layout.display = None
            self.overall.max = max(event.total, event.done, 1)
            self.overall.value = event.done
            self.overall.description = f"{self.operation} {event.done}/{event.total}"
        if event.kind == "case":
            self._case(event)
        elif event.scope is not None:
            self._step(event)
        mark = _MARK.get(event.status or "", "…" if event.status == "started" else "")
        self.step.value = f"{mark} {html.escape(event.message)}".strip()

    def _bar(self, scope: str, *, counting: bool) -> _Bar:
        bar = self._bars.get(scope)
        if bar is None:
            bar = self._bars[scope] = _Bar(scope, counting=counting)
            self.bar_box.children = [*self.bar_box.children, bar.widget]
        return bar

    def _step(self, event: ProgressEvent) -> None:
        scope = event.scope or ""
        if event.status == "started" and any(b.counting and not b.finished for b in self._bars.values()):
            for bar in self._bars.values():  # a new suite began: the previous one is complete
                if bar.counting and not bar.finished and bar.scope != scope:
                    bar.finish()
        if scope not in self._bars and event.total is None:
            return  # a step of no countable scope (the network, the mocks): the step label says it
        if event.kind == "step" and (scope not in self._bars or not self._bars[scope].counting):
            bar = self._bar(scope, counting=False)
            if event.status == "started":
                bar.widget.bar_style = "info"
            elif event.status in ("ok", "failed", "skipped"):
                bar.finish(failed=event.status == "failed")
                if event.status == "skipped":
                    bar.widget.bar_style = "warning"

    def _case(self, event: ProgressEvent) -> None:
        bar = self._bar(event.scope or self.operation, counting=True)
        bar.count += 1
        bar.failed = bar.failed or event.status == "failed"
        remaining = max((event.total or 0) - (event.done or 0), 0)
        bar.set(bar.count, bar.count + remaining)
        bar.widget.description = f"{bar.scope} {bar.count}"
        bar.widget.bar_style = "danger" if bar.failed else "info"

    def _done(self, event: ProgressEvent) -> None:
        failed = event.status == "failed" or (
            event.status is None
            and (event.message.startswith("failed") or any(b.failed for b in self._bars.values()))
        )
        self.status = "failed" if failed else "ok"
        for bar in self._bars.values():
            if not bar.finished:
                bar.finish()
                if failed and not bar.failed and not bar.counting:
                    bar.widget.bar_style = "warning"  # cut short by another part's failure
        if self.overall.layout.display != "none" or self._bars:
            self.overall.layout.display = None
            self.overall.max = max(self.overall.max, self.overall.value, 1)
            self.overall.value = self.overall.max
            self.overall.bar_style = "danger" if failed else "success"
        elapsed = time.monotonic() - self._started
        colour = "#cf222e" if failed else "#1a7f37"
        self.header.value = (
            f'<b>{html.escape(self.operation)}</b> <span style="color:{colour}">{_MARK[self.status]} '
            f"{'failed' if failed else 'done'}</span> in {elapsed:.1f} s"
        )
        self.step_text = event.message
        self.step.value = html.escape(event.message)
        self.flush()
        self.accordion.set_title(0, f"log ({self.lines} lines)")
        self.accordion.selected_index = None
        if self._handle is not None:  # what stays visible where widgets are not rendered
            self._handle.update(self._bundle(self.summary()), raw=True)

    # -- log --------------------------------------------------------------------------------

    def _add_line(self, line: str) -> None:
        with self._lock:
            self._pending.append(line)
            self.lines += 1
            due = time.monotonic() - self._last_flush >= _FLUSH_EVERY
            if not due and self._timer is None:
                self._timer = threading.Timer(_FLUSH_EVERY, self.flush)
                self._timer.daemon = True
                self._timer.start()
        if due:
            self.flush()

    def flush(self) -> None:
        """Send the buffered log lines to the log widget now."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            batch, self._pending = self._pending, []
            self._last_flush = time.monotonic()
            if not batch:
                return
            self.accordion.layout.display = None
            self._shown.extend(batch)
            if len(self._shown) <= LOG_LINES:
                self.log.append_stdout("\n".join(batch) + "\n")
            else:
                hidden = self.lines - LOG_LINES
                self._shown = self._shown[-LOG_LINES:]
                text = f"… {hidden} earlier lines not shown\n" + "\n".join(self._shown) + "\n"
                self.log.outputs = ({"output_type": "stream", "name": "stdout", "text": text},)
            self.accordion.set_title(0, f"log ({self.lines} lines)")


def live_sink(operation: str) -> LiveView:
    """Return a progress sink showing `operation`'s progress live in the current notebook cell.

    The SDK uses it by default inside Jupyter (`progress=None`); pass `progress=False` to an
    operation to show nothing. Outside a kernel it displays nothing and never raises.
    """
    return LiveView(operation)
