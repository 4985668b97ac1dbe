"""What each case of a run touched: the services and mocks its outcome may depend on.

Kept with each case in the store, so the next run knows which cases an edit can affect:

- a YAML case touches the service each request reached (the URL as sent, matched to a service's
  or a mock's published port), the container each `exec`, `file`, `process` or `port` step ran in,
  and the mocks its `expect.mock` checks read; a suite's setup and teardown steps count for every
  case of the suite (they make the state its cases see);
- every case touches the mocks that received a request during it: the request's `traceparent`
  names the case, else its arrival falls in the case's time window (cases of suites running at
  the same time then share it: more, never fewer);
- a pytest or shell case touches the suite's `touches:`, else everything it was given the URL of
  (every service and mock: `all`), plus the mocks it reached;
- a browser step touches the pages it opened (`page:<url>`) and, since a page may fetch from any
  service it knows the address of, everything (`all`).

What cannot be known counts as everything (`unknown`), never as nothing: a request to an address
outside the environment (a server of its own, the internet), a step of a kind this module does
not know, a check of mock traffic over the whole suite or run, a journal that dropped entries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from urllib.parse import urlsplit

import msgspec

from preflight_sdk.config import SuiteConfig, TestStep
from preflight_sdk.core.results.mocks import JournalEntry

from .environment import RunEnvironment

__all__ = ["ALL", "UNKNOWN", "Touches", "mock_touch", "service_touch", "step_touches"]

ALL = "all"  # every service and mock of the environment
UNKNOWN = "unknown"  # something outside it: the case always runs
_LOCAL = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
# A TestStep's fields that are no action of their own (a step with another field set is an action
# this module does not know: it touches `unknown`).
_NOT_ACTIONS = {"name", "description", "expect", "save", "delay", "retry", "ignore_error", "skip"}
_ACTIONS = {"request", "exec", "file", "process", "port", "wait_healthy", "wait_for_port", "browser"}
_SPAN = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-([0-9a-f]{16})-[0-9a-f]{2}$")


def service_touch(name: str) -> str:
    """The touch of a service."""
    return f"service:{name}"


def mock_touch(name: str) -> str:
    """The touch of a mock."""
    return f"mock:{name}"


def step_touches(
    step: TestStep,
    env: RunEnvironment,
    default_service: str | None,
    sent: str | None,
    pages: Sequence[str] = (),
) -> set[str]:
    """What one (rendered) step touches; `sent` is the URL its request went to, when it sent one,
    `pages` the pages a browser step opened (kept as `page:<url>`)."""
    found: set[str] = {f"page:{url}" for url in pages}
    for name, default in _other_fields():
        value = getattr(step, name)
        if value is not None and value is not False and value != default:
            return {UNKNOWN}  # an action of a kind not known here
    if step.request is not None:
        if sent is not None:
            found.add(_address(env, sent))
        elif step.request.url is not None:
            found.add(_address(env, step.request.url))
        else:
            found.add(_named(env, step.request.service or default_service))
    for action in (step.exec, step.file, step.process):
        if action is not None:
            found.add(_named(env, action.container or default_service))
    if step.port is not None:
        port = step.port
        found.add(
            _named(env, port.container) if port.container else _address(env, f"tcp://{port.host}:{port.port}")
        )
    if step.wait_healthy not in (None, False):
        named = getattr(step.wait_healthy, "service", None)
        found.add(_named(env, named) if named else ALL)
    if step.wait_for_port is not None:
        found.add(_address(env, f"tcp://{step.wait_for_port.host}:{step.wait_for_port.port}"))
    if step.browser is not None:
        # A page may call any service it knows the address of: what it fetched is not followed.
        found.add(ALL)
    if step.expect is not None and step.expect.mock is not None:
        checks = step.expect.mock if isinstance(step.expect.mock, list) else [step.expect.mock]
        for check in checks:
            # Traffic over the suite or the run depends on every case that made it.
            found.add(mock_touch(check.name) if check.since == "case" else ALL)
    return found


@cache
def _other_fields() -> tuple[tuple[str, object], ...]:
    """The fields of a step that are neither known actions nor plain settings, with their defaults
    (read once: msgspec describes a Struct's fields anew at each call)."""
    return tuple(
        (field.name, field.default)
        for field in msgspec.structs.fields(TestStep)
        if field.name not in _NOT_ACTIONS and field.name not in _ACTIONS
    )


def _named(env: RunEnvironment, name: str | None) -> str:
    """The service (or mock) `name` names (a service, a container name), else `unknown`."""
    if name is None:
        first = next(iter(env.services), None)
        return service_touch(first) if first is not None else UNKNOWN
    if name in env.services:
        return service_touch(name)
    for endpoint in env.services.values():
        if endpoint.container_name == name:
            return service_touch(endpoint.name)
        configured = env.loaded.service(endpoint.name)
        if configured is not None and configured.container.name == name:
            return service_touch(endpoint.name)
    if name in env.mocks:
        return mock_touch(name)
    return UNKNOWN


def _address(env: RunEnvironment, url: str) -> str:
    """The service or mock published at `url`'s host and port, else `unknown`."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return UNKNOWN
    host = parts.hostname or ""
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    local = host in _LOCAL or any(host == e.host for e in env.services.values())
    if not local:
        return UNKNOWN
    for endpoint in env.services.values():
        if port == endpoint.port or port in endpoint.ports.values():
            return service_touch(endpoint.name)
    for name, mock in env.mocks.items():
        if port == mock.port:
            return mock_touch(name)
    return UNKNOWN


class Touches:
    """What the cases of one run touched, as they run (see the module docstring)."""

    def __init__(self) -> None:
        self.cases: dict[str, set[str]] = {}
        self.suites: dict[str, set[str]] = {}
        self.case_suite: dict[str, str] = {}
        self.spans: dict[str, str] = {}  # span id -> case id
        self._windows: list[tuple[float, float, str]] = []  # (start ms, end ms, case)
        self._suite_windows: dict[str, list[float]] = {}

    def note_case(self, case: str, suite: str, touched: Iterable[str]) -> None:
        """Add what a step of case `case` touched."""
        self.case_suite[case] = suite
        self.cases.setdefault(case, set()).update(touched)

    def note_suite(self, suite: str, touched: Iterable[str]) -> None:
        """Add what a setup or teardown step of `suite` touched (it counts for each of its cases)."""
        self.suites.setdefault(suite, set()).update(touched)

    def declare(self, suite: SuiteConfig, cases: Sequence[str], env: RunEnvironment) -> None:
        """A pytest or shell suite's cases: its `touches:` (services and mocks), else everything."""
        named = suite.touches
        declared = {ALL} if named is None else {_named(env, name) for name in named}
        for case in cases:
            self.note_case(case, suite.id, declared)

    def window(self, case: str, suite: str, start_ms: float, end_ms: float, span: str | None = None) -> None:
        """The time case `case` ran (and the span its requests carry)."""
        self.case_suite[case] = suite
        self.cases.setdefault(case, set())
        self._windows.append((start_ms, end_ms, case))
        if span is not None:
            self.spans[span] = case

    def suite_started(self, suite: str, at_ms: float) -> None:
        """A suite began (its setup runs from now)."""
        self._suite_windows[suite] = [at_ms, float("inf")]

    def suite_ended(self, suite: str, at_ms: float) -> None:
        """A suite ended (its teardown is done)."""
        window = self._suite_windows.get(suite)
        if window is not None:
            window[1] = at_ms

    def mock_traffic(self, name: str, entries: Sequence[JournalEntry], *, complete: bool) -> None:
        """Give each request mock `name` received during the run to the case it belongs to.

        `complete`: the entries are every request since the run began (the journal dropped none);
        otherwise every case that ran before the first entry counts as having touched the mock.
        """
        touch = mock_touch(name)
        for entry in entries:
            owner = self._owner_by_span(entry)
            if owner is not None:
                self.cases[owner].add(touch)
                continue
            at = float(entry.epoch_ms)
            hit = False
            for start, end, case in self._windows:
                if start <= at <= end:
                    self.cases[case].add(touch)
                    hit = True
            if not hit:  # between cases: a suite's setup or teardown made it
                for suite, (start, end) in self._suite_windows.items():
                    if start <= at <= end:
                        self.note_suite(suite, [touch])
        if not complete:
            first = float(entries[0].epoch_ms) if entries else float("inf")
            for start, _, case in self._windows:
                if start <= first:
                    self.cases[case].add(touch)

    def mock_unknown(self, name: str) -> None:
        """Mock `name`'s traffic could not be read: every case counts as having touched it."""
        touch = mock_touch(name)
        for touched in self.cases.values():
            touched.add(touch)

    def of(self, case: str) -> list[str]:
        """What case `case` touched, sorted (its own steps, its suite's, the mocks it reached);
        `unknown` for a case nothing was seen of."""
        own = self.cases.get(case)
        if own is None:
            return [UNKNOWN]
        suite = self.suites.get(self.case_suite.get(case, ""), set())
        return sorted(own | suite)

    def _owner_by_span(self, entry: JournalEntry) -> str | None:
        header = next((v for k, v in entry.headers.items() if k.lower() == "traceparent"), None)
        match = _SPAN.match(header.strip().lower()) if header else None
        return self.spans.get(match.group(1)) if match else None
