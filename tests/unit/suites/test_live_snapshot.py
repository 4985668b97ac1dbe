"""A live run's partial result (what another process's get_run shows while it runs): the cases
finished so far, secrets replaced, each case redacted once however many snapshots are taken, so a
long run's snapshots cost what its new cases cost, not what all its cases cost every time."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

import msgspec

from preflight_sdk.config import SuiteConfig
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.run import CaseResult
from preflight_sdk.suites import orchestrator
from preflight_sdk.suites.context import RunContext
from preflight_sdk.suites.events import EventLog
from preflight_sdk.suites.orchestrator import partial_result

SECRET = "s3cr3t-token-value"


class CountingRedactor(Redactor):
    """The real policy, counting the cases it is asked to scrub."""

    def __init__(self) -> None:
        super().__init__(values=[SECRET])
        self.cases: list[str] = []

    def scrub(self, value: Any) -> Any:
        if isinstance(value, CaseResult):
            self.cases.append(value.id)
        return super().scrub(value)


def _case(suite: str, number: int) -> CaseResult:
    return CaseResult(
        id=f"{suite}.c{number}", name=f"c{number} sent {SECRET}", suite=suite, status="passed",
        duration=1, timestamp=0,
    )  # fmt: skip


def _state(redactor: Redactor) -> tuple[orchestrator.TestRunState, list[CaseResult]]:
    log = EventLog("run", "0" * 32, "1" * 16, None)
    state = orchestrator.TestRunState("run", log)
    state.redactor = redactor
    state.suites = [SuiteConfig(id="a", file="a.yaml"), SuiteConfig(id="b", file="b.yaml")]
    finished: list[CaseResult] = []
    contracts = SimpleNamespace(active=False, run_warnings=[])
    state.context = cast(
        RunContext, SimpleNamespace(finished=finished, started=datetime.now(UTC), contracts=contracts, log=log)
    )
    return state, finished


def test_each_snapshot_shows_every_finished_case_redacted_and_redacts_each_case_once() -> None:
    redactor = CountingRedactor()
    state, finished = _state(redactor)
    finished += [_case("a", 1), _case("b", 1)]
    first = partial_result(state, status="running")
    finished += [_case("a", 2)]
    second = partial_result(state, status="running")
    third = partial_result(state, status="running")
    assert [[c.id for c in s.cases] for s in first.suites] == [["a.c1"], ["b.c1"]]
    assert [[c.id for c in s.cases] for s in second.suites] == [["a.c1", "a.c2"], ["b.c1"]]
    assert msgspec.structs.replace(third, duration=second.duration) == second  # nothing new: the same
    names = [c.name for s in third.suites for c in s.cases]
    assert names and all(SECRET not in n and "[redacted]" in n for n in names)
    assert sorted(redactor.cases) == ["a.c1", "a.c2", "b.c1"]  # once each, over three snapshots


def test_a_complete_run_lists_only_its_finished_suites_and_redacts_no_case_for_it() -> None:
    redactor = CountingRedactor()
    state, finished = _state(redactor)
    finished += [_case("a", 1)]
    done = partial_result(state)
    assert done.suites == [] and redactor.cases == []

