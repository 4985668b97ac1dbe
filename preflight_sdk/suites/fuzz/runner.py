"""`runner: fuzz`: property-based cases against a service, from its contract, by Schemathesis.

Schemathesis (the optional extra `preflight-sdk[contracts]`) generates requests for each
operation of the service's contract, sends them to the running service and checks each answer
(no server error, a documented status, content type and headers, a body its schema allows).
Hypothesis shrinks a failing request to the smallest one that still fails. The suite has one case
per operation: passed, or failed with the minimal request, the response, the check that failed,
the service's log lines of that moment and the curl line that replays it.

The suite is bounded by `maxExamples` (per operation) and its `timeout` (the whole suite): when
the time is up, the operation in flight stops with what it found (its request in flight is given
up), the rest are skipped, and a suite warning says so. A cancelled run stops the fuzzing before
its next request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from urllib.parse import urlsplit

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.results.run import CaseResult, RequestInfo, ResponseInfo, SuiteResult

from ..cases import failure_from_text, window_diagnostics
from ..context import RunContext, case_id
from ..outcome import cap_body
from ..yaml.runner import timeout_text
from .explore import Budget, Found, explore

__all__ = ["EXTRA", "run_fuzz_suite"]

EXTRA = "preflight-sdk[contracts]"
# How long a cancelled run waits for the worker to end its request in flight before going on
# without it (it sends nothing more, and that request ends within its own timeout).
_STOP_GRACE = 2.0


async def run_fuzz_suite(
    run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str], *, timeout: float
) -> SuiteResult:
    """Fuzz suite `suite`'s service from its contract; one case per operation."""
    try:
        import schemathesis  # noqa: F401
    except ImportError:
        raise InputError(
            f"suite `{suite.id}` (runner fuzz) needs Schemathesis, which is not installed: "
            f"install the extra {EXTRA}",
            code="EXTRA_NOT_INSTALLED",
            hint=f"install the extra: pip install '{EXTRA}'",
            details={"extra": EXTRA},
        ) from None
    began = time.perf_counter()
    name = suite.service or ""
    contract = run.contracts.services.get(name)  # a file, or a served one fetched after setup
    base = run.env.base_url(name)
    if contract is None or base is None:
        why = "has no contract to fuzz from" if contract is None else "publishes no port"
        return run.finish_suite(suite, "fuzz", cases=[], seconds=0.0, error=f"service `{name}` {why}")
    budget = Budget(timeout)
    fuzz = partial(explore, contract.sources.root.data, base, suite.max_examples)
    found = await _explore_within(budget, fuzz)
    shown = timeout_text(suite)
    cases: list[CaseResult] = []
    for item in found:
        identifier = case_id(suite.id, item.operation, taken)
        run.event("case_start", suite=suite.id, case=identifier)
        result = await _case(run, suite, identifier, item, name, shown)
        cases.append(result)
        run.case_finished(result)
    stopped = [item for item in found if item.stopped]
    answered = sum(item.examples for item in found)
    return run.finish_suite(
        suite,
        "fuzz",
        cases=cases,
        seconds=time.perf_counter() - began,
        error=(
            f"the suite's time budget ({shown}) ran out before `{name}` answered any request: "
            "give the suite a longer `timeout`"
        )
        if stopped and not answered and not any(item.check for item in found)
        else None,
        warnings=[_budget_warning(found, stopped, shown)] if stopped else [],
    )


async def _explore_within(budget: Budget, work: Callable[[Budget], list[Found]]) -> list[Found]:
    """Run the blocking fuzzing in a worker thread; a cancelled run tells it to stop, and waits a little."""
    done = threading.Event()

    def worker() -> list[Found]:
        try:
            return work(budget)
        finally:
            done.set()

    try:
        return await anyio.to_thread.run_sync(worker, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        budget.stop.set()  # no request starts after the one in flight
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(done.wait, _STOP_GRACE)
        raise


def _budget_warning(found: list[Found], stopped: list[Found], shown: str) -> str:
    in_flight = next((item for item in stopped if item.began), None)
    during = f" while fuzzing {in_flight.operation}" if in_flight is not None else ""
    whole = sum(not item.stopped for item in found)
    skipped = sum(not item.began for item in found)
    return (
        f"the suite's time budget ({shown}) ran out{during}: {whole} of {len(found)} operations "
        f"fuzzed to the end, {skipped} not fuzzed"
    )


async def _case(
    run: RunContext, suite: SuiteConfig, identifier: str, item: Found, service: str, shown: str
) -> CaseResult:
    examples = f"{item.examples} example{'' if item.examples == 1 else 's'}"
    name = f"{item.operation} ({examples})"
    duration = int((item.ended - item.started) * 1000)
    stamp = int(time.time() * 1000)
    if item.stopped and item.check is None:
        if item.examples:  # every answer it checked conformed; the budget ended it early
            return CaseResult(
                id=identifier,
                name=f"{item.operation} ({examples}, stopped by the time budget)",
                suite=suite.id,
                status="passed",
                duration=duration,
                timestamp=stamp,
            )
        reason = (
            f"stopped by the suite's time budget ({shown}) before the service answered"
            if item.began
            else f"not fuzzed: the suite's time budget ({shown}) ran out first"
        )
        return CaseResult(
            id=identifier,
            name=item.operation,
            suite=suite.id,
            status="skipped",
            duration=duration,
            timestamp=stamp,
            skip_reason=reason,
        )
    if item.check is None:
        return CaseResult(
            id=identifier, name=name, suite=suite.id, status="passed", duration=duration, timestamp=stamp
        )
    end = datetime.now(UTC)
    start = datetime.fromtimestamp(item.started, UTC) if item.started > 1e9 else end
    diagnostics = await window_diagnostics(run, start=start, end=end)
    redactor = run.env.redactor
    request_body, request_cut = cap_body(redactor.body(item.request_body), 2000)
    response_body, response_cut = cap_body(redactor.body(item.response_body), 4000)
    request = RequestInfo(
        method=item.method,
        url=redactor.url(item.url),
        headers=redactor.headers(item.request_headers),
        body=request_body,
        body_truncated=request_cut,
    )
    response = (
        ResponseInfo(
            status=item.status,
            headers=redactor.headers(item.response_headers),
            body=response_body,
            body_truncated=response_cut,
        )
        if item.status is not None
        else None
    )
    parts = urlsplit(item.url)
    what = f"{item.method} {parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")
    summary = f"fuzzing {item.operation}: {what} failed `{item.check}`" + (
        f" (answered {item.status})" if item.status else ""
    )
    failure = failure_from_text(
        run,
        identifier,
        error=f"{item.check}: {item.message}",
        summary=summary,
        output=f"replay it with:\n{redactor.text(item.curl)}" if item.curl else None,
        fix=(
            f"fix `{service}` for this request (the smallest Schemathesis found), or its contract if the "
            "contract is what is wrong; the curl line in `output` replays it"
        ),
        diagnostics=diagnostics,
    )
    failure = msgspec.structs.replace(failure, request=request, response=response)
    run.full_failures[identifier] = msgspec.structs.replace(
        run.full_failures[identifier], request=request, response=response
    )
    return CaseResult(
        id=identifier,
        name=name,
        suite=suite.id,
        status="failed",
        duration=duration,
        timestamp=stamp,
        failure=failure,
    )
