"""The deterministic engine: word-boundary matching, the ADR heuristics, the question plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.clarify.decision import decide, needs_adr
from preflight_sdk.clarify.engine import analyze, make_plan
from preflight_sdk.clarify.repo import RepoFacts
from preflight_sdk.clarify.snapshot import Entry
from preflight_sdk.clarify.text import find_terms, has_term

FACTS = RepoFacts(root=Path("."))


@pytest.mark.parametrize(
    ("text", "term", "found"),
    [
        ("Improve build speed", "ui", False),
        ("Polish the UI", "ui", True),
        ("Collect feedback", "db", False),
        ("Move the DBs", "db", True),
        ("Add a prefix", "fix", False),
        ("Add magic-link login", "magic link", True),
        ("Use next.js", "next.js", True),
        ("Use nextjs", "next.js", False),
        ("Add React components", "component", True),
    ],
)
def test_terms_match_whole_words_only(text: str, term: str, found: bool) -> None:
    assert has_term(text, term) is found


def test_longer_terms_win_over_their_parts() -> None:
    hits = find_terms("Run GitHub Actions and log in with GitHub", ["github actions", "github", "actions"])
    assert [h.term for h in hits] == ["github actions", "github"]


@pytest.mark.parametrize(
    ("intention", "kind", "adr"),
    [
        ("Add authentication", "domain", True),
        ("Add a caching strategy", "domain", True),
        ("Fix typo in login button", "task", False),
        ("Refactor the auth module", "task", False),
        ("Refactor the auth architecture", "domain", True),
        ("Fix auth by moving to OAuth", "domain", True),
        ("Replace Auth0 with Clerk in the login flow", "domain", True),
        ("Add GitHub as an OAuth provider", "domain", True),  # OAuth not recorded yet: a new dependency
        ("Improve build speed", "generic", False),
    ],
)
def test_plan_kind_and_adr_follow_the_seed_heuristics(intention: str, kind: str, adr: bool) -> None:
    plan = make_plan(analyze(intention, {}), FACTS, force_adr=False)
    assert plan.kind == kind
    answers = {
        q.id: q.options[0] for q in plan.questions if q.options and q.id in plan.asked and not q.optional
    }
    if plan.kind == "generic":
        answers["description"] = "Cache the dependency downloads"
    decision = decide(plan, answers, {}, FACTS, project_dir=".")
    assert needs_adr(plan, decision, force_adr=False)[0] is adr


def test_a_config_only_change_to_a_recorded_choice_is_a_task() -> None:
    snapshot = {"Authentication": {"Strategy": Entry(value="OAuth", adr="20260101T000000.000Z-AAAA")}}
    plan = make_plan(analyze("Add GitHub as an OAuth provider", snapshot), FACTS, force_adr=False)
    assert plan.kind == "task"


def test_force_adr_turns_a_fix_into_a_decision() -> None:
    plan = make_plan(analyze("Fix typo in login button", {}), FACTS, force_adr=True)
    assert plan.kind == "domain"
    decision = decide(plan, {"auth_strategy": "OAuth", "auth_library": "Auth0"}, {}, FACTS, project_dir=".")
    wanted, reasons = needs_adr(plan, decision, force_adr=True)
    assert wanted and reasons[0] == "requested with force_adr"


def test_no_value_is_invented_for_an_unanswered_question() -> None:
    plan = make_plan(analyze("Add authentication", {}), FACTS, force_adr=False)
    decision = decide(plan, {"auth_strategy": "OAuth"}, {}, FACTS, project_dir=".")
    assert [(i.category, i.field, i.value) for i in decision.items] == [
        ("Authentication", "Strategy", "OAuth")
    ]


def test_the_users_answer_wins_over_the_intention() -> None:
    plan = make_plan(analyze("Add OAuth login with Clerk", {}), FACTS, force_adr=False)
    assert plan.prefilled == {"auth_strategy": "OAuth", "auth_library": "Clerk"}
    decision = decide(plan, {"auth_library": "Auth0"}, {}, FACTS, project_dir=".")
    values = {i.field: (i.value, i.source) for i in decision.items}
    assert values == {"Strategy": ("OAuth", "intent"), "Library": ("Auth0", "answer")}


def test_options_follow_repository_signals() -> None:
    python = RepoFacts(root=Path("."), signals=frozenset({"python"}))
    plan = make_plan(analyze("Add a database", {}), python, force_adr=False)
    orm = next(q for q in plan.questions if q.id == "db_orm")
    assert orm.options == ["SQLAlchemy", "SQLModel", "Django ORM", "None", "Other (specify)"]


def test_topics_are_ordered_by_mentions_and_capped_at_four_first_turn_questions() -> None:
    plan = make_plan(
        analyze("Add a Postgres database and OAuth auth with a database migration", {}),
        FACTS,
        force_adr=False,
    )
    assert plan.topics[0] == "database"
    assert len(plan.asked) == 4


@pytest.mark.parametrize(
    ("intention", "stated"),
    [
        ("Migrate from MySQL to Postgres", {"db_type": "PostgreSQL"}),
        ("Replace Auth0 with Clerk in the login flow", {"auth_library": "Clerk"}),
        ("Switch from Prisma to Drizzle", {"db_orm": "Drizzle"}),
        ("Add Postgres with Prisma", {"db_type": "PostgreSQL", "db_orm": "Prisma"}),
    ],
)
def test_in_a_migration_the_stated_answer_is_the_destination(intention: str, stated: dict[str, str]) -> None:
    analysis = analyze(intention, {})
    assert analysis.stated == stated
    assert any(reason.startswith("migration") for reason in analysis.strong) == ("Add" not in intention)
