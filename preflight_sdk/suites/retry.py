"""Retry policies: which one applies to a case, and how long to wait between attempts.

Waits before attempt 2, 3, 4…: `fixed` d, d, d; `linear` d, 2d, 3d; `exponential` d, d·m, d·m²
(d, 2d, 4d with the default multiplier 2). The original shifted both series by one step.
A case's own policy wins over its suite's, which wins over `tests.retry`. pytest and shell suites
have no case policies: their suite's policy (else `tests.retry`) runs the whole command again.
"""

from __future__ import annotations

import msgspec

from preflight_sdk.config.model import RetryPolicy
from preflight_sdk.config.testfile import StepRetry
from preflight_sdk.core.durations import parse_duration

__all__ = ["Policy", "backoff_waits", "resolve_policy", "suite_policy"]


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    """How many attempts, and the wait before each retry (seconds)."""

    max_attempts: int = 1
    waits: tuple[float, ...] = ()
    source: str = "none"


def backoff_waits(
    attempts: int, delay: float, backoff: str | None, multiplier: float = 2.0
) -> tuple[float, ...]:
    """Return the waits before attempts 2..`attempts`."""
    waits = []
    for retry in range(1, attempts):
        if backoff == "linear":
            waits.append(delay * retry)
        elif backoff == "exponential":
            waits.append(delay * multiplier ** (retry - 1))
        else:
            waits.append(delay)
    return tuple(waits)


def resolve_policy(case: StepRetry | None, suite: RetryPolicy | None, run: RetryPolicy | None) -> Policy:
    """Return the policy for a case.

    A poll-form `retry` (`until`/`failIf`) is the case's own way of trying again, bounded by its
    deadline: such a case runs once, not again by its suite's or the run's policy.
    """
    if (
        case is not None
        and case.max_attempts is None
        and (case.until is not None or case.fail_if is not None)
    ):
        return Policy(source="poll")
    if case is not None and case.max_attempts is not None:
        delay = parse_duration(case.delay) if case.delay is not None else 1.0
        waits = backoff_waits(case.max_attempts, delay, case.backoff, case.backoff_multiplier or 2.0)
        return Policy(max_attempts=case.max_attempts, waits=waits, source="case")
    for policy, source in ((suite, "suite"), (run, "run")):
        if policy is not None:
            waits = backoff_waits(
                policy.max_attempts, parse_duration(policy.delay), policy.backoff, policy.backoff_multiplier
            )
            return Policy(max_attempts=policy.max_attempts, waits=waits, source=source)
    return Policy()


def suite_policy(suite: RetryPolicy | None, run: RetryPolicy | None) -> Policy:
    """Return the policy that runs a pytest or shell suite's command again when it fails.

    The suite's own `retry` wins over `tests.retry`; without either, the command runs once.
    """
    return resolve_policy(None, suite, run)
