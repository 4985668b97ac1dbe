"""The deterministic engine, part 2: turn answers into a decision, and decide whether it is an ADR.

Answers map to snapshot fields through their question's target; answers stated in the intention
fill in for questions the user did not answer, and the user's own answers always win. Nothing is
invented: an unanswered question records nothing. The generic path records its approach under
`Other.<Area>_Approach`, a field every schema accepts, so it never fails validation.

An ADR is written when `force_adr` is set, when the intention carries a strong trigger, when the
decision changes a value an earlier ADR recorded, or when it records something new and the
intention is not a bug fix, refactor or config-only change. Restating recorded values is not a
decision: it makes no ADR.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

from .engine import Plan, folders_for
from .questions import AnswerValue, Question, split_items
from .repo import RepoFacts
from .snapshot import Change, DecisionItem, Entry, changes, normalize_item
from .text import field_name, one_line
from .vocab import OTHER, SPECS

__all__ = ["Decision", "decide", "effective_answers", "needs_adr"]


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """What the answers decide: snapshot items, their changes, and the task's scope."""

    items: list[DecisionItem]
    changes: list[Change]
    constraints: list[str]
    allowlist: list[str]
    forbidden: list[str]
    acceptance: list[str]
    alternatives: list[str]


def effective_answers(plan: Plan, answers: Mapping[str, AnswerValue]) -> dict[str, AnswerValue]:
    """Merge stated answers with the user's (the user's win) and resolve "Other (specify)"."""
    merged: dict[str, AnswerValue] = {**plan.prefilled, **answers}
    for qid, value in list(merged.items()):
        other = answers.get(f"{qid}__other")
        text = one_line(other if isinstance(other, str) else ", ".join(other or []))
        if value == OTHER:
            merged[qid] = text
        elif isinstance(value, list) and OTHER in value:
            merged[qid] = [v for v in value if v != OTHER] + ([text] if text else [])
    return {q: v for q, v in merged.items() if v and not q.endswith("__other")}


def _alternatives(question: Question, chosen: str, target: tuple[str, str]) -> list[str]:
    skip = {OTHER, "Custom", "None", chosen}
    return [f"{o} (for {target[0]}.{target[1]})" for o in question.options or [] if o not in skip]


def decide(
    plan: Plan,
    answers: Mapping[str, AnswerValue],
    snapshot: Mapping[str, Mapping[str, Entry]],
    facts: RepoFacts,
    *,
    project_dir: str,
    extra: list[DecisionItem] | None = None,
) -> Decision:
    """Return the decision the answers make, compared with `snapshot`."""
    values = effective_answers(plan, answers)
    by_id = {q.id: q for q in plan.questions}
    items: list[DecisionItem] = []
    alternatives: list[str] = []
    for qid, value in values.items():
        spec = SPECS.get(qid)
        if spec is None or spec.target is None or not isinstance(value, str):
            continue
        source: Literal["answer", "intent"] = (
            "intent" if qid in plan.prefilled and qid not in answers else "answer"
        )
        item = normalize_item(
            DecisionItem(
                category=spec.target[0], field=spec.target[1], value=value, question=qid, source=source
            )
        )
        if item is not None:
            items.append(item)
            if source == "answer":
                alternatives += _alternatives(by_id[qid], value, spec.target)
    if plan.kind == "generic" and isinstance(values.get("description"), str):
        area = values.get("category")
        name = field_name(area if isinstance(area, str) and area else "General") + "_Approach"
        item = normalize_item(
            DecisionItem(
                category="Other",
                field=name,
                value=str(values["description"]),
                question="description",
                structural=False,
            )
        )
        if item is not None:
            items.append(item)
    seen = {(i.category, i.field) for i in items}
    for candidate in extra or []:
        item = normalize_item(candidate)
        if item is not None and (item.category, item.field) not in seen:
            items.append(item)
            seen.add((item.category, item.field))
    constraints = [f"Use {i.value} for {i.field}" for i in items if i.structural]
    providers = values.get("oauth_providers")
    if providers and values.get("auth_strategy") in (None, "OAuth"):
        listed = providers if isinstance(providers, list) else [providers]
        constraints.append(f"Support sign-in with: {', '.join(listed)}")
    allowlist = _allowlist(values.get("allowlist_paths"), plan, facts, project_dir)
    forbidden = [f for f in facts.forbidden if f not in allowlist]
    criteria = values.get("acceptance_criteria")
    acceptance = split_items(criteria) if isinstance(criteria, str) else []
    return Decision(
        items=items,
        changes=changes(snapshot, items),
        constraints=constraints,
        allowlist=allowlist,
        forbidden=forbidden,
        acceptance=acceptance,
        alternatives=alternatives,
    )


def _allowlist(answer: AnswerValue | None, plan: Plan, facts: RepoFacts, project_dir: str) -> list[str]:
    if isinstance(answer, str) and answer.strip():
        paths = [p.removeprefix("./") for p in split_items(answer.replace("`", ""))]
        return [p + "/" if (facts.root / p).is_dir() and not p.endswith("/") else p for p in paths]
    found = folders_for(plan.topics, facts)
    if found:
        return found
    return ["./"] if project_dir == "." else [project_dir.rstrip("/") + "/"]


def needs_adr(plan: Plan, decision: Decision, *, force_adr: bool) -> tuple[bool, list[str]]:
    """Return whether the decision is an ADR, and the reasons (for the result and the ADR)."""
    recorded = [c for c in decision.changes if c.kind != "unchanged"]
    structural = {(i.category, i.field) for i in decision.items if i.structural}
    modified = [c for c in recorded if c.kind == "modified" and (c.category, c.field) in structural]
    added = [c for c in recorded if c.kind == "added" and (c.category, c.field) in structural]
    reasons: list[str] = []
    if force_adr:
        reasons.append("requested with force_adr")
    reasons += plan.analysis.strong
    reasons += [f"changes recorded decision {c.category}.{c.field} (was {c.previous})" for c in modified]
    if added and not plan.analysis.non_triggers:
        reasons += [f"new decision {c.category}.{c.field} = {c.value}" for c in added]
    if not decision.items:
        if plan.kind == "task":
            return False, [
                f"non-trigger '{plan.analysis.non_triggers[0]}' and no structural trigger: a task only"
            ]
        return False, [*reasons, "no decision to record (the answers set no architecture field)"]
    if reasons:
        return True, reasons
    if plan.analysis.non_triggers and added:
        return False, [f"non-trigger '{plan.analysis.non_triggers[0]}' and no structural trigger"]
    if not recorded:
        return False, ["the decision restates values already recorded"]
    return False, ["a generic change without a structural trigger (pass force_adr to record it)"]
