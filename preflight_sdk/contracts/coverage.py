"""What a run's traffic exercised of each contract: operations, and the statuses of each.

Every checked exchange is counted under its contract and operation (an exchange that matched no
operation counts only as a violation). The report lists every operation of the document,
uncovered ones too, so "which operations did no case reach" is read off it directly.
"""

from __future__ import annotations

from typing import Literal

from preflight_sdk.core.results.contracts import ContractCoverage, OperationCoverage

from .document import Contract

__all__ = ["Coverage"]


class Coverage:
    """Counts per contract and operation: calls, statuses seen, and failed checks."""

    def __init__(self) -> None:
        self._calls: dict[tuple[str, str], int] = {}
        self._statuses: dict[tuple[str, str], list[int]] = {}
        self._failed: dict[str, int] = {}
        self._seen: set[int] = set()

    def record(
        self, owner: str, operation: str | None, status: int, *, failed: bool, key: int | None = None
    ) -> None:
        """Count one exchange; `key` makes a second count of the same exchange (a mock request) a no-op."""
        if key is not None:
            if key in self._seen:
                return
            self._seen.add(key)
        if failed:
            self._failed[owner] = self._failed.get(owner, 0) + 1
        if operation is None:
            return
        slot = (owner, operation)
        self._calls[slot] = self._calls.get(slot, 0) + 1
        statuses = self._statuses.setdefault(slot, [])
        if status and status not in statuses:
            statuses.append(status)

    def of(
        self,
        owner: str,
        kind: Literal["service", "mock"],
        contract: Contract,
        root: str,
        mode: Literal["fail", "warn", "off"],
    ) -> ContractCoverage:
        """The coverage of `owner`'s contract."""
        items: list[OperationCoverage] = []
        pairs = covered_pairs = 0
        for key, operation in contract.operations.items():
            seen = self._statuses.get((owner, key), [])
            documented = list(operation.responses)
            pairs += len(documented)
            answered = {r.status for r in map(operation.response_for, seen) if r is not None}
            covered_pairs += len(answered)
            items.append(
                OperationCoverage(
                    operation=key,
                    operation_id=operation.operation_id,
                    documented=documented,
                    exercised=list(seen),
                    calls=self._calls.get((owner, key), 0),
                )
            )
        file = contract.path
        prefix = root.rstrip("/") + "/"
        return ContractCoverage(
            contract=owner,
            kind=kind,
            file=file[len(prefix) :] if file.startswith(prefix) else file,
            operations=len(items),
            covered=sum(1 for item in items if item.calls),
            statuses=pairs,
            statuses_covered=covered_pairs,
            violations=self._failed.get(owner, 0),
            items=items,
            mode="warn" if mode == "warn" else "fail",
        )
