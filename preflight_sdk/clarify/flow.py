"""`clarify` and `read_architecture`: the two operations, from arguments to files and results."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import anyio

from preflight_sdk.core.errors import PreflightError

from . import sessions
from .answers import apply_answers, pending
from .artifacts.adr import ADR_DIR, Adr, latest_adr, read_adr, render_adr
from .artifacts.files import FileChange, WriteMode, commit, read_text, repo_lock
from .artifacts.projection import PROJECTION, render_projection
from .artifacts.state import archive_path, load_state
from .artifacts.task import CURRENT_TASK, render_task
from .artifacts.uid import next_uid, random_suffix
from .build import Clarified, build_adr, build_task
from .decision import decide, needs_adr
from .engine import analyze, make_plan
from .errors import invalid_input, session_not_found
from .llm.assist import LLMClient, attempt, extract_items, llm_from_env, word_questions
from .origin import remember
from .questions import AnswerValue
from .repo import find_repo, relative, scan
from .results import ArchitectureResult, Artifact, ArtifactType, ClarifyResult, Progress, Question
from .snapshot import DecisionItem, Snapshot, clean_categories

__all__ = ["clarify", "read_architecture"]

_MAX_INTENTION = 2000


def _now() -> datetime:
    return datetime.now(UTC)


def _snapshot_now(root: Path) -> Snapshot:
    ref = latest_adr(root)
    return read_adr(ref).snapshot if ref else {}


def _project_dir(root: Path, project_path: Path) -> str:
    path = project_path.expanduser()
    return relative(root, path.parent if path.is_file() else path)


def _needs(session: sessions.Session, questions: list[Question], warnings: list[str]) -> ClarifyResult:
    answered = sum(1 for q in session.asked if session.answers.get(q))
    return ClarifyResult(
        status="needs_clarification",
        session_id=session.id,
        questions=questions,
        progress=Progress(asked_so_far=len(session.asked), answered=answered),
        detected_from_intent=session.plan.detected,
        warning="llm_fallback" if warnings else None,
        warning_reason="; ".join(warnings) or None,
        hint=(
            f"Call clarify again with session_id={session.id!r} and answers={{question id: value}}. A choice "
            'answer is one of its options, or "Other: <your value>"; a multi_choice answer is a list. '
            "Optional questions may be left out. The session expires after 30 idle minutes."
        ),
    )


async def clarify(
    project_path: Path,
    intention: str,
    answers: Mapping[str, str | list[str]] | None = None,
    session_id: str | None = None,
    context: str | None = None,
    force_adr: bool = False,
    *,
    clock: Callable[[], datetime] | None = None,
    uid_suffix: Callable[[], str] | None = None,
    llm: LLMClient | None = None,
) -> ClarifyResult:
    """Start or continue a clarification in the git repository holding `project_path`.

    Args:
        project_path: a directory (or a file, e.g. e2e.yaml) inside a git repository; the files
            are written at the repository root.
        intention: the change, in a sentence ("Add authentication").
        answers: `{question id: answer}`. A choice answer is one option, or `"Other: <text>"`; a
            multi_choice answer is a list. With no `session_id`, answers given up front complete
            the clarification at once when they cover every required question; `{}` means
            "nothing to add".
        session_id: the `session_id` of the previous result, to continue that session.
        context: extra text (recorded in the task and the ADR, sent redacted to a model if one
            is configured; never used to detect topics or triggers).
        force_adr: write an ADR even when the heuristics would make a task only.
        clock: returns the current time (tests only; the real UTC clock otherwise).
        uid_suffix: returns the 4 hex characters of a UID (tests only; random otherwise).
        llm: a model client to use instead of the `PREFLIGHT_LLM_*` configuration.

    Returns:
        `needs_clarification` with `session_id`, at most 5 questions in total and `progress`, or
        `completed` with the files written.

    Raises:
        InputError: REPO_NOT_FOUND, INVALID_ANSWER (naming the question and its options),
            INVALID_INPUT (empty intention, malformed session id).
        StateError: SESSION_EXPIRED (30 idle minutes) or SESSION_NOT_FOUND.
        ConfigError: CONFIG_INVALID when an existing ADR or task cannot be parsed.
        PreflightError: INTERNAL (retryable) when the files cannot be written; nothing changed.
    """
    now_fn = clock or _now
    if not isinstance(intention, str) or (session_id is None and not intention.strip()):
        raise invalid_input(
            "The intention is empty", hint="Describe the change in a sentence, e.g. 'Add authentication'."
        )
    if len(intention) > _MAX_INTENTION:
        raise invalid_input(
            f"The intention is longer than {_MAX_INTENTION} characters",
            hint="Keep the intention to a sentence or two and pass details as `context`.",
        )
    root = await anyio.to_thread.run_sync(find_repo, Path(project_path))
    client, problem = (llm, None) if llm is not None else llm_from_env()
    warnings = [problem] if problem else []
    if session_id is None:
        facts = await anyio.to_thread.run_sync(scan, root)
        snapshot = await anyio.to_thread.run_sync(_snapshot_now, root)
        analysis = analyze(intention, snapshot)
        plan = make_plan(analysis, facts, force_adr=force_adr)
        if client is not None:
            asked = [q for q in plan.questions if q.id in plan.asked]
            wording, reason = await attempt(
                lambda: word_questions(client, intention, context, facts.summary(), asked)
            )
            if reason:
                warnings.append(reason)
            elif wording:
                plan = make_plan(analysis, facts, force_adr=force_adr, wording=wording)
        now = now_fn()
        await anyio.to_thread.run_sync(sessions.prune, root, now)
        session = sessions.Session(
            id=sessions.new_id(),
            intention=intention.strip(),
            context=context,
            force_adr=force_adr,
            project_dir=await anyio.to_thread.run_sync(_project_dir, root, Path(project_path)),
            created=now.timestamp(),
            touched=now.timestamp(),
            plan=plan,
            asked=plan.asked,
        )
    else:
        now = now_fn()
        session = await anyio.to_thread.run_sync(sessions.load, root, session_id, now)
    session = apply_answers(session, answers or {}, now)
    waiting = pending(session)
    first_look = session_id is None and answers is None
    if waiting or first_look:
        shown = [q for qid in session.asked if (q := session.question(qid))] if first_look else waiting
        async with repo_lock(root):
            await _save_live(root, session, continuing=session_id is not None)
        result = _needs(session, shown, warnings)
    else:
        result = await _complete(
            root,
            session,
            client,
            now_fn,
            uid_suffix or random_suffix,
            warnings,
            continuing=session_id is not None,
        )
    return _resumable(result, root, Path(project_path), session.intention, clock, uid_suffix, llm)


def _resumable(
    result: ClarifyResult,
    root: Path,
    project_path: Path,
    intention: str,
    clock: Callable[[], datetime] | None,
    uid_suffix: Callable[[], str] | None,
    llm: LLMClient | None,
) -> ClarifyResult:
    """Record how to continue `result`'s session: what a notebook form's Submit calls."""

    async def resume(answers: Mapping[str, AnswerValue], session_id: str) -> ClarifyResult:
        # The same call a caller would make next, with this call's hooks (a test's clock, a
        # given model client): the form then behaves exactly like `clarify` itself.
        return await clarify(
            project_path, intention, answers, session_id, clock=clock, uid_suffix=uid_suffix, llm=llm
        )

    return remember(result, root, resume)


async def _save_live(root: Path, session: sessions.Session, *, continuing: bool) -> None:
    """Save the session (under the repository lock), unless another call completed it meanwhile."""
    if continuing and not await anyio.to_thread.run_sync(sessions.exists, root, session.id):
        raise session_not_found(session.id, root)
    await anyio.to_thread.run_sync(sessions.save, root, session)


async def _complete(
    root: Path,
    session: sessions.Session,
    client: LLMClient | None,
    now_fn: Callable[[], datetime],
    suffix: Callable[[], str],
    warnings: list[str],
    *,
    continuing: bool,
) -> ClarifyResult:
    extra: list[DecisionItem] = []
    if client is not None and session.plan.kind != "task":
        values: dict[str, AnswerValue] = {**session.plan.prefilled, **session.answers}
        found, reason = await attempt(
            lambda: extract_items(client, session.intention, session.context, values)
        )
        if reason:
            warnings.append(reason)
        extra = found or []
    async with repo_lock(root):
        # Saved first, so that if writing the files fails the same call can be repeated with this id.
        await _save_live(root, session, continuing=continuing)
        state = await anyio.to_thread.run_sync(load_state, root)
        facts = await anyio.to_thread.run_sync(scan, root)
        decision = decide(
            session.plan, session.answers, state.snapshot, facts, project_dir=session.project_dir, extra=extra
        )
        wanted, reasons = needs_adr(session.plan, decision, force_adr=session.force_adr)
        now = now_fn()
        floor = state.floor
        changes: list[FileChange] = []
        artifacts: list[Artifact] = []
        adr: Adr | None = None
        clarified = Clarified(
            intention=session.intention, context=session.context, decision=decision, now=now
        )

        def write(path: str, text: str, mode: WriteMode, kind: ArtifactType, uid: str | None = None) -> None:
            """Write `path` (relative to the repository) with the commit, and report it as written."""
            changes.append(FileChange(path=root / path, text=text, mode=mode))
            artifacts.append(Artifact(path=path, type=kind, uid=uid))

        if wanted:
            floor = next_uid(now, floor, suffix)
            adr = build_adr(
                clarified,
                uid=floor,
                reasons=reasons,
                snapshot=state.snapshot,
                previous_uid=state.latest.uid if state.latest else None,
                previous_file=state.latest.path.name if state.latest else None,
            )
            write(f"{ADR_DIR}/{adr.file_name}", render_adr(adr), "create", "adr", adr.uid)
        archived: str | None = None
        if state.task_text is not None:
            archived, floor = archive_path(root, state.task_text, now, floor, suffix)
            if read_text(root / archived) != state.task_text:
                changes.append(FileChange(path=root / archived, text=state.task_text, mode="create"))
        task_uid = next_uid(now, floor, suffix)
        task = build_task(clarified, uid=task_uid, adr_uid=adr.uid if adr else None)
        write(CURRENT_TASK, render_task(task), "replace", "task", task_uid)
        latest_uid, snapshot = (
            (adr.uid, adr.snapshot) if adr else (state.latest.uid if state.latest else None, state.snapshot)
        )
        if latest_uid is not None:
            text = render_projection(latest_uid, snapshot)
            if text != state.projection_text:
                write(PROJECTION, text, "replace", "projection")
        try:
            await commit(changes)
        except PreflightError as exc:
            exc.details = {**(exc.details or {}), "sessionId": session.id}
            raise
        await anyio.to_thread.run_sync(sessions.delete, root, session.id)
    if adr is not None:
        summary = f"Recorded ADR {adr.uid} ({adr.title}) and wrote {CURRENT_TASK} for: {session.intention}"
    else:
        summary = f"Wrote {CURRENT_TASK} for: {session.intention} (no ADR: {reasons[-1]})"
    return ClarifyResult(
        status="completed",
        artifacts=artifacts,
        archived_task=archived,
        summary=summary,
        adr_reasons=reasons,
        detected_from_intent=session.plan.detected,
        warning="llm_fallback" if warnings else None,
        warning_reason="; ".join(warnings) or None,
        hint=f"Follow {CURRENT_TASK} (allowlist, constraints, acceptance criteria); "
        "call read_architecture for the decisions recorded so far.",
    )


async def read_architecture(project_path: Path) -> ArchitectureResult:
    """Return the latest ADR's snapshot, regenerating the projection when it is missing or stale.

    Raises:
        InputError: REPO_NOT_FOUND.
        ConfigError: CONFIG_INVALID when the latest ADR cannot be parsed.
    """
    root = await anyio.to_thread.run_sync(find_repo, Path(project_path))
    async with repo_lock(root):
        ref = await anyio.to_thread.run_sync(latest_adr, root)
        if ref is None:
            return ArchitectureResult(uid=None, categories={}, source_file=PROJECTION)
        adr = await anyio.to_thread.run_sync(read_adr, ref)
        text = render_projection(adr.uid, adr.snapshot)
        stale = await anyio.to_thread.run_sync(read_text, root / PROJECTION) != text
        if stale:
            await commit([FileChange(path=root / PROJECTION, text=text, mode="replace")])
    return ArchitectureResult(
        uid=adr.uid,
        categories=clean_categories(adr.snapshot),
        source_file=PROJECTION,
        adr_file=f"{ADR_DIR}/{ref.path.name}",
        regenerated=stale,
    )
