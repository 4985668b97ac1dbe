"""From the store and the project as it is now to the run's order: affected cases first, the rest
carried (with `only`), and what the result says about it.

Blocking: call from a worker thread (reads the store and hashes the suites' files).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig, TestFile
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.affected import AffectedSummary, CarriedFrom, Change
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.results.run import CaseResult
from preflight_sdk.store import LatestCaseRow, RunStore
from preflight_sdk.suites.context import case_id
from preflight_sdk.suites.orchestrator import test_file
from preflight_sdk.suites.ordering import CaseOrder

from .graph import configured_edges
from .inputs import RunInputs
from .rule import Candidate, CaseDecision, decide

__all__ = ["Affected", "AffectedAsk", "plan_affected"]

_USED = re.compile(r"\{\{\s*(?:runtime\.)?([A-Za-z_][A-Za-z0-9_]*)")
_SHOWN_CHANGES = 20


class AffectedAsk(msgspec.Struct, frozen=True, kw_only=True):
    """What a run asks: only the affected cases (`only`), carried verdicts at most `within_ms`
    old, and whether to stop at the first failure."""

    only: bool = False
    within_ms: int = 86_400_000
    fail_fast: bool = False


class Affected(msgspec.Struct, frozen=True, kw_only=True):
    """The run's order and selection (with `only`), and what its result says about them."""

    order: CaseOrder
    selection: dict[str, set[str]] | None
    summary: AffectedSummary


def plan_affected(
    store: RunStore,
    loaded: LoadedConfig,
    suites: Sequence[SuiteConfig],
    inputs: RunInputs,
    ask: AffectedAsk,
    *,
    setup: SetupResult | None,
    started: datetime,
) -> Affected:
    """Decide which of `suites`' cases an edit can affect (see `rule`) and how the run takes them."""
    rows = store.latest_cases([s.id for s in suites])
    previous = {row.case_id: row for row in rows}
    graph = configured_edges(loaded)
    for row in rows:
        if row.touches is not None:
            graph.observe(row.touches)
    known, files = _candidates(loaded, suites, rows)
    sequential = frozenset(sid for sid, test in files.items() if test.sequential)
    decisions = decide(
        [c for cases in known.values() for c in cases],
        previous,
        inputs,
        graph,
        started=started,
        within_ms=ask.within_ms,
        sequential=sequential,
    )
    by_suite: dict[str, list[CaseDecision]] = {}
    for decision in decisions:
        by_suite.setdefault(decision.suite, []).append(decision)
    first = {sid: frozenset(d.id for d in ds if d.affected) for sid, ds in by_suite.items()}
    leading = {sid for sid, ids in first.items() if ids} | {s.id for s in suites if s.id not in known}
    order = CaseOrder(
        first={k: v for k, v in first.items() if v}, suites=frozenset(leading), fail_fast=ask.fail_fast
    )
    selection: dict[str, set[str]] | None = None
    if ask.only:
        order, selection = _only(order, suites, known, files, by_suite, previous, started)
    summary = _summary(ask, decisions, suites, known, setup, order)
    return Affected(order=order, selection=selection, summary=summary)


def _candidates(
    loaded: LoadedConfig, suites: Sequence[SuiteConfig], rows: Sequence[LatestCaseRow]
) -> tuple[dict[str, list[Candidate]], dict[str, TestFile]]:
    """Each suite's cases as known before the run: a YAML suite's from its file, another's from its
    newest run (pytest and shell suites run whole); a suite whose cases are not known is left out."""
    known: dict[str, list[Candidate]] = {}
    files: dict[str, TestFile] = {}
    taken: set[str] = set()
    recorded: dict[str, list[LatestCaseRow]] = {}
    for row in rows:
        recorded.setdefault(row.suite, []).append(row)
    for suite in suites:
        if suite.runner == "yaml":
            try:
                test = test_file(loaded.resolve(suite.file or ""))
            except PreflightError:
                continue  # the suite runs and says what is wrong with its file
            files[suite.id] = test
            known[suite.id] = [
                Candidate(
                    id=case_id(suite.id, case.name or "case", taken), suite=suite.id, name=case.name or "case"
                )
                for case in test.cases
            ]
            continue
        own = recorded.get(suite.id, [])
        newest = max((row.run_id for row in own), default=None)
        cases = [row for row in own if row.run_id == newest]
        if cases:
            known[suite.id] = [Candidate(id=r.case_id, suite=suite.id, name=r.name) for r in cases]
    return known, files


def _only(
    order: CaseOrder,
    suites: Sequence[SuiteConfig],
    known: dict[str, list[Candidate]],
    files: dict[str, TestFile],
    by_suite: dict[str, list[CaseDecision]],
    previous: dict[str, LatestCaseRow],
    started: datetime,
) -> tuple[CaseOrder, dict[str, set[str]]]:
    """Only the affected cases run: the others carry their verdicts (a suite with none runs not at all)."""
    stamp = int(started.timestamp() * 1000)
    selection: dict[str, set[str]] = {}
    carried: dict[str, dict[str, CaseResult]] = {}
    whole: set[str] = set()
    for suite in suites:
        decisions = by_suite.get(suite.id)
        if suite.id not in known or not decisions:
            continue  # its cases are not known: it runs whole
        chosen = {d.id for d in decisions if d.affected}
        test = files.get(suite.id)
        if test is not None and chosen:
            chosen = _with_savers(test, [c.id for c in known[suite.id]], chosen)
        elif chosen:
            continue  # a pytest or shell suite runs whole when any of its cases is affected
        names = {c.id: c.name for c in known[suite.id]}
        carried[suite.id] = {
            d.id: CaseResult(
                id=d.id,
                name=names.get(d.id) or previous[d.id].name,
                suite=suite.id,
                status="carried",
                duration=0,
                timestamp=stamp,
                carried=d.carried,
            )
            for d in decisions
            if d.id not in chosen and d.carried is not None
        }
        if chosen:
            selection[suite.id] = chosen
        else:
            whole.add(suite.id)
    return msgspec.structs.replace(order, carried=carried, whole=frozenset(whole)), selection


def _with_savers(test: TestFile, ids: list[str], chosen: set[str]) -> set[str]:
    """`chosen` and every earlier case that saves a value a chosen case uses (until nothing changes):
    a value saved in an earlier run may name what no longer exists (an environment reset since)."""
    texts = {i: msgspec.json.encode(case).decode() for i, case in zip(ids, test.cases, strict=True)}
    saves = {i: set(case.save) for i, case in zip(ids, test.cases, strict=True)}
    position = {i: n for n, i in enumerate(ids)}
    grown = set(chosen)
    changed = True
    while changed:
        changed = False
        for case in sorted(grown, key=position.__getitem__):
            used = set(_USED.findall(texts[case]))
            for earlier in ids[: position[case]]:
                if earlier not in grown and saves[earlier] & used:
                    grown.add(earlier)
                    changed = True
    return grown


def _summary(
    ask: AffectedAsk,
    decisions: Sequence[CaseDecision],
    suites: Sequence[SuiteConfig],
    known: dict[str, list[Candidate]],
    setup: SetupResult | None,
    order: CaseOrder,
) -> AffectedSummary:
    affected = [d for d in decisions if d.affected]
    changes: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for decision in affected:
        if decision.change is not None:
            changes[decision.change] = changes.get(decision.change, 0) + 1
        elif decision.reason is not None:
            reasons[decision.reason] = reasons.get(decision.reason, 0) + 1
    unknown = [s.id for s in suites if s.id not in known]
    if unknown:
        reasons["in a suite whose cases are not known before it runs"] = len(unknown)
    sources: dict[str, CarriedFrom] = {}
    for result in (c for cases in order.carried.values() for c in cases.values()):
        verdict = result.carried
        assert verdict is not None
        seen = sources.get(verdict.run_id)
        sources[verdict.run_id] = CarriedFrom(
            run_id=verdict.run_id,
            started_at=verdict.started_at,
            age=verdict.age,
            cases=(seen.cases if seen else 0) + 1,
        )
    blocked = None
    for kind in ("engine", "config"):
        if changes.get(kind) == len(decisions) and decisions:
            blocked = "the engine changed" if kind == "engine" else "e2e.yaml changed"
    shown = sorted(changes.items(), key=lambda item: -item[1])[:_SHOWN_CHANGES]
    files = {s.id: s.file for s in suites if s.file}
    return AffectedSummary(
        mode="only" if ask.only else "first",
        affected=len(affected),
        considered=len(decisions),
        carried=sum(s.cases for s in sources.values()),
        changes=[_change(key, count, setup, decisions, files) for key, count in shown],
        reasons=reasons,
        carried_from=sorted(sources.values(), key=lambda s: s.run_id, reverse=True),
        blocked=blocked,
    )


def _change(
    key: str, count: int, setup: SetupResult | None, decisions: Sequence[CaseDecision], files: dict[str, str]
) -> Change:
    """A change as the result names it, in the setup plan's words when this run's setup saw it;
    a suite's by its file (`files`: suite id → its file)."""
    kind, _, name = key.partition(":")
    since = next((d.source for d in decisions if d.change == key and d.source), None)
    later = f"changed since run {since}" if since else "changed"
    if kind == "config":
        return Change(kind="config", name="e2e.yaml", why=later, cases=count)
    if kind == "engine":
        return Change(kind="engine", name="engine", why=f"the engine {later}", cases=count)
    if kind == "suite":
        return Change(kind="suite", name=name, why=f"{files.get(name) or 'its files'} {later}", cases=count)
    if kind == "mock":
        reloaded = setup is not None and any(m.name == name and m.action == "reloaded" for m in setup.mocks)
        return Change(
            kind="mock", name=name, why="routes reloaded" if reloaded else f"routes {later}", cases=count
        )
    step = next((s for s in (setup.services if setup else []) if s.name == name), None)
    if step is not None and step.action not in (None, "reused", "reset") and step.reason:
        return Change(kind="service", name=name, why=f"{step.action}: {step.reason}", cases=count)
    return Change(kind="service", name=name, why=later, cases=count)
