"""Notebook rendering: static HTML/text for results, and the ipywidgets form."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.clarify import ClarifyResult, clarify, read_architecture
from preflight_sdk.clarify.widgets import clarify_form


@pytest.mark.anyio
async def test_results_render_as_static_html_and_text(repo: Path) -> None:
    first = await clarify(repo, "Add OAuth login")
    bundle = first._repr_mimebundle_()
    assert (
        "auth_library" in bundle["text/plain"] and "Authentication strategy = OAuth" in bundle["text/plain"]
    )
    assert "<ol>" in bundle["text/html"] and "Which authentication library" in bundle["text/html"]
    done = await clarify(repo, "x", answers={"auth_library": "Auth0"}, session_id=first.session_id)
    html = done._repr_mimebundle_()["text/html"]
    assert '<a href="docs/CURRENT_TASK.md"' in html and "docs/adr/" in html
    arch = (await read_architecture(repo))._repr_mimebundle_()
    assert "Authentication: Library = Auth0, Strategy = OAuth" in arch["text/plain"]
    assert "<td>Auth0</td>" in arch["text/html"]


@pytest.mark.anyio
async def test_the_form_collects_answers_and_continues_the_session(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")
    calls: list[tuple[dict[str, object], str]] = []

    async def submit(answers: dict[str, str | list[str]], session_id: str) -> ClarifyResult:
        calls.append((dict(answers), session_id))
        return await clarify(repo, "Add authentication", answers=answers, session_id=session_id)

    form = clarify_form(first, submit)
    controls = {q.id: box for q, box in zip(first.questions, form.widget.children[1:], strict=False)}
    strategy = controls["auth_strategy"].children[1]
    strategy.value = "OAuth"
    library_other = controls["auth_library"].children[-1]
    library_other.value = "in-house SSO"
    criteria = controls["acceptance_criteria"].children[1]
    criteria.value = "Users can sign in\nUsers can sign out"
    assert form.answers() == {
        "auth_strategy": "OAuth",
        "auth_library": "Other: in-house SSO",
        "acceptance_criteria": "Users can sign in\nUsers can sign out",
    }
    form.submit().join(timeout=30)
    assert calls and calls[0][1] == first.session_id
    assert form.error is None and form.result.status == "completed"
    rendered = form.widget.children[0].value
    assert "docs/CURRENT_TASK.md" in rendered and "<a href=" in rendered
    assert "- [ ] Users can sign out" in (repo / "docs/CURRENT_TASK.md").read_text()


@pytest.mark.anyio
async def test_the_form_shows_an_invalid_answer_and_keeps_the_questions(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")

    async def submit(answers: dict[str, str | list[str]], session_id: str) -> ClarifyResult:
        return await clarify(repo, "x", answers={"auth_strategy": "Carrier pigeon"}, session_id=session_id)

    form = clarify_form(first, submit)
    form.widget.children[-2].click()  # the Submit button
    assert form.pending is not None
    form.pending.join(timeout=30)
    assert form.error is not None and form.error.code == "INVALID_ANSWER"
    assert "Carrier pigeon" in form.widget.children[-1].value
    assert form.result is first
