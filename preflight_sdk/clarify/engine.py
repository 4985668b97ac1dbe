"""The deterministic engine, part 1: read the intention and choose the questions.

`analyze` finds, on word boundaries only, the topics an intention is about, the answers it
already states (vocabulary terms), and the ADR trigger words of the seed heuristics:

- strong triggers (an ADR even for a bug fix): explicit words ("architecture", "strategy",
  "approach", "ADR"), a migration ("migrate to", "moving to", "replace X with Y"), or a new
  dependency named together with a change verb ("add Clerk");
- weak triggers: topic keywords (auth, database, cache, deploy, queue…) and "framework"/"runtime";
- non-triggers: bug fixes, typos, refactors, config-only changes. They suppress an ADR only
  when no strong trigger is present.

`plan` then picks one of three paths: `domain` (questions of the detected topics), `generic`
(area and approach, for intentions with no known topic: it always yields a valid decision) or
`task` (a non-trigger without a strong trigger: only scope and acceptance questions). At most
five questions are asked per session, four in the first turn (the fifth is kept for the
follow-up of an "Other (specify)" answer); questions whose answer the intention states are not
asked and are reported as detected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

import msgspec

from .questions import AnswerValue, Question, build_question
from .repo import RepoFacts
from .results import Detected
from .snapshot import Entry
from .text import find_terms, has_term
from .vocab import (
    CHANGE_VERBS,
    EXPLICIT,
    MIGRATION,
    NON_TRIGGERS,
    SPECS,
    STRUCTURAL_WORDS,
    TOPICS,
    VOCABULARY,
    Topic,
)

__all__ = ["MAX_QUESTIONS", "Analysis", "Plan", "analyze", "folders_for", "make_plan"]

MAX_QUESTIONS = 5
# The first turn leaves one question free, so an "Other (specify)" answer can get its follow-up.
FIRST_TURN = MAX_QUESTIONS - 1
_LEAVING = re.compile(r"(?<![a-z0-9])(?:from|replac(?:e|es|ed|ing))\s+(?:the\s+|our\s+)?$", re.IGNORECASE)
_REPLACE = re.compile(r"(?<![a-z0-9])replac(?:e|es|ed|ing)\b.{1,60}?\bwith\b", re.IGNORECASE)


class Analysis(msgspec.Struct, frozen=True, kw_only=True):
    """What the intention says: topics (most mentioned first), stated answers and triggers."""

    topics: list[str]
    stated: dict[str, str]
    strong: list[str]
    weak: list[str]
    non_triggers: list[str]


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """The questions of a session: all of them (asked or answered by the intention), in order."""

    kind: Literal["domain", "generic", "task"]
    questions: list[Question]
    asked: list[str]
    prefilled: dict[str, AnswerValue]
    detected: list[Detected]
    analysis: Analysis

    @property
    def topics(self) -> list[str]:
        """The topics the intention is about, most mentioned first (the analysis's)."""
        return self.analysis.topics


def _topic(name: str) -> Topic:
    return next(t for t in TOPICS if t.name == name)


def _snapshot_value(snapshot: Mapping[str, Mapping[str, Entry]], target: tuple[str, str]) -> str | None:
    for cat, fields in snapshot.items():
        if cat.lower() == target[0].lower():
            for name, entry in fields.items():
                if name.lower() == target[1].lower():
                    return entry.value
    return None


def analyze(intention: str, snapshot: Mapping[str, Mapping[str, Entry]]) -> Analysis:
    """Read `intention` (the optional context is not used for triggers: it may hold any text)."""
    vocab_terms = {term: (qid, value) for term, qid, value in VOCABULARY}
    stated: dict[str, str] = {}
    stated_terms: dict[str, str] = {}
    hits = find_terms(intention, vocab_terms)
    # "from MySQL to Postgres", "replace Auth0 with Clerk": the first name is what is left behind.
    leaving = {id(h) for h in hits if _LEAVING.search(intention[: h.start])}
    for hit in sorted(hits, key=lambda h: id(h) in leaving):
        qid, value = vocab_terms[hit.term]
        if qid not in stated:
            stated[qid], stated_terms[qid] = value, hit.term
    scores: list[tuple[int, int, str]] = []
    weak: list[str] = []
    for topic in TOPICS:
        hits = find_terms(intention, topic.keywords)
        positions = [h.start for h in hits]
        for qid, term in stated_terms.items():
            if qid in topic.questions:
                match = re.search(re.escape(term), intention, re.IGNORECASE)
                positions.append(match.start() if match else len(intention))
        if positions:
            scores.append((-len(positions), min(positions), topic.name))
            weak += [f"keyword '{h.term}' ({topic.category})" for h in hits]
    weak += [f"keyword '{h.term}'" for h in find_terms(intention, STRUCTURAL_WORDS)]
    strong = [f"explicit '{h.term}'" for h in find_terms(intention, EXPLICIT)]
    strong += [f"migration '{h.term}'" for h in find_terms(intention, MIGRATION)]
    if _REPLACE.search(intention):
        strong.append("migration 'replace … with'")
    if any(has_term(intention, verb) for verb in CHANGE_VERBS):
        for qid, value in stated.items():
            target = SPECS[qid].target if qid in SPECS else None
            if target and _snapshot_value(snapshot, target) != value:
                strong.append(f"new dependency '{value}'")
    return Analysis(
        topics=[name for _, _, name in sorted(scores)],
        stated=stated,
        strong=strong,
        weak=weak,
        non_triggers=[h.term for h in find_terms(intention, NON_TRIGGERS)],
    )


def _folder_matches(folder: str, names: tuple[str, ...]) -> bool:
    base = folder.rsplit("/", 1)[-1]
    return any(has_term(base.replace("_", " "), name) for name in names)


def folders_for(topics: list[str], facts: RepoFacts) -> list[str]:
    """Return the repository folders named like the topics' usual folders (shallowest, ≤ 8)."""
    names = tuple(n for t in topics for n in _topic(t).folders)
    found: list[str] = []
    for folder in sorted(facts.folders, key=lambda f: (f.count("/"), f)):
        if _folder_matches(folder, names) and not any(folder.startswith(p) for p in found):
            found.append(folder + "/")
    return found[:8]


def make_plan(
    analysis: Analysis,
    facts: RepoFacts,
    *,
    force_adr: bool,
    wording: Mapping[str, str] | None = None,
) -> Plan:
    """Choose the path and the questions (≤ 5 asked), pre-filling what the intention states."""
    if analysis.non_triggers and not analysis.strong and not force_adr:
        kind: Literal["domain", "generic", "task"] = "task"
        ids: list[str] = []
    elif analysis.topics:
        kind = "domain"
        ids = list(dict.fromkeys(q for t in analysis.topics for q in _topic(t).questions))
        strategy = analysis.stated.get("auth_strategy")
        if strategy and strategy != "OAuth" and "oauth_providers" in ids:
            ids.remove("oauth_providers")
    else:
        kind = "generic"
        ids = ["category", "description"]
    required = [q for q in ids if not SPECS[q].optional]
    scope = ["allowlist_paths"] if not folders_for(analysis.topics, facts) else []
    ids = [*required, *scope, "acceptance_criteria", *[q for q in ids if SPECS[q].optional]]
    words = wording or {}
    questions = [build_question(SPECS[q], facts.signals, words.get(q)) for q in ids]
    prefilled: dict[str, AnswerValue] = {q: v for q, v in analysis.stated.items() if q in ids}
    detected = [Detected(question_id=q, label=SPECS[q].label, value=v) for q, v in prefilled.items()]
    asked = [q for q in ids if q not in prefilled][:FIRST_TURN]
    return Plan(
        kind=kind,
        questions=questions,
        asked=asked,
        prefilled=prefilled,
        detected=detected,
        analysis=analysis,
    )
