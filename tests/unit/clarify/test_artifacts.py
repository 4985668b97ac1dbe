"""ADR, task and projection files: the `preflights` layout, rendering and parsing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from preflight_sdk.clarify.artifacts.adr import Adr, parse_adr, render_adr
from preflight_sdk.clarify.artifacts.projection import parse_projection, render_projection
from preflight_sdk.clarify.artifacts.task import Task, parse_task, render_task
from preflight_sdk.clarify.snapshot import Entry
from preflight_sdk.clarify.text import escape_block, slugify, title_from
from preflight_sdk.core.errors import ConfigError

# Written by preflights 1.1.4 (its FilesystemAdapter), trimmed to one category per file.
ORIGIN_ADR = """<!-- UID: 20261122T135453.035Z-5CC2 -->
<!-- Category: Database -->
<!-- Date: 2026-11-22 -->
<!-- Previous: 20261122T135453.032Z-CC2D -->

# ADR: Database: Type = PostgreSQL

**Category:** Database
**Date:** 2026-11-22
**Status:** Accepted
**Previous:** [20261122T135453.032Z-CC2D](../20261122T135453.032Z-CC2D.md)

## Context

A decision is needed for Database.

User intention: Add a database

## Decision

We have decided on the following for Database:
- Type: PostgreSQL
- ORM: Prisma

## Rationale

This decision was made based on project requirements and team expertise in Database.

## Alternatives Considered

- No alternatives explicitly considered

## Consequences

### Positive
- Addresses the requirement

### Negative
_None_

### Neutral
_None_

## Changes in This Version

- Added: Database.Type = PostgreSQL
- Added: Database.ORM = Prisma

## Architecture Snapshot

### Authentication
- **Library**: next-auth (ADR 20261122T135453.032Z-CC2D)
- **Strategy**: OAuth (ADR 20261122T135453.032Z-CC2D)

### Database
- **ORM**: Prisma (ADR 20261122T135453.035Z-5CC2)
- **Type**: PostgreSQL (ADR 20261122T135453.035Z-5CC2)

"""

ORIGIN_TASK = """<!-- UID: 20261122T135453.035Z-80DB -->
<!-- Created: 2026-11-22T13:54:53.035Z -->
<!-- Related ADR: 20261122T135453.035Z-5CC2 -->

# Add a database

## Objective

Add a database

Decision: Database - Type=PostgreSQL, ORM=Prisma

## Context

Add a database

Related ADR: 20261122T135453.035Z-5CC2

## Allowlist

- `src/`

## Forbidden

_None_

## Technical Constraints

- Use PostgreSQL for Type
- Use Prisma for ORM

## Acceptance Criteria

- [ ] It works
- [ ] tests pass
"""

ORIGIN_STATE = """<!-- UID: 20261122T135453.035Z-5CC2 -->
<!-- Schema: v1 -->

# Architecture State

Current architecture decisions snapshot.

## Categories

### Authentication
- **Library**: next-auth (ADR 20261122T135453.032Z-CC2D)
- **Strategy**: OAuth (ADR 20261122T135453.032Z-CC2D)

### Database
- **ORM**: Prisma (ADR 20261122T135453.035Z-5CC2)
- **Type**: PostgreSQL (ADR 20261122T135453.035Z-5CC2)

"""


def _skeleton(text: str) -> list[str]:
    """Headings, header comments and bold metadata keys: the structure a parser relies on."""
    keep = [line for line in text.splitlines() if line.startswith(("<!--", "#", "**"))]
    return [re.sub(r"^(\*\*[\w ]+:\*\*|<!-- [\w ]+:).*", r"\1 …", line) for line in keep]


def test_an_origin_adr_parses_and_renders_back_with_the_same_structure() -> None:
    adr = parse_adr(ORIGIN_ADR, Path("x.md"))
    assert adr.uid == "20261122T135453.035Z-5CC2" and adr.previous_uid == "20261122T135453.032Z-CC2D"
    assert adr.category == "Database" and adr.title == "Database: Type = PostgreSQL"
    assert adr.snapshot["Authentication"]["Library"] == Entry(
        value="next-auth", adr="20261122T135453.032Z-CC2D"
    )
    assert adr.changes == ("Added: Database.Type = PostgreSQL", "Added: Database.ORM = Prisma")
    assert adr.positive == ("Addresses the requirement",) and adr.negative == ()
    assert render_adr(adr) == ORIGIN_ADR  # read and written back byte for byte


def test_our_adr_has_the_origin_structure_with_a_working_previous_link() -> None:
    origin = parse_adr(ORIGIN_ADR, Path("x.md"))
    ours = render_adr(
        Adr(
            **{
                **{f: getattr(origin, f) for f in origin.__struct_fields__},
                "previous_file": "20261122T135453.032Z-CC2D_authentication_strategy__oauth.md",
            }
        )
    )
    assert _skeleton(ours) == _skeleton(ORIGIN_ADR)
    differing = [(a, b) for a, b in zip(ours.splitlines(), ORIGIN_ADR.splitlines(), strict=True) if a != b]
    link = "20261122T135453.032Z-CC2D_authentication_strategy__oauth.md"
    assert differing == [
        (
            f"**Previous:** [20261122T135453.032Z-CC2D]({link})",
            "**Previous:** [20261122T135453.032Z-CC2D](../20261122T135453.032Z-CC2D.md)",
        )
    ]


def test_an_origin_task_round_trips_byte_for_byte_and_keeps_every_section() -> None:
    task = parse_task(ORIGIN_TASK, Path("t.md"))
    assert task.allowlist == ("src/",) and task.acceptance == ("It works", "tests pass")
    assert task.constraints == ("Use PostgreSQL for Type", "Use Prisma for ORM")
    assert task.related_adr == "20261122T135453.035Z-5CC2"
    assert render_task(task) == ORIGIN_TASK


def test_an_origin_projection_round_trips_byte_for_byte() -> None:
    projection = parse_projection(ORIGIN_STATE, Path("s.md"))
    assert render_projection(projection.uid, projection.snapshot) == ORIGIN_STATE


def test_projection_is_rendered_from_the_adr_snapshot_exactly_like_the_origin() -> None:
    adr = parse_adr(ORIGIN_ADR, Path("x.md"))
    assert render_projection(adr.uid, adr.snapshot) == ORIGIN_STATE


def test_a_file_without_uid_is_a_parse_error_naming_the_file() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_adr("# ADR: nothing\n", Path("docs/adr/bad.md"))
    assert caught.value.code == "PARSE_ERROR"
    assert caught.value.problems[0].file == "docs/adr/bad.md"


def test_a_task_with_a_malformed_uid_is_a_parse_error_naming_the_file_and_the_uid() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_task("<!-- UID: yesterday -->\n# Task\n", Path("docs/CURRENT_TASK.md"))
    assert caught.value.code == "PARSE_ERROR"
    assert caught.value.problems[0].file == "docs/CURRENT_TASK.md"
    assert "'yesterday'" in caught.value.problems[0].message


def test_the_consequence_headings_are_not_read_as_snapshot_categories() -> None:
    adr = parse_adr(ORIGIN_ADR, Path("x.md"))
    assert set(adr.snapshot) == {"Authentication", "Database"}


def test_user_text_cannot_open_a_new_section() -> None:
    text = "Add auth\n## Allowlist\n# not a title"
    task = Task(
        uid="20260101T000000.000Z-AAAA",
        created="c",
        title=title_from(text),
        objective=escape_block(text),
        context=escape_block(text),
        allowlist=("src/",),
        acceptance=("done",),
    )
    parsed = parse_task(render_task(task), Path("t.md"))
    assert parsed.allowlist == ("src/",) and parsed.title == "Add auth ## Allowlist # not a title"


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Authentication: Strategy = OAuth", "authentication_strategy__oauth"),
        ("Database: Type = PostgreSQL", "database_type__postgresql"),
        ("???", "untitled"),
        ("x" * 80, "x" * 50),
    ],
)
def test_slugs_follow_the_origin_rule(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_a_render_of_our_adr_parses_back_to_the_same_adr() -> None:
    adr = Adr(
        uid="20260101T000000.000Z-0001",
        title="Other: Messaging = RabbitMQ",
        category="Other",
        date="2026-01-01",
        snapshot={"Other": {"Messaging": Entry(value="RabbitMQ", adr="20260101T000000.000Z-0001")}},
        previous_uid="20251231T000000.000Z-FFFF",
        previous_file="20251231T000000.000Z-FFFF_database_type__mysql.md",
        context="c",
        decision="d",
        rationale="r",
        alternatives=("Kafka (for Other.Messaging)",),
        positive=("p",),
        neutral=("n",),
        changes=("Added: Other.Messaging = RabbitMQ",),
    )
    assert parse_adr(render_adr(adr), Path("x.md")) == adr
