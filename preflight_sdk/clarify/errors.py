"""The errors a clarification raises, each with its code and the next step to take.

Every constructor returns a `PreflightError` subclass from `preflight_sdk.core.errors`, so callers
catch one root. A malformed artifact is reported as `CONFIG_INVALID` with the file and line, and
a failed write as `INTERNAL` with the path: both name the file to look at.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from preflight_sdk.core.errors import ConfigError, ConfigProblem, InputError, PreflightError, StateError

__all__ = [
    "filesystem_error",
    "invalid_answer",
    "invalid_input",
    "lock_timeout",
    "parse_error",
    "repo_not_found",
    "session_expired",
    "session_not_found",
]

RESTART_HINT = "Call clarify again with the same intention and no session_id to start a new session."


def repo_not_found(start: Path) -> InputError:
    """No `.git` was found in `start` or any of its parents."""
    return InputError(
        f"No git repository found at {start} or any parent directory",
        code="REPO_NOT_FOUND",
        hint="Run `git init` in the project (or open a project inside a git repository) and retry.",
        details={"path": str(start)},
    )


def invalid_answer(question_id: str, message: str, *, allowed: Sequence[str] | None = None) -> InputError:
    """An answer does not fit its question (unknown option, wrong count, empty required text)."""
    details: dict[str, object] = {"question": question_id}
    hint = f"Answer `{question_id}` again."
    if allowed is not None:
        details["allowed"] = list(allowed)
        hint = (
            f"Answer `{question_id}` with one of: {', '.join(allowed)}; "
            'or give your own value as "Other: <text>".'
        )
    return InputError(
        f"Invalid answer for `{question_id}`: {message}", code="INVALID_ANSWER", hint=hint, details=details
    )


def invalid_input(message: str, *, hint: str, details: dict[str, object] | None = None) -> InputError:
    """An argument is malformed (empty intention, bad session id shape)."""
    return InputError(message, code="INVALID_INPUT", hint=hint, details=details)


def session_expired(session_id: str, idle_minutes: float) -> StateError:
    """The session saw no call for more than 30 minutes."""
    return StateError(
        f"Clarification session {session_id} expired after {idle_minutes:.0f} minutes without a call",
        code="SESSION_EXPIRED",
        hint=RESTART_HINT,
        details={"sessionId": session_id},
    )


def session_not_found(session_id: str, repo: Path) -> StateError:
    """No session with this id exists for this repository (never started, completed or expired)."""
    return StateError(
        f"No clarification session {session_id} in {repo}",
        code="SESSION_NOT_FOUND",
        hint=RESTART_HINT + " A session ends when it completes or after 30 idle minutes.",
        details={"sessionId": session_id, "repo": str(repo)},
    )


def parse_error(path: Path, message: str, *, line: int | None = None) -> ConfigError:
    """An existing artifact (ADR, task, projection) cannot be read."""
    return ConfigError(
        f"Cannot read {path.name}: {message}",
        code="PARSE_ERROR",
        hint="Fix the file by hand or restore it from git (`git checkout -- <file>`), then retry.",
        problems=[ConfigProblem(path="$", message=message, file=str(path), line=line)],
    )


def filesystem_error(path: Path, exc: OSError) -> PreflightError:
    """Writing the artifacts failed; nothing was changed (the previous files are intact)."""
    return PreflightError(
        f"Could not write {path}: {exc.strerror or exc}",
        code="FILESYSTEM_ERROR",
        hint="Check that docs/ is writable, then call `clarify` again with the same session_id.",
        details={"path": str(path), "errno": exc.errno},
        retryable=True,
    )


def lock_timeout(lock: Path, seconds: float) -> PreflightError:
    """Another clarification held the repository lock for too long."""
    return PreflightError(
        f"Another clarification is writing in this repository (lock {lock} held for {seconds:.0f}s)",
        code="INTERNAL",
        hint="Retry in a moment; if no other preflight process is running, delete the lock file.",
        details={"lock": str(lock)},
        retryable=True,
    )
