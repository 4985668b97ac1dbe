"""The rule: which cases an edit can affect, and which verdicts may be carried. Pure.

A case is affected (it runs) when:

- it never ran, or its last run recorded no inputs (a run older than this rule);
- it did not pass last time (failed or skipped), or it passed only on a retry (flaky);
- its last run is older than the bound (`affected_within`, a day by default);
- e2e.yaml changed since its last run, or the engine did;
- its suite's own files changed;
- what it touched is not known, or is outside the environment (`unknown`);
- something it touched changed, or depends on something that changed: a service whose
  container inputs differ (a rebuilt image, another environment), a mock whose routes differ,
  closed over dependents (`graph`);
- in a sequential suite, an earlier case of the suite is affected.

Every other case passed last time on the same inputs as far as it reaches: with `only`, its
verdict is carried (a failure never is: it is affected).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import msgspec

from preflight_sdk.core.results.affected import CarriedVerdict
from preflight_sdk.store import LatestCaseRow
from preflight_sdk.suites.touches import ALL, UNKNOWN, mock_touch, service_touch

from .graph import Graph
from .inputs import RunInputs, decode_inputs

__all__ = [
    "NEVER_RAN",
    "Candidate",
    "CaseDecision",
    "decide",
]

NEVER_RAN = "never ran"
NOT_PASSED = "did not pass last time"
FLAKY = "passed only on a retry last time"
NO_INPUTS = "its last run recorded no inputs"
UNKNOWN_TOUCHES = "what it touched is not known"
OUTSIDE = "it reached something outside the environment"
EARLIER = "an earlier case of its sequential suite runs"


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A case the run would run, as known before it runs (in its suite's order)."""

    id: str
    suite: str
    name: str


class CaseDecision(msgspec.Struct, frozen=True, kw_only=True):
    """Whether `case` is affected and why; the verdict it may carry when it is not.

    `change` is the change that made it affected (`service:orders`, `mock:payments`,
    `suite:orders`, `config`, `engine`), `reason` any other reason (see the module constants);
    `source` the run of its previous record.
    """

    case: Candidate
    affected: bool
    change: str | None = None
    reason: str | None = None
    carried: CarriedVerdict | None = None
    source: str | None = None

    @property
    def id(self) -> str:
        """The case's id."""
        return self.case.id

    @property
    def suite(self) -> str:
        """The case's suite."""
        return self.case.suite


def decide(
    candidates: Sequence[Candidate],
    previous: Mapping[str, LatestCaseRow],
    now: RunInputs,
    graph: Graph,
    *,
    started: datetime,
    within_ms: int,
    sequential: frozenset[str] = frozenset(),
) -> list[CaseDecision]:
    """Decide every candidate (see the module docstring), in the candidates' order."""
    changed_since: dict[str | None, dict[str, str] | None] = {}
    decisions: list[CaseDecision] = []
    earlier: set[str] = set()  # sequential suites with an affected case so far
    for case in candidates:
        row = previous.get(case.id)
        decision = _one(case, row, now, graph, started, within_ms, changed_since)
        if not decision.affected and case.suite in earlier:
            decision = msgspec.structs.replace(decision, affected=True, reason=EARLIER, carried=None)
        if decision.affected and case.suite in sequential:
            earlier.add(case.suite)
        decisions.append(decision)
    return decisions


def _one(
    case: Candidate,
    row: LatestCaseRow | None,
    now: RunInputs,
    graph: Graph,
    started: datetime,
    within_ms: int,
    changed_since: dict[str | None, dict[str, str] | None],
) -> CaseDecision:
    runs = CaseDecision(case=case, affected=True, source=row.run_id if row else None)

    def affected(*, change: str | None = None, reason: str | None = None) -> CaseDecision:
        return msgspec.structs.replace(runs, change=change, reason=reason)

    if row is None:
        return affected(reason=NEVER_RAN)
    before = decode_inputs(row.inputs)
    if before is None:
        return affected(reason=NO_INPUTS)
    if before.engine != now.engine:
        return affected(change="engine")
    if before.config != now.config:
        return affected(change="config")
    if before.suites.get(case.suite) != now.suites.get(case.suite):
        return affected(change=f"suite:{case.suite}")
    if row.status != "passed":
        return affected(reason=NOT_PASSED)
    if row.passed_on_retry:
        return affected(reason=FLAKY)
    age = int((started - _moment(row.started_at)).total_seconds() * 1000)
    if age > within_ms:
        return affected(reason=f"last ran over {_span(within_ms)} ago")
    touches = row.touches
    if touches is None:
        return affected(reason=UNKNOWN_TOUCHES)
    if UNKNOWN in touches:
        return affected(reason=OUTSIDE)
    if row.inputs not in changed_since:
        changed_since[row.inputs] = graph.dependents(_changed(before, now))
    reach = changed_since[row.inputs] or {}
    nodes = _nodes(touches, before, now)
    hit = next((reach[node] for node in sorted(nodes) if node in reach), None)
    if hit is not None:
        return affected(change=hit)
    carried = CarriedVerdict(run_id=row.run_id, status="passed", started_at=row.started_at, age=max(0, age))
    return msgspec.structs.replace(runs, affected=False, carried=carried)


def _changed(before: RunInputs, now: RunInputs) -> list[str]:
    """The services and mocks whose digests differ between two runs' inputs."""
    out = [
        service_touch(name)
        for name in before.services.keys() | now.services.keys()
        if before.services.get(name) != now.services.get(name)
    ]
    out += [
        mock_touch(name)
        for name in before.mocks.keys() | now.mocks.keys()
        if before.mocks.get(name) != now.mocks.get(name)
    ]
    return sorted(out)


def _nodes(touches: Sequence[str], before: RunInputs, now: RunInputs) -> set[str]:
    """The services and mocks a case's touches name (`all`: every one, then and now)."""
    nodes = {t for t in touches if t.startswith(("service:", "mock:"))}
    if ALL in touches:
        nodes |= {service_touch(n) for n in before.services.keys() | now.services.keys()}
        nodes |= {mock_touch(n) for n in before.mocks.keys() | now.mocks.keys()}
    return nodes


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _span(ms: int) -> str:
    """`1d`, `6h`, `30m`, `45s`: the bound as a person writes it."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"
