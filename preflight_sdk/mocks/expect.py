"""`expect.mock` in YAML tests: what a mock must have received (count, body, headers).

Requests are selected by method and path pattern (`:param`, `*`); the count is checked with
`op N` (`2`, `">= 1"`, `"< 3"`), and body and headers are checked on the *last* selected request
with the assertion engine, so a failure shows expected and actual values side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from preflight_sdk.config.testfile import MockExpect
from preflight_sdk.core.assertions import MISSING, AssertionResult, check, compare_count, result_at
from preflight_sdk.core.results.mocks import JournalEntry

from .matching import ANY_METHODS, PathPattern, as_number, text_condition
from .request import split_path

__all__ = ["evaluate_mock_expect", "select_requests"]

_SHOWN = 5


def select_requests(
    entries: Sequence[JournalEntry], method: str | None, path: str | None
) -> list[JournalEntry]:
    """Return the entries with `method` (any when None or ANY) on a path that fits `path`."""
    wanted = method.strip().upper() if method else None
    if wanted in ANY_METHODS:
        wanted = None
    pattern = PathPattern(path) if path else None
    return [
        entry
        for entry in entries
        if (wanted is None or entry.method.upper() == wanted)
        and (pattern is None or pattern.match(split_path(entry.path)) is not None)
    ]


def evaluate_mock_expect(expect: MockExpect, entries: Sequence[JournalEntry]) -> list[AssertionResult]:
    """Check `expect` against the journal `entries` (already limited to the case, suite or run).

    Returns one `AssertionResult` per check, passing or not, with paths such as
    `mock.payments.count`, `mock.payments.body.amount`, `mock.payments.headers.x-api-key`.
    Without `count`, at least one matching request is expected.
    """
    base = f"mock.{expect.name}"
    selected = select_requests(entries, expect.method, expect.path)
    what = f"{(expect.method or 'ANY').upper()} {expect.path or '*'}"
    results = [
        _count(base, expect.count if expect.count is not None else ">= 1", len(selected), what, entries)
    ]
    if expect.body is None and not expect.headers:
        return results
    if not selected:
        message = f"no {what} request was received, so there is no body or headers to check"
        if expect.body is not None:
            results.append(result_at(f"{base}.body", "equals", expect.body, None, False, message))
        for name, expected in expect.headers.items():
            results.append(
                result_at(f"{base}.headers.{name.lower()}", "equals", expected, None, False, message)
            )
        return results
    last = selected[-1]
    if expect.body is not None:
        results.extend(check(_body(last), expect.body, f"{base}.body"))
    for name, expected in expect.headers.items():
        key = name.lower()
        prepared, numeric = text_condition(expected)
        actual: Any = last.headers.get(key, MISSING)
        results.extend(check(as_number(actual) if numeric else actual, prepared, f"{base}.headers.{key}"))
    return results


def _body(entry: JournalEntry) -> Any:
    if entry.form is not None:
        return entry.form
    if entry.body_encoding is None:
        return MISSING
    return entry.body


def _count(
    base: str, spec: str | int, count: int, what: str, entries: Sequence[JournalEntry]
) -> AssertionResult:
    path = f"{base}.count"
    try:
        ok = compare_count(spec, count)
    except ValueError as exc:
        return result_at(path, "count", spec, count, False, f"{exc} (in `count`)")
    want = f"{spec}" if isinstance(spec, int) else spec.strip()
    if ok:
        message = f"{count} {what} request(s), as expected ({want})"
    else:
        received = ", ".join(
            f"{e.method} {e.path} → {e.status if e.status is not None else '-'}" for e in entries[-_SHOWN:]
        )
        more = f" (last {_SHOWN} of {len(entries)})" if len(entries) > _SHOWN else ""
        seen = f"; received{more}: {received}" if entries else "; the mock received no request"
        message = f"expected {want} {what} request(s), got {count}{seen}"
    return result_at(path, "count", spec, count, ok, message)
