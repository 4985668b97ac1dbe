"""A notebook form for a clarification: answer the questions, submit, see the files written.

```python
r = await project.clarify("Add authentication")
clarify_form(r, lambda answers, sid: project.clarify("Add authentication", answers=answers, session_id=sid))
```

Single choices are radio buttons, multiple choices are checkboxes, free text is a text area; an
"Other" box next to a choice sends `"Other: <text>"`. Submit runs the given coroutine function in
a worker thread with its own event loop (widget callbacks cannot await), then shows the next
questions, or the created files as links. ipywidgets is imported only when a form is built.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..display import render_html
from ..errors import PreflightError
from .questions import AnswerValue, Question
from .results import ClarifyResult
from .vocab import OTHER

__all__ = ["ClarifyForm", "clarify_form"]

Submit = Callable[[dict[str, AnswerValue], str], Awaitable[ClarifyResult]]


class ClarifyForm:
    """The form's widget (`widget`), its current `result`, and `submit()` for scripts and tests.

    `pending` is the worker thread of the last submission (join it to wait), `error` the
    `PreflightError` it raised, if any (the questions stay on screen with the message).
    """

    def __init__(self, result: ClarifyResult, submit: Submit) -> None:
        import ipywidgets

        self._w: Any = ipywidgets
        self._submit = submit
        self._inputs: dict[str, Callable[[], AnswerValue | None]] = {}
        self.result = result
        self.error: PreflightError | None = None
        self.pending: threading.Thread | None = None
        self.widget: Any = ipywidgets.VBox()
        self._status: Any = ipywidgets.HTML()
        self._render()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _control(self, q: Question) -> Any:
        w = self._w
        flag = " <i>(optional)</i>" if q.optional else ""
        label = w.HTML(f"<b>{html.escape(q.question)}</b>{flag}")
        choices = [o for o in q.options or [] if o != OTHER]
        other = w.Text(placeholder="Other: your own value") if q.other_id else None
        if q.type == "single_choice":
            radio = w.RadioButtons(options=choices, value=None)

            def single() -> AnswerValue | None:
                if other is not None and other.value.strip():
                    return f"Other: {other.value.strip()}"
                return str(radio.value) if radio.value is not None else None

            self._inputs[q.id] = single
            parts = [label, radio]
        elif q.type == "multi_choice":
            boxes = [w.Checkbox(description=o, value=False, indent=False) for o in choices]

            def multi() -> AnswerValue | None:
                picked = [str(b.description) for b in boxes if b.value]
                if other is not None and other.value.strip():
                    picked.append(f"Other: {other.value.strip()}")
                return picked or None

            self._inputs[q.id] = multi
            parts = [label, *boxes]
        else:
            area = w.Textarea(placeholder=q.label)
            self._inputs[q.id] = lambda: area.value if area.value.strip() else None
            parts = [label, area]
        if other is not None:
            parts.append(other)
        return w.VBox(parts)

    def _render(self) -> None:
        w = self._w
        self._inputs = {}
        if self.result.status == "completed":
            self.widget.children = [w.HTML(render_html(self.result))]
            return
        button = w.Button(description="Submit", button_style="primary")
        button.on_click(lambda _: self.submit())
        head = w.HTML(
            f"<b>Clarification</b> (session <code>{html.escape(self.result.session_id or '')}</code>)"
        )
        controls = [self._control(q) for q in self.result.questions]
        self.widget.children = [head, *controls, button, self._status]

    def answers(self) -> dict[str, AnswerValue]:
        """Return the answers currently entered (unanswered questions are left out)."""
        return {qid: value for qid, read in self._inputs.items() if (value := read()) is not None}

    def submit(self) -> threading.Thread:
        """Send the entered answers; returns the worker thread (join it to wait for the result)."""
        answers, session = self.answers(), self.result.session_id or ""
        self._status.value = "<i>Submitting…</i>"

        def run() -> None:
            try:
                self.result = anyio.run(self._submit, answers, session)
                self.error = None
                self._status.value = ""
                self._render()
            except PreflightError as exc:
                self.error = exc
                hint = f"<br>{html.escape(exc.hint)}" if exc.hint else ""
                self._status.value = f'<span style="color:#b00">{html.escape(exc.message)}</span>{hint}'

        thread = threading.Thread(target=run, name="preflight-clarify-form", daemon=True)
        self.pending = thread
        thread.start()
        return thread


def clarify_form(result: ClarifyResult, submit: Submit) -> ClarifyForm:
    """Return a form for `result`; `submit(answers, session_id)` continues the session.

    Display the returned object (or its `widget`) in a notebook cell.
    """
    return ClarifyForm(result, submit)
