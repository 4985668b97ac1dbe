"""Notebook rendering: static HTML/text for results, and the ipywidgets form."""

from __future__ import annotations

import gc
from pathlib import Path

import ipywidgets as w
import msgspec
import pytest

from preflight_sdk.clarify import ClarifyResult, clarify, read_architecture
from preflight_sdk.clarify.origin import origin_of
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.faces.notebook import kernel, view
from preflight_sdk.faces.notebook.clarify_form import ClarifyForm, clarify_form, form_for

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.anyio
async def test_results_render_as_static_html_and_text(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)  # a notebook next to the files: links relative to it
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


@pytest.mark.anyio
async def test_links_point_from_the_working_directory_or_to_the_file(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    done = await clarify(repo, "Fix a typo in the footer", answers={})
    html = done._repr_mimebundle_()["text/html"]
    task = (repo / "docs/CURRENT_TASK.md").resolve().as_uri()
    assert f'<a href="{task}" target="_blank">docs/CURRENT_TASK.md</a>' in html
    # A result decoded from JSON does not know its repository: the path from the repository root.
    decoded = msgspec.json.decode(done.to_json(), type=ClarifyResult)
    assert '<a href="docs/CURRENT_TASK.md"' in decoded._repr_mimebundle_()["text/html"]


@pytest.mark.anyio
async def test_with_no_wiring_the_form_continues_the_session_in_the_results_repository(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    first = await clarify(repo, "Add authentication")
    form = view(first)
    assert isinstance(form, ClarifyForm) and form is form_for(first) is view(first)
    assert form.controls["auth_strategy"].options == ("OAuth", "Email/Password", "Magic Links", "SAML")
    form.controls["auth_strategy"].value = "OAuth"
    form.others["auth_library"].value = "in-house SSO"
    form.button.click()
    done = form.wait(timeout=30)
    assert done.status == "completed" and form.result is done and form.button is None
    assert sorted(a.type for a in done.artifacts) == ["adr", "projection", "task"]
    assert all((repo / a.path).is_file() for a in done.artifacts)
    shown = form.widget.children[0].value
    assert "Clarification completed" in shown and '<a href="docs/CURRENT_TASK.md"' in shown
    assert "in-house SSO" in (await read_architecture(repo)).categories["Authentication"]["Library"]
    done_view = view(done)  # a completed result: the files with links, as static HTML
    assert isinstance(done_view, w.HTML) and '<a href="docs/CURRENT_TASK.md"' in done_view.value
    assert done_view._repr_mimebundle_()["text/plain"].startswith("Clarification completed")


@pytest.mark.anyio
async def test_in_a_kernel_the_result_displays_as_its_form(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await clarify(repo, "Add authentication")
    outside = first._repr_mimebundle_()
    assert WIDGET_VIEW not in outside and "<ol>" in outside["text/html"]
    monkeypatch.setattr(kernel, "in_kernel", lambda: True)
    bundle = first._repr_mimebundle_()
    form = form_for(first)
    assert form is not None and bundle[WIDGET_VIEW]["model_id"] == form.widget.model_id
    assert bundle["text/plain"] == outside["text/plain"]  # what GitHub shows of a saved notebook
    assert first._repr_mimebundle_()[WIDGET_VIEW]["model_id"] == form.widget.model_id  # one form
    done = await clarify(
        repo, "x", answers={"auth_strategy": "SAML", "auth_library": "Auth0"}, session_id=first.session_id
    )
    assert WIDGET_VIEW not in done._repr_mimebundle_()  # the files with links, as static HTML


@pytest.mark.anyio
async def test_a_result_decoded_from_json_cannot_be_continued_by_a_form(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")
    decoded = msgspec.json.decode(first.to_json(), type=ClarifyResult)
    assert origin_of(decoded) is None and form_for(decoded) is None
    shown = view(decoded)
    assert isinstance(shown, w.HTML) and "Which authentication library" in shown.value
    with pytest.raises(ValueError, match="pass submit="):
        clarify_form(decoded)


@pytest.mark.anyio
async def test_wait_raises_what_the_submission_raised(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")
    form = clarify_form(first)
    form.controls["auth_strategy"].value = "OAuth"  # the library is still missing: more questions
    assert form.wait() is first  # nothing submitted yet
    form.submit()
    again = form.wait(timeout=30)
    assert again.status == "needs_clarification" and [q.id for q in again.questions] == ["auth_library"]
    assert list(form.controls) == ["auth_library"]
    await clarify(repo, "x", answers={"auth_library": "Clerk"}, session_id=first.session_id)
    form.controls["auth_library"].value = "Auth0"
    form.submit()
    with pytest.raises(PreflightError) as caught:
        form.wait(timeout=30)
    assert caught.value.code == "SESSION_NOT_FOUND" and form.result is again


@pytest.mark.anyio
async def test_the_origin_goes_away_with_its_result(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")
    key = id(first)
    assert origin_of(first) is not None
    del first
    gc.collect()
    from preflight_sdk.clarify import origin

    assert key not in origin._ORIGINS
