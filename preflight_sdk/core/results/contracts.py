"""What a run learned from the OpenAPI contracts of its services and mocks: coverage and evidence.

A contract is an OpenAPI document that e2e.yaml names for a service or a mock (`contract:`).
Each answer a YAML case receives from a service with one is checked against it (a failed check is
an assertion of kind `contract` in the case's failure); each request a service sends to a mock with
one is checked too, and a request the mock's contract refuses is evidence of the run
(`ContractCoverage.requests`), whichever case caused it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .base import Part, Result

__all__ = [
    "ContractCheck",
    "ContractCoverage",
    "ContractViolation",
    "CoverageChange",
    "GeneratedCase",
    "GeneratedCases",
    "MockRequestViolation",
    "OperationCoverage",
]


class ContractViolation(Part, frozen=True, kw_only=True):
    """One way an answer (or a request) breaks its contract.

    Attributes:
        contract: whose contract: the service or mock name.
        operation: the operation it was checked against (`GET /orders/{id}`), when one matched.
        path: where in the exchange: `body.items[0].sku`, `status`, `headers.x-request-id`,
            `request.body.amount`, `request.query.page`, or `path` for an undocumented path.
        rule: the rule broken: a JSON Schema keyword (`type`, `required`, `enum`…), or `path`,
            `method`, `status`, `contentType`, `header`, `parameter`, `body`.
        message: one sentence an agent can act on.
        expected: what the document allows there (a schema excerpt, or the documented values).
        actual: what was found there (capped).
        file: the document that says so, relative to the project when inside it.
        line: the line of that rule in `file` (1-based).
        pointer: the JSON pointer of the rule in `file` (`#/components/schemas/Order/properties/id`).
    """

    contract: str
    path: str
    rule: str
    message: str
    operation: str | None = None
    expected: Any = None
    actual: Any = None
    file: str | None = None
    line: int | None = None
    pointer: str | None = None

    @property
    def place(self) -> str:
        """`file:line` (or the file alone, or nothing) where the contract says what was broken."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else self.file


class OperationCoverage(Part, frozen=True, kw_only=True):
    """One operation of a contract and what the run's traffic exercised of it.

    Attributes:
        operation: `METHOD /path/template`.
        operation_id: its `operationId`, when the document gives one.
        documented: the response statuses the document lists (`200`, `4XX`, `default`).
        exercised: the statuses actually answered, each once, in the order first seen.
        calls: how many checked exchanges matched the operation.
    """

    operation: str
    documented: list[str]
    exercised: list[int]
    calls: int
    operation_id: str | None = None


class MockRequestViolation(Part, frozen=True, kw_only=True):
    """A request a service sent to a mock that the mock's contract refuses.

    `case` is the case that was running when the request arrived (absent when none was).
    """

    mock: str
    method: str
    path: str
    timestamp: str
    violations: list[ContractViolation]
    case: str | None = None


class ContractCoverage(Part, frozen=True, kw_only=True):
    """One contract's coverage in a run, and the violations its checks found.

    Attributes:
        contract: the service or mock whose contract this is.
        kind: `service` (its answers are checked) or `mock` (the requests sent to it are).
        file: the document, relative to the project.
        operations: how many operations the document has.
        covered: how many of them the run exercised.
        statuses: how many documented (operation, status) pairs there are.
        statuses_covered: how many of those the run saw answered.
        violations: how many checks failed (answers, or requests to a mock).
        items: every operation with its calls and statuses, uncovered ones included.
        requests: for a mock, the requests its contract refused (at most 50).
        mode: `fail` (a violation fails its case) or `warn` (it is a warning), as configured.
    """

    contract: str
    kind: Literal["service", "mock"]
    file: str
    operations: int
    covered: int
    statuses: int
    statuses_covered: int
    violations: int = 0
    items: list[OperationCoverage] = msgspec.field(default_factory=list)
    requests: list[MockRequestViolation] = msgspec.field(default_factory=list)
    mode: Literal["fail", "warn"] = "fail"


class ContractCheck(Result, frozen=True, kw_only=True):
    """A response checked against a service's contract (`check_response`).

    Attributes:
        service: whose contract.
        file: the document, relative to the project.
        operation: the operation it matched (`GET /orders/{id}`), when one did.
        status: the documented response it was checked against (`200`, `4XX`, `default`).
        violations: every way it breaks the contract (empty: it conforms).
        summary: one line.
    """

    service: str
    file: str
    summary: str
    violations: list[ContractViolation] = msgspec.field(default_factory=list)
    operation: str | None = None
    status: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the response conforms (the CLI exits 1 when it does not)."""
        return not self.violations


class GeneratedCase(Part, frozen=True, kw_only=True):
    """One case written by `generate_cases`: its name, operation, request line and expected statuses."""

    name: str
    operation: str
    request: str
    statuses: list[int]


class GeneratedCases(Result, frozen=True, kw_only=True):
    """A YAML test file written from a service's contract (`generate_cases`).

    Attributes:
        service: whose contract.
        file: the test file written, relative to the project (never one that existed).
        cases: one per operation, in document order.
        suite: the entry to add under `tests.suites` in e2e.yaml to run it.
        summary: one line.
    """

    service: str
    file: str
    summary: str
    suite: str
    cases: list[GeneratedCase] = msgspec.field(default_factory=list)


class CoverageChange(Part, frozen=True, kw_only=True):
    """How one contract's coverage moved from one run to another (`diff_runs`).

    Attributes:
        contract: the service or mock whose contract it is.
        base_covered / head_covered: operations exercised in each run, of `operations`.
        base_statuses / head_statuses: documented statuses seen in each run.
        newly_covered: operations the later run exercised and the earlier did not.
        no_longer_covered: operations the earlier run exercised and the later did not.
        base_violations / head_violations: failed checks in each run.
    """

    contract: str
    operations: int
    base_covered: int
    head_covered: int
    base_statuses: int
    head_statuses: int
    base_violations: int = 0
    head_violations: int = 0
    newly_covered: list[str] = msgspec.field(default_factory=list)
    no_longer_covered: list[str] = msgspec.field(default_factory=list)
