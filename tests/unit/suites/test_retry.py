"""Retries (case, suite and run policies, backoff timings) and polling, against the stub's counters."""

from __future__ import annotations

import itertools
import time

import pytest
from support.stub import MakeProject, Stub, case, one_suite, run

pytestmark = pytest.mark.anyio

# Scheduling noise allowed around a measured wait (the request itself takes about a millisecond).
EARLY = 0.01
LATE = 0.09


def assert_waits(measured: list[float], expected: list[float]) -> None:
    assert len(measured) == len(expected), (measured, expected)
    for got, want in zip(measured, expected, strict=True):
        assert want - EARLY <= got <= want + LATE, (measured, expected)


async def test_case_suite_and_run_policies_each_apply_where_they_should(
    make_project: MakeProject, stub: Stub
) -> None:
    keys = {name: stub.key() for name in ("run-pass", "run-fail", "suite-fail", "case-fail", "none")}
    root = make_project(
        [
            (
                "plain",
                f"""
                name: Run policy
                cases:
                  - name: passes on its second attempt
                    request: {{url: "{{{{env.STUB}}}}/flaky/{keys["run-pass"]}?fail=1"}}
                    expect: {{status: 200}}
                  - name: gives up after the run's two attempts
                    request: {{url: "{{{{env.STUB}}}}/flaky/{keys["run-fail"]}?fail=9"}}
                    expect: {{status: 200}}
                """,
            ),
            (
                "retried",
                f"""
                name: Suite policy
                cases:
                  - name: gives up after the suite's three attempts
                    request: {{url: "{{{{env.STUB}}}}/flaky/{keys["suite-fail"]}?fail=9"}}
                    expect: {{status: 200}}
                  - name: its own policy wins
                    request: {{url: "{{{{env.STUB}}}}/flaky/{keys["case-fail"]}?fail=9"}}
                    retry: {{maxAttempts: 4, delay: 10ms}}
                    expect: {{status: 200}}
                  - name: one attempt when asked
                    request: {{url: "{{{{env.STUB}}}}/flaky/{keys["none"]}?fail=9"}}
                    retry: {{maxAttempts: 1}}
                    expect: {{status: 200}}
                """,
            ),
        ],
        tests={"retry": {"maxAttempts": 2, "delay": "10ms"}},
    )
    # the suite policy is set in e2e.yaml
    config = (root / "e2e.yaml").read_text()
    config = config.replace(
        '"file": "tests/retried.yaml"',
        '"file": "tests/retried.yaml", "retry": {"maxAttempts": 3, "delay": "10ms"}',
    )
    (root / "e2e.yaml").write_text(config)

    result = await run(root)
    calls = {name: len(stub.calls[key]) for name, key in keys.items()}
    assert calls == {"run-pass": 2, "run-fail": 2, "suite-fail": 3, "case-fail": 4, "none": 1}

    passed = case(result, "passes on its second attempt")
    assert passed.status == "passed"
    assert passed.attempts is not None
    assert [(a.attempt, a.passed) for a in passed.attempts] == [(1, False), (2, True)]
    assert passed.attempts[0].error == "status: expected to equal 200, got 503"
    assert passed.attempts[1].error is None

    for name, count in (
        ("gives up after the run's two attempts", 2),
        ("gives up after the suite's three attempts", 3),
        ("its own policy wins", 4),
    ):
        failed = case(result, name)
        assert failed.status == "failed"
        assert failed.attempts is not None
        assert [a.attempt for a in failed.attempts] == list(range(1, count + 1))
        assert not any(a.passed for a in failed.attempts)
        assert all(a.timestamp > 0 for a in failed.attempts)
        assert failed.failure is not None and failed.failure.response is not None
        assert failed.failure.response.body == {"attempt": count, "ok": False}  # the last attempt
    assert case(result, "one attempt when asked").attempts is None


@pytest.mark.parametrize(
    ("backoff", "waits"),
    [("linear", [0.1, 0.2, 0.3]), ("exponential", [0.1, 0.2, 0.4]), ("fixed", [0.1, 0.1, 0.1])],
)
async def test_backoff_waits_are_measured_between_attempts(
    make_project: MakeProject, stub: Stub, backoff: str, waits: list[float]
) -> None:
    key = stub.key()
    root = make_project(
        one_suite(f"""
        name: Backoff
        cases:
          - name: passes on the fourth attempt
            request: {{url: "{{{{env.STUB}}}}/flaky/{key}?fail=3"}}
            retry: {{maxAttempts: 4, delay: 100ms, backoff: {backoff}}}
            expect: {{status: 200}}
        """)
    )
    result = await run(root)
    assert result.ok
    assert_waits(stub.gaps(key), waits)
    attempts = case(result, "passes on the fourth attempt").attempts
    assert attempts is not None and [a.passed for a in attempts] == [False, False, False, True]
    starts = [a.timestamp for a in attempts]
    assert all(later >= earlier for earlier, later in itertools.pairwise(starts))


async def test_suite_policy_backoff_and_multiplier(make_project: MakeProject, stub: Stub) -> None:
    key = stub.key()
    root = make_project(
        [
            {
                "id": "s",
                "file": "tests/s.yaml",
                "retry": {
                    "maxAttempts": 3,
                    "delay": "50ms",
                    "backoff": "exponential",
                    "backoffMultiplier": 3,
                },
            }
        ],
        files={
            "tests/s.yaml": f"""
            name: Suite backoff
            cases:
              - name: third time lucky
                request: {{url: "{{{{env.STUB}}}}/flaky/{key}?fail=2"}}
                expect: {{status: 200}}
            """
        },
    )
    assert (await run(root)).ok
    assert_waits(stub.gaps(key), [0.05, 0.15])


async def test_polling_until_a_condition_holds(make_project: MakeProject, stub: Stub) -> None:
    key = stub.key()
    root = make_project(
        one_suite(f"""
        name: Poll
        cases:
          - name: waits for done
            request: {{url: "{{{{env.STUB}}}}/poll/{key}?ready=3"}}
            retry: {{until: {{body: {{state: done}}}}, interval: 50ms, deadline: 3s}}
            expect: {{status: 200, body: {{attempt: 3}}}}
        """)
    )
    result = await run(root)
    assert result.ok
    assert len(stub.calls[key]) == 3
    assert_waits(stub.gaps(key), [0.05, 0.05])


async def test_poll_fail_if_stops_at_once(make_project: MakeProject, stub: Stub) -> None:
    key = stub.key()
    root = make_project(
        one_suite(f"""
        name: Poll
        cases:
          - name: stops on failed
            request: {{url: "{{{{env.STUB}}}}/poll/{key}?ready=100&failAt=2"}}
            retry:
              until: {{body: {{state: done}}}}
              failIf: {{body: {{state: failed}}}}
              interval: 20ms
              deadline: 5s
        """)
    )
    began = time.perf_counter()
    result = await run(root)
    assert time.perf_counter() - began < 2
    assert len(stub.calls[key]) == 2
    failure = case(result, "stops on failed").failure
    assert failure is not None
    assert failure.error == "the failIf condition held after 2 poll(s): polling stopped"
    assert (
        failure.summary
        == "GET /poll/{key} returned 200; the failIf condition held after 2 poll(s): polling stopped".replace(
            "{key}", key
        )
    )
    assert failure.response is not None and failure.response.body == {"state": "failed", "attempt": 2}


async def test_poll_deadline_fails_with_the_last_response(make_project: MakeProject, stub: Stub) -> None:
    key = stub.key()
    root = make_project(
        one_suite(f"""
        name: Poll
        cases:
          - name: never done
            request: {{url: "{{{{env.STUB}}}}/poll/{key}?ready=100000"}}
            retry: {{until: {{body: {{state: done}}}}, interval: 50ms, deadline: 300ms}}
        """)
    )
    began = time.perf_counter()
    result = await run(root)
    elapsed = time.perf_counter() - began
    assert 0.28 <= elapsed < 1.5
    polls = len(stub.calls[key])
    assert 4 <= polls <= 8
    failure = case(result, "never done").failure
    assert failure is not None
    assert failure.error == f"the until condition did not hold within 300ms ({polls} polls)"
    assert failure.summary == (
        f'GET /poll/{key} returned 200, expected body.state = "done", got "pending"; '
        f"the until condition did not hold within 300ms ({polls} polls)"
    )
    [until] = failure.assertions
    assert (until.path, until.expected, until.actual, until.passed) == (
        "body.state",
        "done",
        "pending",
        False,
    )
    assert failure.response is not None and failure.response.body == {"state": "pending", "attempt": polls}


async def test_setup_and_teardown_steps_honour_their_own_retry_and_delay(
    make_project: MakeProject, stub: Stub
) -> None:
    setup, teardown = stub.key(), stub.key()
    root = make_project(
        [{"id": "s", "file": "tests/s.yaml", "retry": {"maxAttempts": 5, "delay": "10ms"}}],
        files={
            "tests/s.yaml": f"""
            name: Own policies
            setup:
              - name: flaky setup
                request: {{url: "{{{{env.STUB}}}}/flaky/{setup}?fail=1"}}
                expect: {{status: 200}}
                retry: {{maxAttempts: 2, delay: 50ms}}
            cases:
              - name: case
                request: {{url: "{{{{env.STUB}}}}/flaky/{teardown}?fail=0"}}
            teardown:
              - name: later
                delay: 200ms
                request: {{url: "{{{{env.STUB}}}}/flaky/{teardown}?fail=0"}}
              - name: failing cleanup is not retried by the suite policy
                request: {{url: "{{{{env.STUB}}}}/flaky/{setup}x?fail=9"}}
                expect: {{status: 200}}
            """
        },
    )
    result = await run(root)
    [suite] = result.suites
    assert suite.status == "passed" and suite.error is None
    assert len(stub.calls[setup]) == 2
    assert_waits(stub.gaps(setup), [0.05])
    assert_waits(stub.gaps(teardown), [0.2])
    assert len(stub.calls[setup + "x"]) == 1
    assert suite.warnings == [
        "teardown step failing cleanup is not retried by the suite policy failed: "
        "status: expected to equal 200, got 503"
    ]


async def test_a_polling_case_is_not_retried_again_by_the_suite_policy(
    make_project: MakeProject, stub: Stub
) -> None:
    key = stub.key()
    root = make_project(
        [{"id": "s", "file": "tests/s.yaml", "retry": {"maxAttempts": 3, "delay": "10ms"}}],
        files={
            "tests/s.yaml": f"""
            name: Poll under a suite policy
            cases:
              - name: never done
                request: {{url: "{{{{env.STUB}}}}/poll/{key}?ready=100000"}}
                retry: {{until: {{body: {{state: done}}}}, interval: 40ms, deadline: 200ms}}
            """
        },
    )
    result = await run(root)
    failed = case(result, "never done")
    assert failed.status == "failed" and failed.attempts is None
    assert len(stub.calls[key]) <= 7  # one poll series, not three
