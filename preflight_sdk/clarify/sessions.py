"""Clarification sessions, persisted so any process can continue them.

A session is a JSON file `<repo>/.preflight/clarify/sessions/<id>.json`, so a CLI call can answer
questions an MCP tool call asked, and a restarted server loses nothing. A session expires after
30 minutes without a call (each call restarts the 30 minutes) and is deleted when it completes.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from pathlib import Path

import msgspec

from preflight_sdk.core import decoding

from .artifacts.files import read_text, state_dir, write_atomic
from .engine import Plan
from .errors import invalid_input, session_expired, session_not_found
from .questions import AnswerValue, Question

__all__ = ["IDLE_SECONDS", "Session", "delete", "exists", "load", "new_id", "prune", "save"]

IDLE_SECONDS = 30 * 60
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """One clarification in progress.

    Attributes:
        asked: ids of the questions sent so far (the plan's, then any follow-ups), at most 5.
        answers: canonical user answers by question id.
        touched: when the last call happened (seconds since the epoch); expiry counts from here.
    """

    id: str
    intention: str
    context: str | None
    force_adr: bool
    project_dir: str
    created: float
    touched: float
    plan: Plan
    asked: list[str]
    followups: list[Question] = msgspec.field(default_factory=list)
    answers: dict[str, AnswerValue] = msgspec.field(default_factory=dict)

    def question(self, qid: str) -> Question | None:
        """Return the plan question or follow-up with this id."""
        return next((q for q in [*self.plan.questions, *self.followups] if q.id == qid), None)


def new_id() -> str:
    """Return a fresh session id."""
    return uuid.uuid4().hex


def _path(repo: Path, session_id: str) -> Path:
    if not _ID.match(session_id):
        raise invalid_input(
            f"Malformed session_id {session_id!r}",
            hint="Pass the sessionId returned by the previous clarify call, unchanged.",
            details={"sessionId": session_id},
        )
    return state_dir(repo) / "sessions" / f"{session_id}.json"


def save(repo: Path, session: Session) -> None:
    """Write the session atomically (blocking)."""
    write_atomic(_path(repo, session.id), msgspec.json.encode(session).decode())


def exists(repo: Path, session_id: str) -> bool:
    """Whether the session's file is still there (blocking)."""
    return _path(repo, session_id).is_file()


def delete(repo: Path, session_id: str) -> None:
    """Remove the session if it exists (blocking)."""
    _path(repo, session_id).unlink(missing_ok=True)


def load(repo: Path, session_id: str, now: datetime) -> Session:
    """Return the live session `session_id` (blocking).

    Raises:
        StateError: SESSION_NOT_FOUND (unknown, completed or unreadable) or SESSION_EXPIRED
            (idle for more than 30 minutes; the file is removed, so a later call gets NOT_FOUND).
        InputError: INVALID_INPUT for a malformed id.
    """
    path = _path(repo, session_id)
    raw = read_text(path)
    if raw is None:
        raise session_not_found(session_id, repo)
    try:
        session = decoding.decode(raw, Session)
    except msgspec.DecodeError as exc:  # written by another version, or damaged
        path.unlink(missing_ok=True)
        raise session_not_found(session_id, repo) from exc
    idle = now.timestamp() - session.touched
    if idle > IDLE_SECONDS:
        path.unlink(missing_ok=True)
        raise session_expired(session_id, idle / 60)
    return session


def prune(repo: Path, now: datetime) -> None:
    """Delete expired session files (best effort, blocking)."""
    folder = repo / ".preflight" / "clarify" / "sessions"
    if not folder.is_dir():
        return
    for path in folder.glob("*.json"):
        try:
            session = decoding.decode(path.read_bytes(), Session)
            if now.timestamp() - session.touched > IDLE_SECONDS:
                path.unlink(missing_ok=True)
        except (OSError, msgspec.DecodeError):
            continue
