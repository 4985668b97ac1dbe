"""The operations of the tool group `clarify`: ADR and task files written from a dialogue, and
the decisions read back.
"""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.clarify.results import ArchitectureResult, ClarifyResult
from preflight_sdk.core.operations import operation

from .base import Operations

__all__ = ["ClarifyOperations"]


class ClarifyOperations(Operations):
    """Clarifying an intention into decisions (tool group `clarify`)."""

    @operation(title="Clarify an intention into ADR and task files", group="clarify")
    async def clarify(
        self,
        intention: str,
        answers: dict[str, str | list[str]] | None = None,
        session_id: str | None = None,
        context: str | None = None,
        force_adr: bool = False,
    ) -> ClarifyResult:
        """Turn an intention into decisions before code: ADR and task files in the project's git repository.

        First call, the intention alone: the reply is needs_clarification with a sessionId and up
        to 4 questions (at most 5 per session). Next call, the same intention with session_id and
        answers: the reply is completed with the files written: an ADR in docs/adr/ when the
        change is architectural (or force_adr), docs/CURRENT_TASK.md and
        docs/ARCHITECTURE_STATE.md. Needs a git repository, not an e2e.yaml.

        Args:
            intention: the change in one sentence, e.g. "Add authentication".
            answers: {question id: answer}: an option or "Other: <text>", a list of options
                (multi_choice), or text (free_text).
            session_id: the sessionId of the previous reply; omit it to start a new session.
            context: background text, recorded in the task.
            force_adr: write an ADR even for a bug fix or a refactor.

        Returns:
            needs_clarification: sessionId, questions (id, type, question, options, optional,
            otherId), progress {askedSoFar, answered}, detectedFromIntent (answers the intention
            states). completed: artifacts [{path, type adr|task|projection, uid}], summary,
            adrReasons, archivedTask. warning "llm_fallback" with warningReason when a configured
            language model failed.

        Example:
            `await project.clarify("Add authentication", answers={"auth_strategy": "OAuth"}, session_id="s-7f3a")`

        Tips:
            INVALID_ANSWER names the question and its options: fix the answer and call again.
            SESSION_EXPIRED / SESSION_NOT_FOUND: start again without session_id.
        """
        from preflight_sdk.clarify.flow import clarify as _clarify

        return await _clarify(Path(self.path), intention, answers, session_id, context, force_adr)

    @operation(title="Read the architecture decisions", idempotent=True, group="clarify")
    async def read_architecture(self) -> ArchitectureResult:
        """Return the architecture decisions recorded in the repository's ADRs.

        Reads the latest ADR in docs/adr/ (highest UID), the source of truth, and rewrites
        docs/ARCHITECTURE_STATE.md from it when that file is missing or stale. Needs a git
        repository (found by walking up from the project path), not an e2e.yaml.

        Returns:
            uid: the latest ADR's UID (null when none exists); categories: {Category: {Field:
            value}}, e.g. {"Authentication": {"Strategy": "OAuth"}}; sourceFile; adrFile;
            regenerated.

        Example:
            `await project.read_architecture()`

        Tips:
            Follow these decisions when implementing; change one only through clarify (a new ADR).
        """
        from preflight_sdk.clarify.flow import read_architecture as _read_architecture

        return await _read_architecture(Path(self.path))
