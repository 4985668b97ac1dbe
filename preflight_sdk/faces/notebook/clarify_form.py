"""A notebook form for a clarification: answer the questions, submit, see the files written.

In a Jupyter kernel nothing needs wiring: a `needs_clarification` result returned by
`project.clarify(...)` displays as this form, and its Submit continues the same session (the call
`project.clarify(intention, answers=..., session_id=...)` would make), then shows the created
files with links. `preflight_sdk.faces.notebook.view(result)` returns that same form, to fill from code:

```python
r = await project.clarify("Add authentication")
r                                     # the form
form = view(r)                        # the same form
form.controls["auth_strategy"].value = "OAuth"
form.button.click()
done = form.wait()                    # the completed result; the form now lists the files
```

Single choices are radio buttons, multiple choices are checkboxes, free text is a text area; an
"Other" box next to a choice sends `"Other: <text>"`. Submit runs the continuation in a worker
thread with its own event loop (widget callbacks cannot await), then shows the next questions, or
the created files as links. ipywidgets is imported only when a form is built.
"""

from __future__ import annotations

import html
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from preflight_sdk.clarify.origin import origin_of
from preflight_sdk.clarify.questions import AnswerValue, Question
from preflight_sdk.clarify.results import ClarifyResult
from preflight_sdk.clarify.vocab import OTHER
from preflight_sdk.core.errors import PreflightError

from .static import render_html, render_text

__all__ = ["ClarifyForm", "clarify_form", "form_for", "live_form"]

Submit = Callable[[dict[str, AnswerValue], str], Awaitable[ClarifyResult]]


class ClarifyForm:
    """A clarification form: displays as its `widget`; `submit()`/`wait()` for scripts and tests.

    Attributes:
        widget: the whole form (a VBox).
        result: the result shown now (the questions, then the completed result).
        controls: the input of each question shown, by question id: RadioButtons (single choice),
            a VBox of Checkboxes (multiple choice), a Textarea (free text).
        others: the "Other: your own value" Text box of each choice question that has one.
        button: the Submit button.
        pending: the worker thread of the last submission (or None).
        error: the `PreflightError` the last submission raised (the questions stay on screen with
            its message), else None.
    """

    def __init__(self, result: ClarifyResult, submit: Submit) -> None:
        import ipywidgets

        self._w: Any = ipywidgets
        self._submit = submit
        self._inputs: dict[str, Callable[[], AnswerValue | None]] = {}
        self.result = result
        self.controls: dict[str, Any] = {}
        self.others: dict[str, Any] = {}
        self.button: Any = None
        self.error: PreflightError | None = None
        self.pending: threading.Thread | None = None
        self.widget: Any = ipywidgets.VBox()
        self._status: Any = ipywidgets.HTML()
        self._render()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        data = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(data, dict):  # where widgets are not rendered, the result's text
            data["text/plain"] = render_text(self.result)
        return data

    def _control(self, q: Question) -> Any:
        w = self._w
        flag = " <i>(optional)</i>" if q.optional else ""
        label = w.HTML(f"<b>{html.escape(q.question)}</b>{flag}")
        choices = [o for o in q.options or [] if o != OTHER]
        other = w.Text(placeholder="Other: your own value") if q.other_id else None
        if q.type == "single_choice":
            control = w.RadioButtons(options=choices, value=None)
            self._inputs[q.id] = _single(control, other)
            parts = [label, control]
        elif q.type == "multi_choice":
            control = w.VBox([w.Checkbox(description=o, value=False, indent=False) for o in choices])
            self._inputs[q.id] = _multi(control, other)
            parts = [label, *control.children]
        else:
            control = w.Textarea(placeholder=q.label)
            self._inputs[q.id] = _text(control)
            parts = [label, control]
        self.controls[q.id] = control
        if other is not None:
            self.others[q.id] = other
            parts.append(other)
        return w.VBox(parts)

    def _render(self) -> None:
        w = self._w
        self._inputs, self.controls, self.others = {}, {}, {}
        if self.result.status == "completed":
            self.button = None
            self.widget.children = [w.HTML(render_html(self.result))]
            return
        self.button = w.Button(description="Submit", button_style="primary")
        self.button.on_click(lambda _: self.submit())
        head = w.HTML(
            f"<b>Clarification</b> (session <code>{html.escape(self.result.session_id or '')}</code>)"
        )
        controls = [self._control(q) for q in self.result.questions]
        self.widget.children = [head, *controls, self.button, self._status]

    def answers(self) -> dict[str, AnswerValue]:
        """Return the answers currently entered (unanswered questions are left out)."""
        return {qid: value for qid, read in self._inputs.items() if (value := read()) is not None}

    def submit(self) -> threading.Thread:
        """Send the entered answers; returns the worker thread (or call `wait()` for the result)."""
        answers, session = self.answers(), self.result.session_id or ""
        self._status.value = "<i>Submitting…</i>"
        thread = threading.Thread(
            target=self._run, args=(answers, session), name="preflight-clarify-form", daemon=True
        )
        self.pending = thread
        thread.start()
        return thread

    def _run(self, answers: dict[str, AnswerValue], session: str) -> None:
        try:
            self.result = anyio.run(self._submit, answers, session)
        except PreflightError as exc:
            self._failed(exc)
        except Exception as exc:  # a worker thread must not die silently with "Submitting…" shown
            self._failed(PreflightError(f"the submission failed: {type(exc).__name__}: {exc}"))
        else:
            self.error = None
            self._status.value = ""
            self._render()

    def _failed(self, exc: PreflightError) -> None:
        self.error = exc
        hint = f"<br>{html.escape(exc.hint)}" if exc.hint else ""
        self._status.value = f'<span style="color:#b00">{html.escape(exc.message)}</span>{hint}'

    def wait(self, timeout: float | None = 60) -> ClarifyResult:
        """Wait for the last submission; return the result now shown.

        Raises:
            PreflightError: what the submission raised (INVALID_ANSWER, SESSION_EXPIRED…).
            TimeoutError: the submission still runs after `timeout` seconds.
        """
        if self.pending is not None:
            self.pending.join(timeout)
            if self.pending.is_alive():
                raise TimeoutError(f"the clarification is still being submitted after {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result


def _single(radio: Any, other: Any) -> Callable[[], AnswerValue | None]:
    def read() -> AnswerValue | None:
        if other is not None and other.value.strip():
            return f"Other: {other.value.strip()}"
        return str(radio.value) if radio.value is not None else None

    return read


def _multi(boxes: Any, other: Any) -> Callable[[], AnswerValue | None]:
    def read() -> AnswerValue | None:
        picked = [str(b.description) for b in boxes.children if b.value]
        if other is not None and other.value.strip():
            picked.append(f"Other: {other.value.strip()}")
        return picked or None

    return read


def _text(area: Any) -> Callable[[], AnswerValue | None]:
    return lambda: area.value if area.value.strip() else None


def clarify_form(result: ClarifyResult, submit: Submit | None = None) -> ClarifyForm:
    """Return a new form for `result`; `submit(answers, session_id)` continues the session.

    Without `submit`, the form continues the session the way `clarify` does (in the repository
    `result` came from). Display the returned object (or its `widget`) in a notebook cell.

    Raises:
        ValueError: no `submit` is given and `result` does not come from `clarify` in this
            process (e.g. it was decoded from JSON).
    """
    if submit is None:
        origin = origin_of(result)
        if origin is None:
            raise ValueError("this result does not come from clarify in this process: pass submit=")
        submit = origin.resume
    return ClarifyForm(result, submit)


def form_for(result: ClarifyResult) -> ClarifyForm | None:
    """Return the form of a `needs_clarification` result from `clarify`: the same one every time.

    None for a completed result, or one whose origin is unknown (decoded from JSON).
    """
    origin = origin_of(result)
    if result.status != "needs_clarification" or origin is None:
        return None
    form = origin.form() if origin.form is not None else None
    if form is None:
        form = ClarifyForm(result, origin.resume)
        # Weak: the form holds the result, and a strong reference would keep both forever.
        origin.form = weakref.ref(form)
    assert isinstance(form, ClarifyForm)
    return form


def live_form(result: Any) -> ClarifyForm | None:
    """The form a result displays as inside a kernel: a clarification that needs answers, else None."""
    return form_for(result) if isinstance(result, ClarifyResult) else None
