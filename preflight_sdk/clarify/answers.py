"""Apply a call's answers to a session: check each one, add "Other" follow-ups, keep the budget."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from .engine import MAX_QUESTIONS
from .errors import invalid_answer
from .questions import AnswerValue, Question, check_answer, followup_for
from .sessions import Session
from .vocab import OTHER, SPECS

__all__ = ["answered", "apply_answers", "pending"]


def _scalar(raw: object) -> object:
    # JSON clients send numbers and booleans for text answers; they mean the text.
    return str(raw).lower() if isinstance(raw, bool) else str(raw) if isinstance(raw, int | float) else raw


def apply_answers(session: Session, answers: Mapping[str, object], now: datetime) -> Session:
    """Return `session` with `answers` checked and merged (later answers replace earlier ones).

    Raises:
        InputError: INVALID_ANSWER for an unknown question id or an answer that does not fit.
    """
    merged: dict[str, AnswerValue] = dict(session.answers)
    followups = list(session.followups)
    asked = list(session.asked)
    for key, raw in answers.items():
        question = session.question(key)
        if question is None:
            parent = next((q for q in session.plan.questions if q.other_id == key), None)
            if parent is None:
                known = [
                    *asked,
                    *[q.other_id for q in session.plan.questions if q.other_id and q.id in asked],
                ]
                raise invalid_answer(key, "no question has this id in this session", allowed=known)
            question = followup_for(parent)
        spec = SPECS.get(question.id)
        value = check_answer(question, _scalar(raw), paths=bool(spec and spec.paths))
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    for question in session.plan.questions:
        value = merged.get(question.id)
        wants_text = value == OTHER or (isinstance(value, list) and OTHER in value)
        if not wants_text or not question.other_id or merged.get(question.other_id):
            continue
        if question.other_id in asked:
            continue
        if len(asked) >= MAX_QUESTIONS:
            raise invalid_answer(
                question.id,
                f'"{OTHER}" needs your value, and this session has already asked {MAX_QUESTIONS} questions',
                allowed=[o for o in question.options or [] if o != OTHER],
            )
        followups.append(followup_for(question))
        asked.append(question.other_id)
    return msgspec.structs.replace(
        session, answers=merged, followups=followups, asked=asked, touched=now.timestamp()
    )


def answered(session: Session, qid: str) -> bool:
    """Whether the question has an answer (given by the user or stated in the intention)."""
    return bool(session.answers.get(qid) or session.plan.prefilled.get(qid))


def pending(session: Session) -> list[Question]:
    """Return the asked questions that still need an answer (required ones, live follow-ups)."""
    out: list[Question] = []
    for qid in session.asked:
        question = session.question(qid)
        if question is None or question.optional or answered(session, qid):
            continue
        parent = next((q for q in session.plan.questions if q.other_id == qid), None)
        if parent is not None:
            value = session.answers.get(parent.id)
            if not (value == OTHER or (isinstance(value, list) and OTHER in value)):
                continue
        out.append(question)
    return out
