"""The run-store operations besides starting: list, cancel, resume, diff, artifacts, prune, history."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Collection
from functools import partial
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.core.errors import InputError, StateError
from preflight_sdk.core.results.run import CaseResult, RunResult
from preflight_sdk.core.results.runs import (
    ArtifactContent,
    CancelResult,
    CaseChange,
    OperationCall,
    OperationLog,
    PruneResult,
    RunDiff,
    RunLine,
    RunList,
)
from preflight_sdk.processes.groups import stop_groups
from preflight_sdk.store import is_run_id
from preflight_sdk.store.calls import flush_calls
from preflight_sdk.store.runs import RunStore
from preflight_sdk.suites.artifacts import content_type_of
from preflight_sdk.suites.context import case_id

from .affected.carry import outcomes
from .coverage_diff import coverage_changes
from .history import cause_of
from .reading import line_of_row, totals_of_row
from .retention import limits
from .supervisor import RunSupervisor

__all__ = [
    "cancel_run",
    "check_run_id",
    "diff_runs",
    "get_artifact",
    "list_runs",
    "operation_log",
    "prune_runs",
    "resolve_run_id",
    "resume_selection",
]

_STATUSES = ("queued", "running", "passed", "failed", "cancelled", "interrupted", "error")
_KINDS = ("test", "build", "setup")
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/x-ndjson")
# An artifact name longer than this (or with a longer part) names no file a run wrote.
_MAX_ARTIFACT_NAME = 1024
_MAX_NAME_PART = 255
ARTIFACT_LIMIT = 200_000
_NOT_RERUN_SHOWN = 500  # ids named in a diff's notRerun (all are counted in `unchanged`)


def check_run_id(run_id: str, *, field: str = "runId") -> None:
    """INVALID_INPUT unless `run_id` has the shape of a run id (a ULID)."""
    if not isinstance(run_id, str) or not is_run_id(run_id):
        shown = run_id[:40] if isinstance(run_id, str) else type(run_id).__name__
        raise InputError(
            f"{field} {shown!r} is not a run id",
            hint="run ids are 26-character ULIDs such as 01JDQ8ZK5X7N3V9G2H4M6P8R0T; `list_runs` shows them",
            details={"field": field},
        )


LATEST = "latest"
"""What a run id argument may also say: the project's newest run."""
_PREFIX = re.compile(r"^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{4,25}$")  # ULID characters (Crockford base32)


async def resolve_run_id(sup: RunSupervisor, run_id: str, *, field: str = "runId") -> str:
    """The run id `run_id` names: itself, the newest run for `latest`, or the one run whose id
    starts with it (at least 4 characters, any case).

    Raises:
        InputError: INVALID_INPUT for what is none of these, or a prefix several runs share (they
            are listed); RUN_NOT_FOUND for `latest` or a prefix without a run.
    """
    if isinstance(run_id, str) and is_run_id(run_id):
        return run_id
    if run_id == LATEST or (isinstance(run_id, str) and _PREFIX.match(run_id)):
        store = await sup.store()
        found: list[str] = await sup.call(_matching, store, run_id) or []
        if len(found) == 1:
            return found[0]
        if not found:
            what = (
                "there are no runs in this project yet"
                if run_id == LATEST
                else f"no run id starts with {run_id!r}"
            )
            raise InputError(what, code="RUN_NOT_FOUND", hint="`list_runs` shows the runs of this project")
        raise InputError(
            f"{field} {run_id!r} starts {len(found)}+ run ids: {', '.join(found[:5])}",
            hint="give more characters of the id",
            details={"field": field, "matches": found[:5]},
        )
    check_run_id(run_id, field=field)  # raises, with the hint on what a run id looks like
    return run_id


def _matching(store: RunStore, text: str) -> list[str]:
    """The newest run for `latest`, else up to 6 run ids that start with `text` (upper-cased)."""
    if text == LATEST:
        return list(store.newest_ids(1))
    prefix = text.upper()
    with store.db.read() as conn:
        rows = conn.execute(
            "SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ? ORDER BY run_id DESC LIMIT 6",
            (prefix, prefix + "~"),
        )
        return [r[0] for r in rows]


async def list_runs(
    sup: RunSupervisor,
    *,
    status: str | None,
    suite: str | None,
    kind: str | None,
    test_id: str | None,
    limit: int,
    before: str | None,
) -> RunList:
    """Runs newest first, one compact line each."""
    if status is not None and status not in _STATUSES:
        raise InputError(f"status {status!r} is not a run status", hint=f"one of: {', '.join(_STATUSES)}")
    if kind is not None and kind not in _KINDS:
        raise InputError(f"kind {kind!r} is not a run kind", hint=f"one of: {', '.join(_KINDS)}")
    if not 1 <= limit <= 500:
        raise InputError(f"limit must be between 1 and 500, not {limit}", hint="page with `before` for more")
    if before is not None:
        check_run_id(before, field="before")
    store = await sup.store()
    rows = await sup.call(
        store.runs, status=status, suite=suite, kind=kind, test_id=test_id, limit=limit + 1, before=before
    )
    rows = rows or []
    lines = [line_of_row(r, RunLine, duration=r.duration_ms, totals=totals_of_row(r)) for r in rows[:limit]]
    return RunList(runs=lines, next_before=lines[-1].run_id if len(rows) > limit else None)


async def cancel_run(sup: RunSupervisor, run_id: str) -> CancelResult:
    """Stop a live run (owned here or by another process); a finished run comes back unchanged."""
    run_id = await resolve_run_id(sup, run_id)
    live = sup.live.get(run_id)
    if live is not None:
        live.cancel()
        with anyio.move_on_after(30):
            await live.done.wait()
        return CancelResult(cancelled=True, run=await sup.get(run_id, None))
    store = await sup.store()
    current = await sup.get(run_id, None)  # RUN_NOT_FOUND for an unknown id
    # A run whose owner was killed reads `interrupted`: what its suites left running stops here.
    state_root = (await sup.env.ensure_loaded(persist=False)).state_root
    await anyio.to_thread.run_sync(partial(stop_groups, state_root, orphans_only=True))
    if current.finished:
        return CancelResult(cancelled=False, run=current)
    asked = await sup.call(store.request_cancel, run_id)
    # The owner checks every half second; give it a few seconds to stop and record its end.
    result = await sup.get(run_id, 10.0)
    return CancelResult(cancelled=bool(asked), run=result)


async def resume_selection(
    sup: RunSupervisor, run_id: str, saved: Collection[str] = ()
) -> tuple[str, list[str], dict[str, set[str]]]:
    """The run `run_id` names (`latest`, a prefix), and its suites and cases that did not pass
    (failed, errored, never finished): the cases a resumed run runs again. Its other suites come
    too, each with no case to run again: the resumed run carries their verdicts (see
    `affected.carry`), as it carries the other cases of the suites it runs again.

    `saved` are the ids of saved tests and suites, YAML suites that e2e.yaml does not list.
    """
    run_id = await resolve_run_id(sup, run_id)
    original = await sup.get(run_id, None)
    if original.kind != "test":
        raise InputError(
            f"run {run_id} is a {original.kind} run: only test runs can be resumed",
            hint=f"call `{original.kind}` again instead",
        )
    if not original.finished:
        raise StateError(
            f"run {run_id} is still {original.status}",
            hint="wait for it with `get_run`, or `cancel_run` it, then call `resume_run`",
            details={"status": original.status},
        )
    loaded = await sup.env.ensure_loaded()
    known = {s.id: s for s in loaded.suites}
    recorded = {c.id: c for s in original.suites for c in s.cases}
    suites: list[str] = []
    selection: dict[str, set[str]] = {}
    taken: set[str] = set()
    for suite_id in original.selected_suites or [s.id for s in original.suites]:
        suite = known.get(suite_id)
        if suite is None and suite_id in saved:
            left = {c.id for c in recorded.values() if c.suite == suite_id and c.verdict != "passed"}
            if left:
                suites.append(suite_id)
                selection[suite_id] = left
            continue
        if suite is None:
            continue  # removed from e2e.yaml since
        test = loaded.test_files.get(suite_id)
        if suite.runner != "yaml" or test is None:
            # pytest and shell suites are re-run whole when any of their cases did not pass.
            cases = [c for c in recorded.values() if c.suite == suite_id]
            if not cases or any(c.verdict != "passed" for c in cases):
                suites.append(suite_id)
            continue
        ids = [case_id(suite_id, case.name or "case", taken) for case in test.cases]
        left = {i for i in ids if (recorded.get(i) is None or recorded[i].verdict != "passed")}
        skipped_by_file = {i for i, case in zip(ids, test.cases, strict=True) if case.skip}
        left -= skipped_by_file
        if left:
            suites.append(suite_id)
            selection[suite_id] = left
    if not suites:
        raise InputError(
            f"run {run_id} has nothing to resume: every case it ran passed",
            code="INVALID_INPUT",
            hint="call `run` again for a fresh verdict",
            details={
                "runId": run_id,
                "status": original.status,
                "totals": msgspec.to_builtins(original.totals),
            },
        )
    rerun = set(suites)
    listed = [
        sid
        for sid in original.selected_suites or [s.id for s in original.suites]
        if sid in rerun or (sid in known and any(c.suite == sid for c in recorded.values()))
    ]
    for sid in listed:
        if sid not in rerun:
            selection[sid] = set()  # every case of it passed: carried whole
    return run_id, listed, selection


async def diff_runs(sup: RunSupervisor, base: str, head: str) -> RunDiff:
    """Per case: newly failing, fixed, still failing (and whether the cause changed), added, removed."""
    base = await resolve_run_id(sup, base, field="base")
    head = await resolve_run_id(sup, head, field="head")
    old = await sup.get(base, None)
    new = await sup.get(head, None)
    before = outcomes(old, await _resumed(sup, old))
    after = outcomes(new, await _resumed(sup, new))
    newly, fixed, still, added, removed, not_rerun = [], [], [], [], [], []
    unchanged = 0
    for cid, case in after.items():
        prior = before.get(cid)
        if prior is None:
            added.append(CaseChange(id=cid, head=case.verdict))
            continue
        if (
            case.status == "carried"
            and case.carried is not None
            and case.carried.run_id == _source(prior, base)
        ):
            not_rerun.append(cid)  # the head did not run it again: the same verdict, from the base
        if case.verdict == "failed" and prior.verdict == "failed":
            was, now = cause_of(prior), cause_of(case)
            still.append(CaseChange(id=cid, base="failed", head="failed", cause_changed=was != now,
                                    base_cause=was, head_cause=now))  # fmt: skip
        elif case.verdict == "failed":
            newly.append(CaseChange(id=cid, base=prior.verdict, head="failed", head_cause=cause_of(case)))
        elif prior.verdict == "failed":
            fixed.append(CaseChange(id=cid, base="failed", head=case.verdict, base_cause=cause_of(prior)))
        else:
            unchanged += 1
    removed = [CaseChange(id=cid, base=c.verdict) for cid, c in before.items() if cid not in after]
    changed = sum(1 for c in still if c.cause_changed)
    summary = (
        f"{len(newly)} newly failing, {len(fixed)} fixed, {len(still)} still failing"
        f" ({changed} with a new cause), {len(added)} added, {len(removed)} removed, {unchanged} unchanged"
    )
    if not_rerun:
        summary += f" ({len(not_rerun)} not run again: the head carries the base's verdict)"
    coverage = coverage_changes(old.contracts, new.contracts)
    moved = [c for c in coverage if (c.base_covered, c.base_statuses) != (c.head_covered, c.head_statuses)]
    if moved:
        summary += "; coverage " + ", ".join(
            f"{c.contract} {c.base_covered}→{c.head_covered}/{c.operations} operations" for c in moved
        )
    return RunDiff(
        base=base, head=head, newly_failing=newly, fixed=fixed, still_failing=still, added=added,
        removed=removed, unchanged=unchanged, summary=summary, contracts=coverage,
        not_rerun=not_rerun[:_NOT_RERUN_SHOWN],
    )  # fmt: skip


async def _resumed(sup: RunSupervisor, run: RunResult) -> RunResult | None:
    """The run `run` resumed, when it resumed one that is still recorded."""
    if run.resumed_from is None:
        return None
    try:
        return await sup.get(run.resumed_from, None)
    except InputError:
        return None  # pruned since: what the resumed run listed is all there is


def _source(case: CaseResult, run_id: str) -> str:
    """The run whose verdict `case` (of run `run_id`) is: its own, or the one it carries."""
    return case.carried.run_id if case.carried is not None else run_id


async def get_artifact(
    sup: RunSupervisor, run_id: str, name: str, offset: int, limit: int
) -> ArtifactContent:
    """A file of a run, read only from inside that run's folder."""
    run_id = await resolve_run_id(sup, run_id)
    if offset < 0 or not 1 <= limit <= 1_000_000:
        raise InputError(
            "offset must be >= 0 and limit between 1 and 1000000", hint="e.g. offset=0, limit=200000"
        )
    await sup.get(run_id, None)  # RUN_NOT_FOUND for an unknown run
    store = await sup.store()
    folder = store.runs_folder(run_id)
    parts = Path(name).parts
    # "." or "./" has no part at all: it names the run's folder itself, never one of its files.
    if not parts or "\x00" in name or os.path.isabs(name) or ".." in parts:
        raise InputError(
            f"artifact name {name[:80]!r} must name a file inside the run's folder",
            hint="use a name from the run's artifacts, e.g. report.json or cases/<caseId>.json",
            details={"field": "name"},
        )
    longest = max(len(part.encode(errors="surrogatepass")) for part in parts)
    if len(name) > _MAX_ARTIFACT_NAME or longest > _MAX_NAME_PART:
        raise InputError(
            f"artifact name {name[:80]!r}… is too long ({len(name)} characters, longest part {longest} bytes)",
            hint=f"no artifact name is longer than {_MAX_ARTIFACT_NAME} characters or has a part over "
            f"{_MAX_NAME_PART} bytes; list the run's files with get_run (its `artifacts`)",
            details={"field": "name", "length": len(name)},
        )
    target = folder / name
    real_folder = await anyio.to_thread.run_sync(os.path.realpath, folder)
    real = await anyio.to_thread.run_sync(os.path.realpath, target)
    if os.path.commonpath([real_folder, real]) != real_folder:
        raise InputError(
            f"artifact {name!r} points outside the run's folder",
            hint="links out of a run's folder are not followed",
        )
    try:
        data = await anyio.to_thread.run_sync(Path(real).read_bytes)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        names = [a.name for a in (await sup.call(store.artifacts, run_id) or [])]
        raise InputError(
            f"run {run_id} has no artifact {name!r}",
            code="ARTIFACT_NOT_FOUND",
            hint="one of: " + (", ".join(names[:20]) or "(this run wrote no files)"),
            details={"artifacts": names},
        ) from None
    except OSError as exc:  # the name is checked above; say what the system said, not where
        raise InputError(
            f"artifact {name!r} of run {run_id} cannot be read: {exc.strerror or type(exc).__name__}",
            hint="use a name from the run's artifacts, e.g. report.json or cases/<caseId>.json",
            details={"field": "name"},
        ) from None
    kind = content_type_of(name)
    chunk = data[offset : offset + limit]
    more = offset + limit < len(data)
    text: str | None = None
    if kind.startswith(_TEXT_TYPES):
        try:
            text = chunk.decode()
        except UnicodeDecodeError:
            text = None
    return ArtifactContent(
        run_id=run_id,
        name=name,
        content_type=kind,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        encoding="utf-8" if text is not None else "base64",
        content=text if text is not None else base64.b64encode(chunk).decode(),
        offset=offset,
        next_offset=offset + limit if more else None,
    )


async def prune_runs(sup: RunSupervisor, keep: int | None, max_age: str | None) -> PruneResult:
    """Delete finished runs past the limits (the project's, unless given here)."""
    loaded = await sup.env.ensure_loaded()
    default_keep, default_age = limits(loaded)
    if keep is not None and keep < 0:
        raise InputError(f"keep must be >= 0, not {keep}", hint="keep=0 deletes every finished run")
    from preflight_sdk.core.durations import parse_duration

    age = parse_duration(max_age, field="maxAge") if max_age is not None else default_age
    store = await sup.store()
    deleted = await sup.call(
        store.prune, keep=default_keep if keep is None else keep, max_age_seconds=age, keep_ids=list(sup.live)
    )
    remaining = await sup.call(store.runs, limit=100_000)
    return PruneResult(deleted=list(deleted or []), remaining=len(remaining or []))


async def operation_log(sup: RunSupervisor, limit: int) -> OperationLog:
    """The newest operation calls recorded in the store."""
    store = await sup.store()
    await anyio.to_thread.run_sync(flush_calls)  # this process's latest calls may still be queued
    rows = await sup.call(store.operations, limit) or []
    return OperationLog(calls=[line_of_row(r, OperationCall, duration=r.duration_ms) for r in rows])
