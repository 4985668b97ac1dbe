"""`runner: fuzz`: property-based cases against a service, from its contract, by Schemathesis.

Schemathesis (the optional extra `preflight-sdk[contracts]`) generates requests for each
operation of the service's contract, sends them to the running service and checks each answer
(no server error, a documented status, content type and headers, a body its schema allows).
Hypothesis shrinks a failing request to the smallest one that still fails. The suite has one case
per operation: passed, or failed with the minimal request, the response, the check that failed,
the service's log lines of that moment and the curl line that replays it.

The suite is bounded by `maxExamples` (per operation) and its `timeout` (the whole suite): when
the time is up, the operation in flight stops with what it found, and the rest are skipped.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.results.run import CaseResult, RequestInfo, ResponseInfo, SuiteResult

from .cases import failure_from_text, window_diagnostics
from .context import RunContext, case_id
from .outcome import cap_body

__all__ = ["EXTRA", "run_fuzz_suite"]

EXTRA = "preflight-sdk[contracts]"


class _OutOfTime(BaseException):
    """Raised inside a Hypothesis test when the suite's budget is spent (not a failure to shrink)."""


class _Found(msgspec.Struct, kw_only=True):
    """What one operation's fuzzing found: the minimal failing example, if any."""

    operation: str
    examples: int = 0
    check: str | None = None
    message: str | None = None
    method: str = ""
    url: str = ""
    request_headers: dict[str, str] = msgspec.field(default_factory=dict)
    request_body: Any = None
    status: int | None = None
    response_headers: dict[str, str] = msgspec.field(default_factory=dict)
    response_body: Any = None
    curl: str | None = None
    started: float = 0.0
    ended: float = 0.0
    stopped: bool = False


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
    contract = loaded.contracts.services.get(name)
    if contract is None:
        contract = await run.contracts.served_contract(name)  # a served contract, read after setup
    base = run.env.base_url(name)
    if contract is None or base is None:
        why = "has no contract to fuzz from" if contract is None else "publishes no port"
        return run.finish_suite(
            id=suite.id,
            name=suite.name or suite.id,
            runner="fuzz",
            cases=[],
            seconds=0.0,
            error=f"service `{name}` {why}",
        )
    deadline = time.monotonic() + timeout
    document = contract.sources.root.data
    found = await anyio.to_thread.run_sync(
        lambda: _fuzz(document, base, suite.max_examples, deadline), abandon_on_cancel=True
    )
    cases: list[CaseResult] = []
    for item in found:
        identifier = case_id(suite.id, item.operation, taken)
        run.event("case_start", suite=suite.id, case=identifier)
        result = await _case(run, suite, identifier, item, name)
        cases.append(result)
        run.case_finished(result)
    stopped = any(item.stopped for item in found)
    return run.finish_suite(
        id=suite.id,
        name=suite.name or suite.id,
        runner="fuzz",
        cases=cases,
        seconds=time.perf_counter() - began,
        warnings=[
            f"the suite's time budget ran out: operations after the {sum(not i.stopped for i in found)}th were not fuzzed"
        ]
        if stopped
        else [],
    )


async def _case(
    run: RunContext, suite: SuiteConfig, identifier: str, item: _Found, service: str
) -> CaseResult:
    name = f"{item.operation} ({item.examples} examples)"
    duration = int((item.ended - item.started) * 1000)
    stamp = int(time.time() * 1000)
    if item.stopped and item.check is None:
        return CaseResult(
            id=identifier,
            name=item.operation,
            suite=suite.id,
            status="skipped",
            duration=duration,
            timestamp=stamp,
            skip_reason="not fuzzed: the suite's time budget ran out",
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


def _fuzz(document: dict[str, Any], base_url: str, max_examples: int, deadline: float) -> list[_Found]:
    """Fuzz every operation of `document` at `base_url` (blocking: Hypothesis runs in this thread)."""
    import schemathesis

    schema = schemathesis.openapi.from_dict(document)
    found: list[_Found] = []
    out_of_time = False
    from schemathesis.core.result import Ok

    for result in schema.get_all_operations():
        if not isinstance(result, Ok):
            continue  # an operation Schemathesis cannot read; the contract's checks still cover it
        operation = result.ok()
        item = _Found(operation=f"{operation.method.upper()} {operation.path}", started=time.time())
        found.append(item)
        if out_of_time or time.monotonic() >= deadline:
            item.stopped = True
            item.ended = item.started
            continue

        test = _test_for(operation, item, base_url, max_examples, deadline)
        try:
            test()
        except _OutOfTime:
            out_of_time = item.stopped = True
        except (Exception, BaseExceptionGroup) as exc:  # the minimal failing example, re-raised by Hypothesis
            if item.check is None:
                item.check, item.message = type(exc).__name__, str(exc)[:2000]
        item.ended = time.time()
    return found


def _test_for(operation: Any, item: _Found, base_url: str, max_examples: int, deadline: float) -> Any:
    """The Hypothesis test of one operation: send each generated case, check its answer."""
    import hypothesis

    @hypothesis.settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,  # the same examples each run: a failure is reproducible, a pass stable
        report_multiple_bugs=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate, hypothesis.Phase.shrink],
    )
    @hypothesis.given(case=operation.as_strategy())
    def test(case: Any) -> None:
        if time.monotonic() >= deadline:
            raise _OutOfTime
        item.examples += 1
        response = case.call(base_url=base_url, timeout=10)
        try:
            case.validate_response(response)
        except (Exception, BaseExceptionGroup) as exc:  # Schemathesis groups failures: a BaseExceptionGroup
            _record(item, case, response, exc, base_url)
            raise

    return test


def _record(item: _Found, case: Any, response: Any, exc: BaseException, base_url: str) -> None:
    """Keep this failing example (Hypothesis replays the minimal one last, so it is what stays)."""
    failures = list(getattr(exc, "exceptions", None) or [exc])
    item.check = "; ".join(str(getattr(f, "title", None) or type(f).__name__) for f in failures)
    item.message = "; ".join(
        f"{getattr(f, 'title', type(f).__name__)}: {getattr(f, 'message', '') or ''}".strip(": ")
        for f in failures
    )[:2000]
    request = response.request
    item.method = str(request.method)
    item.url = str(request.url)
    item.request_headers = {str(k): str(v) for k, v in request.headers.items()}
    raw = request.body
    item.request_body = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    item.status = int(response.status_code)
    item.response_headers = {str(k): str(v) for k, v in response.headers.items()}
    try:
        item.response_body = response.json()
    except Exception:
        item.response_body = response.text[:4000] if isinstance(response.text, str) else None
    try:
        item.curl = case.as_curl_command(base_url=base_url)
    except Exception:
        item.curl = None
