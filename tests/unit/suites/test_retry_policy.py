"""Which retry policy applies to a case, and the waits between its attempts (no off-by-one)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from preflight_sdk.config.model import RetryPolicy
from preflight_sdk.config.testfile import StepRetry
from preflight_sdk.suites.retry import Policy, backoff_waits, resolve_policy


def policy(**fields: Any) -> RetryPolicy:
    return msgspec.convert(fields, RetryPolicy)


def step(**fields: Any) -> StepRetry:
    return msgspec.convert(fields, StepRetry)


@pytest.mark.parametrize(
    ("attempts", "backoff", "multiplier", "waits"),
    [
        (1, None, 2.0, ()),
        (2, None, 2.0, (1.0,)),
        (4, None, 2.0, (1.0, 1.0, 1.0)),
        (4, "fixed", 2.0, (1.0, 1.0, 1.0)),
        (4, "linear", 2.0, (1.0, 2.0, 3.0)),
        (5, "exponential", 2.0, (1.0, 2.0, 4.0, 8.0)),
        (4, "exponential", 3.0, (1.0, 3.0, 9.0)),
        (3, "linear", 5.0, (1.0, 2.0)),  # the multiplier is for exponential only
    ],
)
def test_backoff_waits(
    attempts: int, backoff: str | None, multiplier: float, waits: tuple[float, ...]
) -> None:
    assert backoff_waits(attempts, 1.0, backoff, multiplier) == waits


def test_waits_scale_with_the_delay() -> None:
    assert backoff_waits(4, 0.25, "exponential") == (0.25, 0.5, 1.0)
    assert backoff_waits(4, 0.1, "linear") == pytest.approx((0.1, 0.2, 0.3))


def test_the_case_policy_wins_over_the_suite_which_wins_over_the_run() -> None:
    run = policy(maxAttempts=2, delay="10ms")
    suite = policy(maxAttempts=3, delay="20ms", backoff="linear")
    case = step(maxAttempts=4, delay="30ms", backoff="exponential")
    assert resolve_policy(case, suite, run) == Policy(max_attempts=4, waits=(0.03, 0.06, 0.12), source="case")
    assert resolve_policy(None, suite, run) == Policy(max_attempts=3, waits=(0.02, 0.04), source="suite")
    assert resolve_policy(None, None, run) == Policy(max_attempts=2, waits=(0.01,), source="run")
    assert resolve_policy(None, None, None) == Policy()


def test_a_poll_runs_once_whatever_the_suite_or_run_policy() -> None:
    poll = step(until={"status": 200}, interval="50ms", deadline="1s")
    suite = policy(maxAttempts=3, delay="20ms")
    assert resolve_policy(poll, suite, suite) == Policy(max_attempts=1, waits=(), source="poll")
    fail_if = step(failIf={"status": 500})
    assert resolve_policy(fail_if, None, suite).max_attempts == 1


def test_defaults_of_each_level() -> None:
    assert resolve_policy(step(maxAttempts=3), None, None) == Policy(
        max_attempts=3, waits=(1.0, 1.0), source="case"
    )
    assert resolve_policy(None, policy(maxAttempts=3, backoff="exponential"), None).waits == (1.0, 2.0)
    assert resolve_policy(
        step(maxAttempts=3, delay=250, backoffMultiplier=4, backoff="exponential"), None, None
    ).waits == (
        0.25,
        1.0,
    )


@pytest.mark.parametrize("attempts", [0, 11])
def test_attempts_are_bounded(attempts: int) -> None:
    with pytest.raises(msgspec.ValidationError):
        policy(maxAttempts=attempts)
    with pytest.raises(msgspec.ValidationError):
        step(maxAttempts=attempts)
