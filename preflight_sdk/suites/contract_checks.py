"""A run's contract checks: every answer of a service with a contract, every request to a mock with one.

One `RunContracts` per run. A YAML step's answer is checked when its service has a contract (a
file loaded with e2e.yaml, or one the service serves, fetched once after setup: `fetch_served`);
each violation is an assertion of kind `contract`, or a suite warning where the suite or the
project says `warn`.
When the suites end, every request the mocks with a contract received during the run is checked
against the mock's contract: each refused one is evidence of the run, with the case that was
running when it arrived. Both feed the run's coverage: which operations and statuses were seen.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.config.contract_files import BASE_URL
from preflight_sdk.config.model import ServedContract
from preflight_sdk.config.testfile import MockExpect
from preflight_sdk.contracts import Contract, check_request, check_response
from preflight_sdk.contracts.coverage import Coverage
from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.contracts import ContractCoverage, ContractViolation, MockRequestViolation
from preflight_sdk.core.results.mocks import JournalEntry
from preflight_sdk.mocks import select_requests

from .outcome import StepOutcome
from .served_contracts import fetch_served

__all__ = ["Mode", "RunContracts", "violation_assertion"]

Mode = Literal["fail", "warn", "off"]
_JOURNAL_LIMIT = 2000


class RunContracts:
    """The contracts of one run, the coverage they gather, and the warnings of `warn` suites."""

    def __init__(self, loaded: LoadedConfig, service_urls: dict[str, str | None]) -> None:
        self.loaded = loaded
        self.root = loaded.root
        self.services: dict[str, Contract] = dict(loaded.contracts.services)
        self.mocks: dict[str, Contract] = dict(loaded.contracts.mocks)
        self.urls = dict(service_urls)
        if BASE_URL in self.services:  # test-only mode: the API at BASE_URL has a contract
            self.urls[BASE_URL] = loaded.environ.get("BASE_URL")
        self.served = {
            s.name: s.contract.served for s in loaded.services if isinstance(s.contract, ServedContract)
        }
        self.coverage = Coverage()
        self.warnings: dict[str, list[str]] = {}
        self.run_warnings: list[str] = []  # a served contract a `warn` run could not fetch
        self.mock_violations: dict[str, list[MockRequestViolation]] = {}
        tests = loaded.config.tests
        self.default_mode: Mode = tests.contract if tests is not None else "fail"

    @property
    def active(self) -> bool:
        """Whether any service or mock of the run has a contract."""
        return bool(self.services or self.mocks or self.served)

    def mode(self, suite_mode: Mode | None) -> Mode:
        """The mode of a suite: its own, else the project's (`tests.contract`)."""
        return suite_mode or self.default_mode

    async def check_answer(
        self, outcome: StepOutcome, *, service: str | None, path: str | None, suite: str, mode: Mode
    ) -> list[AssertionResult]:
        """The contract assertions of one answer (none when the service has no contract or mode is off)."""
        if mode == "off" or outcome.status is None or outcome.request is None:
            return []
        name = service if service is not None else self._service_of(outcome.request.url)
        if name is None:
            return []
        contract = self.services.get(name)
        if contract is None:
            return []
        checked = check_response(
            contract,
            name,
            method=outcome.request.method,
            path=path or urlsplit(outcome.request.url).path or "/",
            status=outcome.status,
            headers=outcome.headers,
            body=outcome.body,
            root=self.root,
        )
        self.coverage.record(name, checked.operation, outcome.status, failed=bool(checked.violations))
        if mode == "warn":
            for violation in checked.violations:
                self.warnings.setdefault(suite, []).append(_warning(violation))
            return []
        if not checked.violations:
            shown = checked.operation or name
            return [
                AssertionResult(
                    path="contract",
                    operator="contract",
                    expected=name,
                    actual=checked.status,
                    passed=True,
                    message=f"the answer conforms to {shown} ({name}'s contract)",
                    operation=checked.operation,
                )
            ]
        return [violation_assertion(v) for v in checked.violations]

    def check_mock_expect(self, expect: MockExpect, entries: list[JournalEntry]) -> list[AssertionResult]:
        """`expect.mock.contract: true`: every selected request conforms to the mock's contract."""
        base = f"mock.{expect.name}.contract"
        contract = self.mocks.get(expect.name)
        if contract is None:
            message = f"{base}: mock `{expect.name}` has no `contract:` in e2e.yaml"
            return [
                AssertionResult(
                    path=base, operator="contract", expected=True, actual=None, passed=False, message=message
                )
            ]
        selected = select_requests(entries, expect.method, expect.path)
        results: list[AssertionResult] = []
        for entry in selected[-20:]:
            for violation in self._check_entry(expect.name, contract, entry):
                results.append(
                    violation_assertion(
                        violation, prefix=f"mock.{expect.name}", lead=f"{entry.method} {entry.path}: "
                    )
                )
        if not results:
            what = f"{len(selected)} {(expect.method or 'ANY').upper()} {expect.path or '*'} request(s)"
            results.append(
                AssertionResult(
                    path=base,
                    operator="contract",
                    expected=True,
                    actual=True,
                    passed=True,
                    message=f"{what} to {expect.name} conform to its contract",
                )
            )
        return results[:20]

    async def check_mock_traffic(self, entries_of: Any, since: datetime, cases: list[Any]) -> None:
        """Check every request the mocks with a contract received since `since` (once, at the run's end)."""
        for name, contract in self.mocks.items():
            entries: list[JournalEntry] = await entries_of(name, since)
            for entry in entries[-_JOURNAL_LIMIT:]:
                violations = self._check_entry(name, contract, entry)
                if violations:
                    found = self.mock_violations.setdefault(name, [])
                    if len(found) < 50:
                        found.append(
                            MockRequestViolation(
                                mock=name,
                                method=entry.method,
                                path=entry.path,
                                timestamp=entry.timestamp,
                                violations=violations,
                                case=_case_at(cases, entry.epoch_ms),
                            )
                        )

    def report(self) -> list[ContractCoverage]:
        """Coverage and violations per contract, services first, in e2e.yaml's order."""
        found: list[ContractCoverage] = []
        for name in [*self.services, *(n for n in self.served if n not in self.services)]:
            contract = self.services.get(name)
            if contract is not None:
                found.append(self.coverage.of(name, "service", contract, self.root, self.default_mode))
        for name, contract in self.mocks.items():
            item = self.coverage.of(name, "mock", contract, self.root, self.default_mode)
            refused = self.mock_violations.get(name, [])
            found.append(msgspec.structs.replace(item, requests=refused, violations=len(refused)))
        return found

    def _check_entry(self, name: str, contract: Contract, entry: JournalEntry) -> list[ContractViolation]:
        checked = check_request(
            contract,
            name,
            method=entry.method,
            path=entry.path,
            query=entry.query,
            headers=entry.headers,
            body=None if entry.body_truncated else entry.body,
            root=self.root,
        )
        self.coverage.record(
            name, checked.operation, entry.status or 0, failed=bool(checked.violations), key=id(entry)
        )
        return checked.violations

    def _service_of(self, url: str) -> str | None:
        for name, base in self.urls.items():
            if base and url.startswith(base.rstrip("/")) and (name in self.services or name in self.served):
                return name
        return None

    async def fetch_served(self, suites: list[SuiteConfig]) -> None:
        """Fetch, once, after setup, each contract a service serves that the run's suites use.

        A YAML suite uses it unless its mode is `off`; a fuzz suite of the service always does.
        One that cannot be fetched or does not load is `CONTRACT_UNAVAILABLE` (naming the URL and
        why) when a suite that uses it fails on violations; where every one of them is `warn`, the
        run goes on without it and says so in its warnings.

        Raises:
            InfrastructureError: `CONTRACT_UNAVAILABLE`.
        """
        for name, path in self.served.items():
            modes = [
                "fail" if suite.runner == "fuzz" else self.mode(suite.contract)
                for suite in suites
                if (suite.runner == "fuzz" and suite.service == name) or suite.runner == "yaml"
            ]
            if not {"fail", "warn"} & set(modes):
                continue
            try:
                self.services[name] = await fetch_served(name, self.urls.get(name), path)
            except PreflightError as exc:
                if "fail" in modes:
                    raise
                self.run_warnings.append(f"contract of {name} not checked: {exc.message}")


def violation_assertion(
    violation: ContractViolation, *, prefix: str | None = None, lead: str = ""
) -> AssertionResult:
    """A violation as the failed assertion of kind `contract` a case's failure shows."""
    path = violation.path if prefix is None else f"{prefix}.{violation.path}"
    where = f" ({violation.place})" if violation.place else ""
    return AssertionResult(
        path=path,
        operator="contract",
        expected=violation.expected,
        actual=violation.actual,
        passed=False,
        message=f"{lead}{violation.message} [{violation.contract}'s contract, {violation.operation or 'no operation'}{where}]",
        rule=violation.rule,
        operation=violation.operation,
        document=violation.place or None,
    )


def _warning(violation: ContractViolation) -> str:
    where = f" ({violation.place})" if violation.place else ""
    return (
        f"contract of {violation.contract}: {violation.operation or ''} {violation.message}{where}".replace(
            "  ", " "
        )
    )


def _case_at(cases: list[Any], epoch_ms: int) -> str | None:
    """The case that was running at `epoch_ms` (cases end at `timestamp` after `duration`).

    Both are whole milliseconds, so neighbours' windows may touch: the later case wins.
    """
    for case in reversed(cases):
        if case.timestamp - case.duration - 2 <= epoch_ms <= case.timestamp + 2:
            return str(case.id)
    return None
