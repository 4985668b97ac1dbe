"""How the contracts' coverage moved between two runs, for `diff_runs`."""

from __future__ import annotations

from preflight_sdk.core.results.contracts import ContractCoverage, CoverageChange

__all__ = ["coverage_changes"]


def coverage_changes(
    base: list[ContractCoverage] | None, head: list[ContractCoverage] | None
) -> list[CoverageChange]:
    """One change per contract either run has (the later run's order first)."""
    before = {item.contract: item for item in base or []}
    after = {item.contract: item for item in head or []}
    changes: list[CoverageChange] = []
    for name in [*after, *(n for n in before if n not in after)]:
        old, new = before.get(name), after.get(name)
        either = new or old
        assert either is not None  # the name came from one of them
        old_ops = {op.operation for op in old.items if op.calls} if old else set()
        new_ops = {op.operation for op in new.items if op.calls} if new else set()
        changes.append(
            CoverageChange(
                contract=name,
                operations=either.operations,
                base_covered=old.covered if old else 0,
                head_covered=new.covered if new else 0,
                base_statuses=old.statuses_covered if old else 0,
                head_statuses=new.statuses_covered if new else 0,
                base_violations=old.violations if old else 0,
                head_violations=new.violations if new else 0,
                newly_covered=sorted(new_ops - old_ops),
                no_longer_covered=sorted(old_ops - new_ops),
            )
        )
    return changes
