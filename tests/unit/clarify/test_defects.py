"""Regression tests for eleven defects of `preflights` 1.1.4.

Each test states what `preflights` did, in its docstring, and fails on that behaviour.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from unit.clarify.clarify_support import FakeClock, artifact, counter_suffix, docs_tree

from preflight_sdk.clarify import ClarifyResult, clarify, read_architecture
from preflight_sdk.clarify.artifacts import files as files_module
from preflight_sdk.clarify.artifacts.adr import parse_adr
from preflight_sdk.clarify.artifacts.uid import UID_RE, parse_uid
from preflight_sdk.clarify.engine import analyze, make_plan
from preflight_sdk.clarify.repo import RepoFacts
from preflight_sdk.core.errors import InputError, PreflightError


async def _complete(
    repo: Path, intention: str, answers: dict[str, str | list[str]], **kw: Any
) -> ClarifyResult:
    first = await clarify(repo, intention, **kw)
    return await clarify(repo, intention, answers=answers, session_id=first.session_id, **kw)


# -- defect 1 ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_1_uids_come_from_the_real_clock_and_a_random_suffix(repo: Path) -> None:
    """Defect 1: the MCP server used a sequential UID provider and a clock frozen at 2025-01-06.

    Every server start produced `…T120000.000Z-A000`; here the UID carries today's time.
    """
    before = datetime.now(UTC)
    done = await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    uid = artifact(done, "adr").split("/")[-1].split("_")[0]
    moment, suffix = parse_uid(uid)
    assert abs((moment - before).total_seconds()) < 60
    assert not uid.startswith("20250106T1200")
    assert 0 <= suffix <= 0xFFFF


@pytest.mark.anyio
async def test_defect_1_the_same_decision_in_a_later_process_does_not_collide(repo: Path) -> None:
    """Defect 1: a second ADR with the same slug in a later server process hit FileExistsError."""
    await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    await clarify(repo, "Add a MySQL database", answers={"db_orm": "Prisma"})
    third = await clarify(repo, "Switch to a Postgres database", answers={"db_orm": "Prisma"})
    names = sorted(p.name for p in (repo / "docs/adr").iterdir())
    assert len(names) == 3
    assert sum(name.endswith("_database_type__postgresql.md") for name in names) == 2
    assert third.status == "completed"


@pytest.mark.anyio
async def test_defect_1_llm_settings_are_honoured(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect 1: the MCP server ignored the LLM configuration (always the mock)."""
    monkeypatch.setenv("PREFLIGHT_LLM_PROVIDER", "anthropic")
    result = await clarify(repo, "Add authentication")
    assert result.warning == "llm_fallback"
    assert result.warning_reason and "PREFLIGHT_ANTHROPIC_API_KEY" in result.warning_reason


# -- defect 2 ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_2_other_specify_never_leaves_an_empty_question_list(repo: Path) -> None:
    """Defect 2: choosing "Other (specify)" returned needs_clarification with `questions: []`."""
    first = await clarify(repo, "Add authentication")
    second = await clarify(
        repo,
        "Add authentication",
        answers={"auth_strategy": "Other (specify)", "auth_library": "Custom"},
        session_id=first.session_id,
    )
    assert second.status == "needs_clarification"
    assert [q.id for q in second.questions] == ["auth_strategy__other"]
    assert second.questions[0].type == "free_text" and not second.questions[0].optional
    done = await clarify(
        repo, "Add authentication", answers={"auth_strategy__other": "Passkeys"}, session_id=first.session_id
    )
    assert done.status == "completed"
    assert (await read_architecture(repo)).categories["Authentication"]["Strategy"] == "Passkeys"


@pytest.mark.anyio
async def test_defect_2_other_text_can_be_given_inline(repo: Path) -> None:
    """Defect 2, the inline way: `"Other: <text>"` is accepted in a single answer."""
    first = await clarify(repo, "Add authentication")
    done = await clarify(
        repo,
        "Add authentication",
        answers={"auth_strategy": "Other: WebAuthn", "auth_library": "Other: in-house"},
        session_id=first.session_id,
    )
    assert done.status == "completed"
    assert (await read_architecture(repo)).categories["Authentication"] == {
        "Library": "in-house",
        "Strategy": "WebAuthn",
    }


# -- defect 3 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("area", ["Backend", "Frontend", "Other: Tooling"])
@pytest.mark.anyio
async def test_defect_3_the_generic_path_always_yields_a_valid_decision(repo: Path, area: str) -> None:
    """Defect 3: the generic path failed with UNKNOWN_FIELD (`Backend.Description`) for any listed
    category, and UNKNOWN_CATEGORY for "Other (specify)"."""
    first = await clarify(repo, "Improve build speed", force_adr=True)
    assert [q.id for q in first.questions][:2] == ["category", "description"]
    done = await clarify(
        repo,
        "Improve build speed",
        answers={"category": area, "description": "Cache dependencies between CI runs"},
        session_id=first.session_id,
        force_adr=True,
    )
    assert done.status == "completed"
    field = area.removeprefix("Other: ") + "_Approach"
    assert (await read_architecture(repo)).categories == {
        "Other": {field: "Cache dependencies between CI runs"}
    }


# -- defect 4 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intention", "absent"),
    [
        ("Improve build speed", "frontend_framework"),  # "ui" inside "build"
        ("Collect user feedback in a form", "db_type"),  # "db" inside "feedback"
        ("Decide on specific log levels", "ci_cd"),  # "ci" inside "decide"/"specific"
        ("Track user interest in articles", "api_style"),  # "rest" inside "interest"
    ],
)
def test_defect_4_keywords_never_match_inside_words(intention: str, absent: str) -> None:
    """Defect 4: substring matching ("ui" in "build", "db" in "feedback", "ci" in "decide",
    "rest" in "interest") asked the questions of the wrong topic."""
    plan = make_plan(analyze(intention, {}), RepoFacts(root=Path(".")), force_adr=False)
    assert absent not in plan.asked
    assert plan.kind == "generic"


@pytest.mark.anyio
async def test_defect_4_fix_typo_in_login_button_makes_a_task_only(repo: Path) -> None:
    """Defect 4: "Fix typo in login button" asked the authentication-strategy questions."""
    first = await clarify(repo, "Fix typo in login button")
    assert {q.id for q in first.questions} <= {"allowlist_paths", "acceptance_criteria"}
    done = await clarify(repo, "Fix typo in login button", answers={}, session_id=first.session_id)
    assert [a.type for a in done.artifacts] == ["task"]
    assert not (repo / "docs/adr").exists()


@pytest.mark.parametrize(
    ("intention", "non_triggers"),
    [
        ("Add a prefix to log lines", []),
        ("Debug logging for the importer", []),
        ("Fix the login bug", ["fix", "bug"]),
    ],
)
def test_defect_4_non_triggers_match_whole_words_only(intention: str, non_triggers: list[str]) -> None:
    """Defect 4: "fix" inside "prefix" and "bug" inside "debug" suppressed ADRs."""
    assert analyze(intention, {}).non_triggers == non_triggers


@pytest.mark.anyio
async def test_defect_4_a_fix_with_a_structural_change_still_gets_an_adr(repo: Path) -> None:
    """Defect 4: non-triggers were checked first and won: "Fix auth by moving to OAuth" made no ADR."""
    done = await _complete(repo, "Fix auth by moving to OAuth", {"auth_library": "Auth0"})
    assert [a.type for a in done.artifacts] == ["adr", "task", "projection"]
    assert any("moving to" in r for r in done.adr_reasons)


@pytest.mark.anyio
async def test_defect_4_restating_a_recorded_category_is_not_an_adr(repo: Path) -> None:
    """Defect 4 (reverse): `modifies_existing_category` fired for every later change in a category
    already in the snapshot. Restating recorded values is not a decision; changing one is."""
    await _complete(repo, "Add authentication", {"auth_strategy": "OAuth", "auth_library": "Auth0"})
    same = await _complete(
        repo, "Polish the sign in page", {"auth_strategy": "OAuth", "auth_library": "Auth0"}
    )
    assert [a.type for a in same.artifacts] == ["task"]
    changed = await _complete(
        repo, "Polish the sign in page", {"auth_strategy": "OAuth", "auth_library": "Clerk"}
    )
    assert changed.artifacts[0].type == "adr"
    assert any("was Auth0" in r for r in changed.adr_reasons)


# -- defect 5 ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_5_deleting_the_projection_loses_nothing(repo: Path) -> None:
    """Defect 5: ARCHITECTURE_STATE.md was the input of the next ADR; after deleting it the next ADR
    had `Previous: None` and silently lost the Database category."""
    first = await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    (repo / "docs/ARCHITECTURE_STATE.md").unlink()
    done = await _complete(repo, "Add authentication", {"auth_strategy": "OAuth", "auth_library": "Auth0"})
    adr_path = repo / artifact(done, "adr")
    adr = parse_adr(adr_path.read_text(), adr_path)
    assert adr.previous_uid == first.artifacts[0].uid
    assert set(adr.snapshot) == {"Authentication", "Database"}
    assert (repo / "docs/ARCHITECTURE_STATE.md").is_file()


# -- defect 6 ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_6_the_previous_link_points_at_the_previous_adr_file(repo: Path) -> None:
    """Defect 6: the Previous link was `../<uid>.md`: the parent directory, and no slug."""
    first = await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    second = await _complete(repo, "Add authentication", {"auth_strategy": "OAuth", "auth_library": "Auth0"})
    path = repo / artifact(second, "adr")
    link = re.search(r"^\*\*Previous:\*\* \[(.+?)\]\((.+?)\)$", path.read_text(), re.MULTILINE)
    assert link is not None
    assert link.group(1) == first.artifacts[0].uid
    target = path.parent / link.group(2)
    assert target.is_file() and target.name == Path(artifact(first, "adr")).name


# -- defect 7 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("failing", ["CURRENT_TASK.md", "ARCHITECTURE_STATE.md", "_add_authentication.md"])
@pytest.mark.anyio
async def test_defect_7_a_failure_midway_leaves_the_previous_state_intact(
    repo: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """Defect 7: the old task was archived and deleted before the ADR was written, non-atomically;
    a failure in between left a half-written state."""
    await _complete(repo, "Add authentication", {"auth_strategy": "OAuth", "auth_library": "Auth0"})
    before = docs_tree(repo)
    first = await clarify(repo, "Add a Postgres database")
    real_replace = files_module._replace

    def broken(src: Path, dst: Path) -> None:
        if dst.name.endswith(failing):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(files_module, "_replace", broken)
    with pytest.raises(PreflightError) as caught:
        await clarify(
            repo, "Add a Postgres database", answers={"db_orm": "Prisma"}, session_id=first.session_id
        )
    assert caught.value.retryable
    assert caught.value.details and caught.value.details["sessionId"] == first.session_id
    assert docs_tree(repo) == before
    assert not [p for p in (repo / "docs").rglob("*") if p.name.endswith(".tmp")]

    monkeypatch.setattr(files_module, "_replace", real_replace)
    retry = await clarify(repo, "Add a Postgres database", answers={}, session_id=first.session_id)
    assert retry.status == "completed"  # the answers of the failed call were kept
    assert (await read_architecture(repo)).categories["Database"] == {"ORM": "Prisma", "Type": "PostgreSQL"}


@pytest.mark.anyio
async def test_defect_7_concurrent_clarifications_are_serialised_by_the_repository_lock(repo: Path) -> None:
    """Defect 7: no file locking ("last write wins"); two writers could both take the same Previous."""
    one = await clarify(repo, "Add a Postgres database")
    two = await clarify(repo, "Add authentication")
    results = {}

    async def finish(name: str, session: str | None, answers: dict[str, str | list[str]]) -> None:
        results[name] = await clarify(repo, name, answers=answers, session_id=session)

    async with anyio.create_task_group() as group:
        db: dict[str, str | list[str]] = {"db_orm": "Prisma"}
        auth: dict[str, str | list[str]] = {"auth_strategy": "OAuth", "auth_library": "Auth0"}
        group.start_soon(finish, "db", one.session_id, db)
        group.start_soon(finish, "auth", two.session_id, auth)
    adrs = sorted((repo / "docs/adr").iterdir())
    first, second = (parse_adr(p.read_text(), p) for p in adrs)
    assert second.previous_uid == first.uid
    assert set(second.snapshot) == {"Authentication", "Database"}
    assert len(list((repo / "docs/archive/task").iterdir())) == 1


@pytest.mark.anyio
async def test_defect_7_a_held_lock_blocks_writers_until_released(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect 7: a writer waits for the lock and writes only after it is released."""
    first = await clarify(repo, "Add a Postgres database")
    blocked = anyio.Event()
    real_try = files_module._try_lock

    def observed(handle: IO[bytes]) -> bool:
        got = real_try(handle)
        if not got:
            blocked.set()
        return got

    monkeypatch.setattr(files_module, "_try_lock", observed)
    async with anyio.create_task_group() as group:
        async with files_module.repo_lock(repo):
            group.start_soon(clarify, repo, "x", {"db_orm": "Prisma"}, first.session_id)
            with anyio.fail_after(5):
                await blocked.wait()
            assert not (repo / "docs").exists()
    assert (repo / "docs/CURRENT_TASK.md").is_file()


@pytest.mark.anyio
async def test_defect_7_a_lock_held_too_long_is_a_retryable_error(repo: Path) -> None:
    """Defect 7: waiting for the lock is bounded and says what to do."""
    async with files_module.repo_lock(repo):
        with pytest.raises(PreflightError) as caught:
            async with files_module.repo_lock(repo, max_wait=0.05):
                pass
    assert caught.value.retryable and caught.value.hint


# -- defect 8 ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_8_multi_choice_counts_and_options_are_enforced(repo: Path) -> None:
    """Defect 8: answers were not validated against options, nor min/max selections, outside the CLI."""
    first = await clarify(repo, "Add authentication")
    too_many = ["Google", "GitHub", "Microsoft", "Apple", "Other: GitLab", "Other: Bitbucket"]
    for bad in (["Google", "MySpace"], too_many, "Carrier pigeon"):
        with pytest.raises(InputError) as caught:
            await clarify(
                repo,
                "x",
                answers={"oauth_providers": bad, "auth_strategy": "OAuth"},
                session_id=first.session_id,
            )
        assert caught.value.code == "INVALID_ANSWER"
        assert caught.value.details and caught.value.details["question"] == "oauth_providers"
    done = await clarify(
        repo,
        "x",
        answers={
            "oauth_providers": ["google", "GitHub", "Other: GitLab"],
            "auth_strategy": "oauth",
            "auth_library": "clerk",
        },
        session_id=first.session_id,
    )
    assert done.status == "completed"
    task = (repo / "docs/CURRENT_TASK.md").read_text()
    assert "- Support sign-in with: Google, GitHub, GitLab" in task


# -- defect 9 ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_9_a_session_never_asks_more_than_five_questions(repo: Path) -> None:
    """Defect 9: nothing enforced the 5-question budget of a session."""
    intention = "Add auth, a database, a React UI, a REST API, a cache and a message queue"
    first = await clarify(repo, intention)
    assert len(first.questions) == 4  # the fifth is kept for an "Other (specify)" follow-up
    answers: dict[str, str | list[str]] = {q.id: "Other (specify)" for q in first.questions}
    with pytest.raises(InputError) as caught:  # four follow-ups would make eight questions
        await clarify(repo, intention, answers=answers, session_id=first.session_id)
    assert caught.value.code == "INVALID_ANSWER"
    assert caught.value.hint and "Other: <text>" in caught.value.hint


@pytest.mark.anyio
async def test_defect_9_expiry_slides_instead_of_counting_from_creation(repo: Path, clock: FakeClock) -> None:
    """Defect 9: `expires_at = created_at + 30 min`, fixed; a session in active use expired."""
    first = await clarify(repo, "Add authentication", clock=clock)
    for _ in range(3):
        clock.advance(minutes=20)
        await clarify(repo, "x", answers={"auth_strategy": "OAuth"}, session_id=first.session_id, clock=clock)
    clock.advance(minutes=20)
    done = await clarify(
        repo, "x", answers={"auth_library": "Auth0"}, session_id=first.session_id, clock=clock
    )
    assert done.status == "completed"


# -- defect 10 -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_10_uids_are_4_uppercase_hex_and_legacy_uids_are_read(repo: Path) -> None:
    """Defect 10: the spec's `…Z-T001` failed the validator; suffixes must be 4 hex characters.
    The legacy form without suffix must still be read."""
    done = await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    for item in done.artifacts:
        if item.uid:
            assert re.fullmatch(r"\d{8}T\d{6}\.\d{3}Z-[0-9A-F]{4}", item.uid)
    legacy = repo / "docs/adr/20200101T000000.000Z_first.md"
    legacy.write_text(
        "<!-- UID: 20200101T000000.000Z -->\n\n# ADR: First\n\n## Architecture Snapshot\n\n"
        "### Backend\n- **Language**: Go (ADR 20200101T000000.000Z)\n"
    )
    assert UID_RE.match("20200101T000000.000Z")
    arch = await read_architecture(repo)
    assert arch.uid == done.artifacts[0].uid  # the legacy UID sorts first: it is older


# -- defect 11 -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_defect_11_detected_labels_are_short_names(repo: Path) -> None:
    """Defect 11: labels were cut from the question text ("Authentication strategy do you want to use")."""
    first = await clarify(repo, "Add OAuth authentication with Clerk", uid_suffix=counter_suffix())
    assert [(d.label, d.value) for d in first.detected_from_intent] == [
        ("Authentication strategy", "OAuth"),
        ("Authentication library", "Clerk"),
    ]
    assert {"auth_strategy", "auth_library"}.isdisjoint(q.id for q in first.questions)
