"""The `preflights` MCP tools `require_clarification` and `read_architecture`, as aliases.

Clients written for that tool call it with its own snake_case arguments and expect its reply
shapes: an MCP face concern, so they live here and not next to the operations. `SEED_ALIASES`
attaches `REQUIRE_CLARIFICATION_ALIAS` and `READ_ARCHITECTURE_ALIAS` to the `clarify` and
`read_architecture` operations by name (the registry adds them when it reflects `Project`); they
form the tool group `preflights`. `seed_error` gives the error reply
(`{"status": "error", "error": {code, message, details, recovery_hint}}`) for a `PreflightError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

import msgspec

from preflight_sdk.clarify.errors import repo_not_found
from preflight_sdk.clarify.results import ArchitectureResult, ArtifactType, ClarifyResult
from preflight_sdk.core import decoding
from preflight_sdk.core.errors import PreflightError

from .pool import check_path

__all__ = [
    "READ_ARCHITECTURE_ALIAS",
    "REQUIRE_CLARIFICATION_ALIAS",
    "SEED_ALIASES",
    "SEED_GROUP",
    "AliasSpec",
    "ReadArchitectureArgs",
    "ReadArchitectureReply",
    "RequireClarificationArgs",
    "RequireClarificationReply",
    "SeedErrorReply",
    "seed_error",
]


class AliasSpec(msgspec.Struct, frozen=True, kw_only=True):
    """An extra MCP tool name for an operation, with its own argument and reply shapes.

    Attributes:
        name: the tool name, used verbatim (no `preflight_` prefix), e.g. `require_clarification`.
        input_type: a Struct describing the alias's arguments (its field names are the wire names).
        to_kwargs: turns a decoded `input_type` instance into keyword arguments of the method;
            it is given the server's project folder too (None without one), against which a
            relative path argument resolves.
        output_type: the type of the alias's reply (for its outputSchema).
        from_result: turns the method's result into the alias's reply.
        description: the alias tool's description.
        from_error: turns a `PreflightError` into the alias's own error reply (default: the
            envelope with `isError`).
        error_type: the type of that error reply, so the outputSchema describes it too.
        group: the tool group of the alias (default: its operation's group).
        path_argument: the wire name of the argument that names the project (errors about the
            path name it), when the alias has one.
    """

    name: str
    input_type: Any
    to_kwargs: Callable[[Any, str | None], dict[str, Any]]
    output_type: Any
    from_result: Callable[[Any], Any]
    description: str
    from_error: Callable[[Any], Any] | None = None
    error_type: Any = None
    group: str | None = None
    path_argument: str | None = None


class _Seed(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A shape of the `preflights` MCP contract (snake_case on the wire)."""


class Preferences(_Seed, frozen=True):
    """`force_adr` writes an ADR even when the heuristics would not."""

    force_adr: bool = False


class RequireClarificationArgs(_Seed, frozen=True):
    """Arguments of `require_clarification`.

    Attributes:
        user_intention: the change in one sentence, e.g. "Add authentication".
        optional_context: background text, recorded in the task.
        session_id: the session_id of the previous reply; omit it to start a new session.
        answers: {question id: option, list of options, or text}.
        preferences: `force_adr: true` writes an ADR even for a bug fix.
        repo_path: a folder inside the git repository, relative to the server's project
            (default: the server's project).
    """

    user_intention: str
    optional_context: str | None = None
    session_id: str | None = None
    answers: dict[str, Any] | None = None
    preferences: Preferences | None = None
    repo_path: str | None = None


class SeedQuestion(_Seed, frozen=True):
    """A question: `single_choice`, `multi_choice` or `free_text`."""

    id: str
    type: Literal["single_choice", "multi_choice", "free_text"]
    question: str
    options: list[str] | None = None
    min_selections: int | None = None
    max_selections: int | None = None
    optional: bool = False


class SeedProgress(_Seed, frozen=True):
    """Questions sent so far and answers received."""

    asked_so_far: int
    answered: int


class SeedArtifact(_Seed, frozen=True):
    """A file written, relative to the repository root."""

    path: str
    type: ArtifactType
    uid: str | None = None


class RequireClarificationReply(_Seed, frozen=True):
    """`needs_clarification` (session_id, questions, progress) or `completed` (artifacts_created, summary)."""

    status: Literal["needs_clarification", "completed"]
    session_id: str | None = None
    questions: list[SeedQuestion] | None = None
    progress: SeedProgress | None = None
    artifacts_created: list[SeedArtifact] | None = None
    summary: str | None = None
    warning: str | None = None
    message: str | None = None


class ReadArchitectureArgs(_Seed, frozen=True):
    """Arguments of `read_architecture`.

    Attributes:
        repo_path: a folder inside the git repository to read, relative to the server's project;
            omit it for the server's project repository.
    """

    repo_path: str | None = None


class SeedArchitecture(msgspec.Struct, frozen=True, kw_only=True):
    """The latest ADR's UID (null when there is none) and its categories."""

    uid: str | None
    categories: dict[str, dict[str, str]]


class ReadArchitectureReply(msgspec.Struct, frozen=True, kw_only=True):
    """`{"status": "success", "architecture": {uid, categories}, "source_file": …}`."""

    status: Literal["success"]
    architecture: SeedArchitecture
    source_file: str


class SeedError(_Seed, frozen=True):
    """The `error` member of an error reply."""

    code: str
    message: str
    details: dict[str, Any] | None = None
    recovery_hint: str | None = None


class SeedErrorReply(msgspec.Struct, frozen=True, kw_only=True):
    """`{"status": "error", "error": {...}}`."""

    status: Literal["error"]
    error: SeedError


def _answer(value: Any) -> str | list[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


REPO_PATH = "repo_path"


def _project(repo_path: str | None, base: str | None) -> dict[str, Any]:
    """The `project_path` keyword naming the project the MCP face opens (none: the server's).

    A relative `repo_path` is taken from the server's project folder `base` (from the working
    directory only when the server has none). The repository is then found by walking up from
    it. A path that does not exist is REPO_NOT_FOUND at once: walking up from a typo could land
    in an unrelated parent repository.
    """
    if not repo_path:
        return {}
    check_path(repo_path, REPO_PATH)
    path = Path(os.path.expanduser(repo_path))
    if not path.is_absolute():
        path = Path(base or os.getcwd()) / path
    path = Path(os.path.normpath(path))
    if not path.exists():
        raise repo_not_found(path)
    return {"project_path": str(path)}


def _clarify_kwargs(args: RequireClarificationArgs, base: str | None) -> dict[str, Any]:
    answers = {k: a for k, v in (args.answers or {}).items() if (a := _answer(v)) is not None}
    return {
        "intention": args.user_intention,
        "answers": answers or None,
        "session_id": args.session_id,
        "context": args.optional_context,
        "force_adr": bool(args.preferences and args.preferences.force_adr),
        **_project(args.repo_path, base),
    }


def _clarify_reply(result: ClarifyResult) -> RequireClarificationReply:
    message = result.warning_reason if result.warning else None
    if result.status == "needs_clarification":
        return RequireClarificationReply(
            status="needs_clarification",
            session_id=result.session_id,
            questions=decoding.convert(result.questions, list[SeedQuestion], from_attributes=True),
            progress=SeedProgress(
                asked_so_far=result.progress.asked_so_far if result.progress else len(result.questions),
                answered=result.progress.answered if result.progress else 0,
            ),
            warning=result.warning,
            message=message,
        )
    return RequireClarificationReply(
        status="completed",
        artifacts_created=decoding.convert(result.artifacts, list[SeedArtifact], from_attributes=True),
        summary=result.summary or "",
        warning=result.warning,
        message=message,
    )


def _architecture_reply(result: ArchitectureResult) -> ReadArchitectureReply:
    return ReadArchitectureReply(
        status="success",
        architecture=SeedArchitecture(uid=result.uid, categories=result.categories),
        source_file=result.source_file,
    )


_SEED_CODES = {"CONFIG_INVALID": "PARSE_ERROR"}


def seed_error(error: PreflightError) -> SeedErrorReply:
    """Return the `preflights` error reply for `error` (a failed write is `FILESYSTEM_ERROR`)."""
    code = _SEED_CODES.get(error.code, error.code)
    if error.code == "INTERNAL" and error.details and "errno" in error.details:
        code = "FILESYSTEM_ERROR"
    return SeedErrorReply(
        status="error",
        error=SeedError(
            code=code,
            message=error.message,
            details=error.details,
            recovery_hint=error.hint_for("mcp") if error.hint else None,
        ),
    )


SEED_GROUP = "preflights"
"""The tool group of the alias pair (on by default: clients configured for Preflights expect it)."""


# The aliases of the `preflights` group answer errors in that tool's own shape.
_seed_alias = partial(
    AliasSpec, from_error=seed_error, error_type=SeedErrorReply, group=SEED_GROUP, path_argument=REPO_PATH
)

REQUIRE_CLARIFICATION_ALIAS = _seed_alias(
    name="require_clarification",
    input_type=RequireClarificationArgs,
    to_kwargs=_clarify_kwargs,
    output_type=RequireClarificationReply,
    from_result=_clarify_reply,
    description=(
        "Start or continue a clarification and write ADR/TASK files (docs/adr/, docs/CURRENT_TASK.md, "
        "docs/ARCHITECTURE_STATE.md). First call: user_intention only; the reply is "
        "needs_clarification with session_id and questions. Next call: the same user_intention, "
        'session_id and answers (a custom value is "Other: <text>"); the reply is completed with '
        "artifacts_created. Sessions expire after 30 idle minutes."
    ),
)

READ_ARCHITECTURE_ALIAS = _seed_alias(
    name="read_architecture",
    input_type=ReadArchitectureArgs,
    to_kwargs=lambda args, base: _project(args.repo_path, base),
    output_type=ReadArchitectureReply,
    from_result=_architecture_reply,
    description=(
        "Read the current architecture decisions: {status: success, architecture: {uid, categories: "
        "{Category: {Field: value}}}, source_file}. uid is the latest ADR's UID, null when no ADR exists. "
        "repo_path names a folder inside the git repository to read, relative to the server's project "
        "(the server's project repository when omitted)."
    ),
)

SEED_ALIASES: dict[str, tuple[AliasSpec, ...]] = {
    "clarify": (REQUIRE_CLARIFICATION_ALIAS,),
    "read_architecture": (READ_ARCHITECTURE_ALIAS,),
}
"""The alias tools of `Project`'s operations, by operation name."""
