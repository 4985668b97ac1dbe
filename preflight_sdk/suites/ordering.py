"""The order a run takes its cases in, and what it carries instead of running.

The owner of a run (the run supervisor) decides which cases an edit can affect; this is how the
runners follow it, within each suite's own rules:

- suites with an affected case run first (file order otherwise), and so do their affected cases;
- a `sequential` suite keeps its cases' order; a suite's setup and teardown stay where they are;
- with `fail_fast`, the first failure stops the run: cases not started are skipped, saying so;
- a carried case does not run: its earlier verdict stands in the suite at its place; a suite
  whose every case is carried does not run at all (nor its setup and teardown).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from preflight_sdk.config import SuiteConfig
from preflight_sdk.core.results.run import CaseResult, SuiteResult

__all__ = ["CaseOrder", "carried_suite", "case_order", "suite_order"]


class CaseOrder(msgspec.Struct, frozen=True, kw_only=True):
    """How one run orders its cases (see the module docstring).

    Attributes:
        first: per suite, its affected cases (they run first).
        suites: the suites holding an affected case, or cases not known before they run (they
            run first).
        carried: per suite, the cases that do not run (by id), as carried results, in the suite's order.
        whole: the suites carried whole (none of their cases runs).
        fail_fast: stop the run at its first failure.
    """

    first: dict[str, frozenset[str]] = msgspec.field(default_factory=dict)
    suites: frozenset[str] = frozenset()
    carried: dict[str, dict[str, CaseResult]] = msgspec.field(default_factory=dict)
    whole: frozenset[str] = frozenset()
    fail_fast: bool = False

    def carried_case(self, suite: str, case: str) -> CaseResult | None:
        """The carried result of case `case` of `suite`, when it does not run."""
        return self.carried.get(suite, {}).get(case)


def suite_order(suites: Sequence[SuiteConfig], order: CaseOrder | None) -> list[SuiteConfig]:
    """`suites` with those holding an affected case first (each group in its given order)."""
    if order is None:
        return list(suites)
    return sorted(suites, key=lambda s: 0 if s.id in order.suites else 1)


def case_order(
    identifiers: Sequence[str], suite: str, sequential: bool, order: CaseOrder | None
) -> list[int]:
    """The indices of a suite's cases in the order they run: its affected cases first, unless it
    is sequential (its order is its meaning)."""
    indices = list(range(len(identifiers)))
    first = order.first.get(suite) if order is not None else None
    if sequential or not first:
        return indices
    return sorted(indices, key=lambda i: 0 if identifiers[i] in first else 1)


def carried_suite(
    suite: SuiteConfig, cases: Sequence[CaseResult], *, stopped: str | None = None
) -> SuiteResult:
    """The result of a suite none of whose cases ran: its carried cases (every case, unless the run
    `stopped` at its first failure before the suite started: then it is skipped, saying why)."""
    return SuiteResult(
        id=suite.id,
        name=suite.name or suite.id,
        runner=suite.runner,
        status="skipped" if stopped else "passed",
        duration=0,
        passed=0,
        failed=0,
        skipped=0,
        cases=list(cases),
        warnings=[stopped] if stopped else [],
        carried=len(cases),
    )
