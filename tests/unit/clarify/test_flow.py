"""The clarification dialogue end to end: questions, answers, files on disk, sessions, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from unit.clarify.clarify_support import FakeClock, artifact, counter_suffix, docs_tree

from preflight_sdk.clarify import clarify, read_architecture
from preflight_sdk.clarify.artifacts.adr import parse_adr
from preflight_sdk.clarify.artifacts.projection import parse_projection
from preflight_sdk.clarify.artifacts.task import parse_task
from preflight_sdk.core.errors import InputError, PreflightError, StateError


@pytest.mark.anyio
async def test_add_authentication_goes_from_intention_to_adr_task_and_projection_in_two_calls(
    repo: Path, clock: FakeClock
) -> None:
    first = await clarify(repo, "Add authentication", clock=clock, uid_suffix=counter_suffix())
    assert first.status == "needs_clarification"
    ids = [q.id for q in first.questions]
    assert ids[:2] == ["auth_strategy", "auth_library"]
    assert len(ids) <= 5
    strategy = first.questions[0]
    assert strategy.type == "single_choice" and strategy.options and strategy.options[-1] == "Other (specify)"
    assert first.progress is not None and first.progress.asked_so_far == len(ids)
    assert first.session_id

    done = await clarify(
        repo,
        "Add authentication",
        answers={
            "auth_strategy": "OAuth",
            "auth_library": "next-auth",
            "oauth_providers": ["Google", "GitHub"],
        },
        session_id=first.session_id,
        clock=clock,
        uid_suffix=counter_suffix(),
    )
    assert done.status == "completed"
    assert [a.type for a in done.artifacts] == ["adr", "task", "projection"]
    adr_path = artifact(done, "adr")
    assert adr_path == "docs/adr/20260314T092653.589Z-A000_authentication_strategy__oauth.md"

    adr = parse_adr((repo / adr_path).read_text(), repo / adr_path)
    assert adr.uid == "20260314T092653.589Z-A000"
    assert adr.previous_uid is None
    assert {k: v.value for k, v in adr.snapshot["Authentication"].items()} == {
        "Library": "NextAuth.js",
        "Strategy": "OAuth",
    }
    assert "Email/Password (for Authentication.Strategy)" in adr.alternatives

    task = parse_task((repo / "docs/CURRENT_TASK.md").read_text(), repo / "docs/CURRENT_TASK.md")
    assert task.related_adr == adr.uid
    assert task.uid > adr.uid
    assert task.title == "Add authentication"
    assert "Support sign-in with: Google, GitHub" in task.constraints
    assert "Use OAuth for Strategy" in task.constraints
    assert "docs/adr/" in task.forbidden

    projection = parse_projection((repo / "docs/ARCHITECTURE_STATE.md").read_text(), repo / "x")
    assert projection.uid == adr.uid
    assert projection.snapshot == adr.snapshot
    assert not list((repo / ".preflight/clarify/sessions").glob("*.json")), "a completed session is removed"


@pytest.mark.anyio
async def test_answers_in_the_first_call_complete_at_once(repo: Path) -> None:
    done = await clarify(repo, "Add a Postgres database", answers={"db_orm": "SQLAlchemy"})
    assert done.status == "completed"
    arch = await read_architecture(repo)
    assert arch.categories == {"Database": {"ORM": "SQLAlchemy", "Type": "PostgreSQL"}}


@pytest.mark.anyio
async def test_missing_required_answers_are_asked_again_without_new_questions(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")
    second = await clarify(
        repo, "Add authentication", answers={"auth_strategy": "SAML"}, session_id=first.session_id
    )
    assert second.status == "needs_clarification"
    assert [q.id for q in second.questions] == ["auth_library"]
    assert second.progress is not None and first.progress is not None
    assert second.progress.asked_so_far == first.progress.asked_so_far
    assert second.progress.answered == 1


@pytest.mark.anyio
async def test_a_session_started_in_another_process_is_continued_here(repo: Path) -> None:
    code = (
        "import anyio, sys\n"
        "from pathlib import Path\n"
        "from preflight_sdk.clarify import clarify\n"
        "r = anyio.run(clarify, Path(sys.argv[1]), 'Add a message queue for emails')\n"
        "print(r.session_id)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True)
    session_id = done.stdout.strip()
    assert (repo / ".preflight/clarify/sessions" / f"{session_id}.json").is_file()

    result = await clarify(
        repo, "Add a message queue", answers={"message_broker": "RabbitMQ"}, session_id=session_id
    )
    assert result.status == "completed"
    arch = await read_architecture(repo)
    assert arch.categories == {"Other": {"Messaging": "RabbitMQ"}}


@pytest.mark.anyio
async def test_expiry_slides_with_each_call(repo: Path, clock: FakeClock) -> None:
    first = await clarify(repo, "Add authentication", clock=clock)
    clock.advance(minutes=29)
    second = await clarify(
        repo,
        "Add authentication",
        answers={"auth_strategy": "OAuth"},
        session_id=first.session_id,
        clock=clock,
    )
    assert second.status == "needs_clarification"
    clock.advance(minutes=29)  # 58 minutes after the start, 29 after the last call
    third = await clarify(
        repo,
        "Add authentication",
        answers={"auth_library": "Clerk"},
        session_id=first.session_id,
        clock=clock,
    )
    assert third.status == "completed"


@pytest.mark.anyio
async def test_an_idle_session_expires_after_30_minutes_then_is_gone(repo: Path, clock: FakeClock) -> None:
    first = await clarify(repo, "Add authentication", clock=clock)
    clock.advance(minutes=30, seconds=1)
    with pytest.raises(StateError) as expired:
        await clarify(
            repo,
            "Add authentication",
            answers={"auth_strategy": "OAuth"},
            session_id=first.session_id,
            clock=clock,
        )
    assert expired.value.code == "SESSION_EXPIRED"
    assert expired.value.hint and "no session_id" in expired.value.hint
    with pytest.raises(StateError) as gone:
        await clarify(repo, "Add authentication", session_id=first.session_id, clock=clock)
    assert gone.value.code == "SESSION_NOT_FOUND"


@pytest.mark.anyio
async def test_unknown_session_is_session_not_found_with_a_recovery_hint(repo: Path) -> None:
    with pytest.raises(StateError) as caught:
        await clarify(repo, "Add authentication", session_id="0123456789abcdef")
    assert caught.value.code == "SESSION_NOT_FOUND"
    assert caught.value.hint and "start a new session" in caught.value.hint


@pytest.mark.anyio
async def test_a_malformed_session_id_is_invalid_input(repo: Path) -> None:
    with pytest.raises(InputError) as caught:
        await clarify(repo, "Add authentication", session_id="../../etc/passwd")
    assert caught.value.code == "INVALID_INPUT"


@pytest.mark.anyio
async def test_an_answer_outside_the_options_is_invalid_answer_naming_question_and_options(
    repo: Path,
) -> None:
    first = await clarify(repo, "Add authentication")
    with pytest.raises(InputError) as caught:
        await clarify(
            repo,
            "Add authentication",
            answers={"auth_strategy": "Carrier pigeon"},
            session_id=first.session_id,
        )
    error = caught.value
    assert error.code == "INVALID_ANSWER"
    assert error.details and error.details["question"] == "auth_strategy"
    assert error.details["allowed"] == ["OAuth", "Email/Password", "Magic Links", "SAML"]
    assert error.hint and "Other: <text>" in error.hint
    # The session survives a bad answer.
    retry = await clarify(
        repo,
        "Add authentication",
        answers={"auth_strategy": "OAuth", "auth_library": "Auth0"},
        session_id=first.session_id,
    )
    assert retry.status == "completed"


@pytest.mark.anyio
async def test_an_answer_to_an_unknown_question_is_invalid_answer(repo: Path) -> None:
    first = await clarify(repo, "Add authentication")
    with pytest.raises(InputError) as caught:
        await clarify(
            repo, "Add authentication", answers={"auth_stratgy": "OAuth"}, session_id=first.session_id
        )
    assert caught.value.code == "INVALID_ANSWER"
    assert caught.value.details and "auth_strategy" in caught.value.details["allowed"]


@pytest.mark.anyio
async def test_outside_a_git_repository_is_repo_not_found(tmp_path: Path) -> None:
    project = tmp_path / "not-a-repo"
    project.mkdir()
    with pytest.raises(InputError) as caught:
        await clarify(project, "Add authentication")
    assert caught.value.code == "REPO_NOT_FOUND"
    assert caught.value.hint and "git init" in caught.value.hint
    with pytest.raises(InputError) as read:
        await read_architecture(project)
    assert read.value.code == "REPO_NOT_FOUND"


@pytest.mark.anyio
async def test_an_empty_intention_is_invalid_input(repo: Path) -> None:
    with pytest.raises(InputError) as caught:
        await clarify(repo, "   ")
    assert caught.value.code == "INVALID_INPUT"


@pytest.mark.anyio
async def test_a_project_inside_the_repository_writes_at_the_repository_root(repo: Path) -> None:
    project = repo / "services" / "api"
    project.mkdir(parents=True)
    (project / "e2e.yaml").write_text("service: {}\n")
    first = await clarify(project / "e2e.yaml", "Add a Redis cache")
    done = await clarify(project, "Add a Redis cache", answers={}, session_id=first.session_id)
    assert done.status == "completed"
    assert (repo / "docs/CURRENT_TASK.md").is_file()
    task = parse_task((repo / "docs/CURRENT_TASK.md").read_text(), repo / "t")
    assert task.allowlist == ("services/api/",)
    assert (await read_architecture(project)).categories == {"Infra": {"Caching": "Redis"}}


@pytest.mark.anyio
async def test_the_allowlist_comes_from_matching_folders_or_the_answer(repo: Path) -> None:
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "components").mkdir(parents=True)
    first = await clarify(repo, "Add OAuth login with Clerk")
    assert "allowlist_paths" not in [q.id for q in first.questions]
    await clarify(repo, "Add OAuth login with Clerk", answers={}, session_id=first.session_id)
    task = parse_task((repo / "docs/CURRENT_TASK.md").read_text(), repo / "t")
    assert task.allowlist == ("src/auth/",)

    second = await clarify(repo, "Improve build speed")
    await clarify(
        repo,
        "Improve build speed",
        answers={
            "category": "Infra",
            "description": "Cache dependencies in CI",
            "allowlist_paths": "src, ./Makefile",
        },
        session_id=second.session_id,
    )
    task = parse_task((repo / "docs/CURRENT_TASK.md").read_text(), repo / "t")
    assert task.allowlist == ("src/", "Makefile")


@pytest.mark.anyio
async def test_a_path_outside_the_repository_is_refused(repo: Path) -> None:
    first = await clarify(repo, "Improve build speed")
    with pytest.raises(InputError) as caught:
        await clarify(
            repo, "Improve build speed", answers={"allowlist_paths": "../other"}, session_id=first.session_id
        )
    assert caught.value.code == "INVALID_ANSWER"


@pytest.mark.anyio
async def test_each_new_task_archives_the_previous_one_byte_for_byte(repo: Path) -> None:
    await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    before = (repo / "docs/CURRENT_TASK.md").read_bytes()
    uid = parse_task(before.decode(), repo / "t").uid
    done = await clarify(repo, "Fix typo in the README", answers={})
    assert done.archived_task == f"docs/archive/task/{uid}_add_a_postgres_database.md"
    assert (repo / done.archived_task).read_bytes() == before


@pytest.mark.anyio
async def test_a_hand_written_task_without_uid_is_archived_not_refused(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs/CURRENT_TASK.md").write_text("# Notes from the planning meeting\n\nDo things.\n")
    done = await clarify(repo, "Fix typo in the README", answers={})
    assert done.archived_task and done.archived_task.endswith("_notes_from_the_planning_meeting.md")
    assert (repo / done.archived_task).read_text() == "# Notes from the planning meeting\n\nDo things.\n"


@pytest.mark.anyio
async def test_read_architecture_without_an_adr_returns_null_uid_and_writes_nothing(repo: Path) -> None:
    result = await read_architecture(repo)
    assert result.uid is None and result.categories == {}
    assert result.source_file == "docs/ARCHITECTURE_STATE.md"
    assert json.loads(result.to_json())["uid"] is None
    assert docs_tree(repo) == {}


@pytest.mark.anyio
async def test_read_architecture_regenerates_a_missing_or_edited_projection(repo: Path) -> None:
    await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    projection = repo / "docs/ARCHITECTURE_STATE.md"
    good = projection.read_bytes()
    projection.unlink()
    result = await read_architecture(repo)
    assert result.regenerated and projection.read_bytes() == good
    projection.write_text(good.decode().replace("PostgreSQL", "MySQL"))
    result = await read_architecture(repo)
    assert result.regenerated and projection.read_bytes() == good
    assert result.categories["Database"]["Type"] == "PostgreSQL"
    again = await read_architecture(repo)
    assert not again.regenerated


@pytest.mark.anyio
async def test_a_malformed_latest_adr_is_reported_with_its_file(repo: Path) -> None:
    (repo / "docs/adr").mkdir(parents=True)
    bad = repo / "docs/adr/20260101T000000.000Z-AAAA_broken.md"
    bad.write_text("# ADR: no header\n")
    with pytest.raises(PreflightError) as caught:
        await read_architecture(repo)
    assert caught.value.code == "PARSE_ERROR"
    assert caught.value.details and caught.value.details["problems"][0]["file"] == str(bad)


@pytest.mark.anyio
async def test_a_session_completed_twice_at_once_writes_one_adr(repo: Path) -> None:
    import anyio

    first = await clarify(repo, "Add a Postgres database")
    outcomes: list[str] = []

    async def finish() -> None:
        try:
            await clarify(repo, "x", answers={"db_orm": "Prisma"}, session_id=first.session_id)
            outcomes.append("completed")
        except StateError as exc:
            outcomes.append(exc.code)

    async with anyio.create_task_group() as group:
        group.start_soon(finish)
        group.start_soon(finish)
    assert sorted(outcomes) == ["SESSION_NOT_FOUND", "completed"]
    assert len(list((repo / "docs/adr").iterdir())) == 1
