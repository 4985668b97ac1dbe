"""The blocking half of `runner: fuzz`: Schemathesis and Hypothesis, in a worker thread, on a budget.

Every operation of the contract gets a Hypothesis test that sends each generated case to the
running service and checks its answer. The suite's time budget bounds all of it: no request
starts after the deadline, the request in flight waits no longer than what is left of it, and a
request cut short by the deadline is the budget running out, not a failure of the service. A
stop asked from outside (the run cancelled) ends the work before its next request.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import msgspec

__all__ = ["Budget", "Found", "explore"]

# The longest one request may wait for its answer (less when less of the budget is left).
REQUEST_TIMEOUT = 10.0


class _OutOfTime(BaseException):
    """Raised inside a Hypothesis test when the budget is spent (not a failure to shrink)."""


class Budget:
    """The suite's time budget, and the stop a cancelled run asks for."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.stop = threading.Event()

    def left(self) -> float:
        """Seconds left before the deadline (0 once it passed or a stop was asked)."""
        return 0.0 if self.stop.is_set() else max(0.0, self.deadline - time.monotonic())

    def spent(self) -> bool:
        """Whether no more requests may start."""
        return self.left() <= 0.0


class Found(msgspec.Struct, kw_only=True):
    """What one operation's fuzzing found: how many answers it checked, the minimal failing example."""

    operation: str
    examples: int = 0  # answers received and checked
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
    began: bool = False  # its fuzzing started (within the budget)
    stopped: bool = False  # the budget ran out before its fuzzing ended (or began)


def explore(document: dict[str, Any], base_url: str, max_examples: int, budget: Budget) -> list[Found]:
    """Fuzz every operation of `document` at `base_url` within `budget` (blocking)."""
    import schemathesis
    from schemathesis.core.result import Ok

    schema = schemathesis.openapi.from_dict(document)
    found: list[Found] = []
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):
            continue  # an operation Schemathesis cannot read; the contract's checks still cover it
        operation = result.ok()
        item = Found(operation=f"{operation.method.upper()} {operation.path}", started=time.time())
        found.append(item)
        if budget.spent():
            item.stopped = True
            item.ended = item.started
            continue
        item.began = True
        try:
            _test_for(operation, item, base_url, max_examples, budget)()
        except _OutOfTime:
            item.stopped = True
        except (Exception, BaseExceptionGroup) as exc:  # the minimal failing example, re-raised by Hypothesis
            if item.check is None:
                item.check, item.message = type(exc).__name__, str(exc)[:2000]
        item.ended = time.time()
    return found


def _test_for(operation: Any, item: Found, base_url: str, max_examples: int, budget: Budget) -> Any:
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
        left = budget.left()
        if left <= 0.0:
            raise _OutOfTime
        try:
            response = case.call(base_url=base_url, timeout=min(REQUEST_TIMEOUT, left))
        except Exception as exc:
            if budget.spent():  # cut short by the deadline: the budget ran out, the service did not fail
                raise _OutOfTime from exc
            raise
        item.examples += 1
        try:
            case.validate_response(response)
        except (Exception, BaseExceptionGroup) as exc:  # Schemathesis groups failures: a BaseExceptionGroup
            _record(item, case, response, exc, base_url)
            raise

    return test


def _record(item: Found, case: Any, response: Any, exc: BaseException, base_url: str) -> None:
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
