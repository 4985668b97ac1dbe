"""The shape of a suite's run: setup, teardown, sequential, skip, ignoreError, selection, parallel suites."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from support.events import suite_events
from support.stub import MakeProject, Stub, case, one_suite, run

from preflight_sdk import Project
from preflight_sdk.core.errors import ConfigError, InputError
from preflight_sdk.core.progress import ProgressEvent
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.suites.yaml import runner as yaml_runner

pytestmark = pytest.mark.anyio


async def test_sequential_fails_fast_and_skips_the_rest_with_a_reason(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Sequential
        sequential: true
        cases:
          - name: first passes
            request: {url: "{{env.STUB}}/status/200"}
          - name: second fails
            request: {url: "{{env.STUB}}/status/500"}
            expect: {status: 200}
          - name: third is skipped
            request: {url: "{{env.STUB}}/status/200"}
          - name: fourth is skipped
            request: {url: "{{env.STUB}}/status/200"}
        """)
    )
    result = await run(root)
    [suite] = result.suites
    assert [(c.name, c.status) for c in suite.cases] == [
        ("first passes", "passed"),
        ("second fails", "failed"),
        ("third is skipped", "skipped"),
        ("fourth is skipped", "skipped"),
    ]
    assert {c.skip_reason for c in suite.cases[2:]} == {"an earlier case failed and the suite is sequential"}
    assert (suite.passed, suite.failed, suite.skipped) == (1, 1, 2)
    assert result.totals.skipped == 2 and result.status == "failed"


async def test_without_sequential_every_case_runs(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Independent
        cases:
          - name: fails
            request: {url: "{{env.STUB}}/status/500"}
            expect: {status: 200}
          - name: still runs
            request: {url: "{{env.STUB}}/status/200"}
            expect: {status: 200}
        """)
    )
    result = await run(root)
    assert [c.status for c in result.suites[0].cases] == ["failed", "passed"]


async def test_a_failing_setup_skips_every_case_fails_the_suite_and_teardown_still_runs(
    make_project: MakeProject, stub: Stub
) -> None:
    teardown = stub.key()
    root = make_project(
        one_suite(f"""
        name: Broken setup
        setup:
          - name: tolerated
            request: {{url: "{{{{env.STUB}}}}/status/500"}}
            expect: {{status: 200}}
            ignoreError: true
          - name: needed
            request: {{url: "{{{{env.STUB}}}}/status/503"}}
            expect: {{status: 200}}
        cases:
          - name: one
            request: {{url: "{{{{env.STUB}}}}/status/200"}}
          - name: two
            request: {{url: "{{{{env.STUB}}}}/status/200"}}
        teardown:
          - request: {{url: "{{{{env.STUB}}}}/flaky/{teardown}?fail=0"}}
        """)
    )
    result = await run(root)
    [suite] = result.suites
    assert suite.status == "failed"
    assert suite.error == "setup step 2 (needed) failed: status: expected to equal 200, got 503"
    assert [(c.status, c.skip_reason) for c in suite.cases] == [("skipped", suite.error)] * 2
    assert len(stub.calls[teardown]) == 1
    assert result.status == "failed"
    assert result.summary.endswith(f"Suite s: {suite.error}")


async def test_teardown_always_runs_and_its_failure_is_a_warning(
    make_project: MakeProject, stub: Stub
) -> None:
    last = stub.key()
    root = make_project(
        one_suite(f"""
        name: Teardown
        cases:
          - name: passes
            request: {{url: "{{{{env.STUB}}}}/status/200"}}
        teardown:
          - name: cleanup fails
            request: {{url: "{{{{env.STUB}}}}/status/500"}}
            expect: {{status: 204}}
          - name: cleanup ignored
            request: {{url: "{{{{env.STUB}}}}/status/500"}}
            expect: {{status: 204}}
            ignoreError: true
          - name: later cleanup still runs
            request: {{url: "{{{{env.STUB}}}}/flaky/{last}?fail=0"}}
        """)
    )
    result = await run(root)
    [suite] = result.suites
    assert suite.status == "passed" and result.ok
    assert suite.warnings == ["teardown step cleanup fails failed: status: expected to equal 204, got 500"]
    assert len(stub.calls[last]) == 1


async def test_skip_and_ignore_error(make_project: MakeProject, stub: Stub) -> None:
    skipped = stub.key()
    root = make_project(
        one_suite(f"""
        name: Skip and ignore
        cases:
          - name: skipped with a reason
            skip: waiting for the v2 API
            request: {{url: "{{{{env.STUB}}}}/flaky/{skipped}?fail=0"}}
          - name: skipped plainly
            skip: true
            request: {{url: "{{{{env.STUB}}}}/flaky/{skipped}?fail=0"}}
          - name: tolerated failure
            ignoreError: true
            request: {{url: "{{{{env.STUB}}}}/status/500"}}
            expect: {{status: 200}}
        """)
    )
    result = await run(root)
    [suite] = result.suites
    assert [(c.status, c.skip_reason) for c in suite.cases] == [
        ("skipped", "waiting for the v2 API"),
        ("skipped", "marked skip"),
        ("passed", None),
    ]
    assert stub.calls[skipped] == []
    assert suite.status == "passed"
    assert suite.warnings == [
        "case `tolerated failure` failed (ignoreError): status: expected to equal 200, got 500"
    ]


async def test_a_file_without_cases_fails_the_suite(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Nothing here
        cases: []
        """)
    )
    result = await run(root)
    [suite] = result.suites
    assert (suite.status, suite.error, suite.cases) == ("failed", "the test file declares no cases", [])
    assert result.status == "failed"


async def test_an_unknown_runner_cannot_be_configured(make_project: MakeProject) -> None:
    root = make_project(
        [{"id": "ui", "runner": "vitest", "file": "tests/ui.yaml"}],
        files={"tests/ui.yaml": "name: x\ncases: []\n"},
    )
    with pytest.raises(ConfigError) as raised:
        await run(root)
    assert raised.value.code == "CONFIG_INVALID"
    assert "`vitest` is not one of `exec`, `fuzz`, `playwright`, `pytest`, `shell`, `yaml`" in str(raised.value)


def _two_suites(make_project: MakeProject) -> Path:
    return make_project(
        [
            ("alpha", 'name: A\ncases:\n  - name: a\n    request: {url: "{{env.STUB}}/status/200"}\n'),
            ("beta", 'name: B\ncases:\n  - name: b\n    request: {url: "{{env.STUB}}/status/200"}\n'),
            ("gamma", 'name: C\ncases:\n  - name: c\n    request: {url: "{{env.STUB}}/status/200"}\n'),
        ]
    )


async def test_unknown_suite_ids_list_the_valid_ones(make_project: MakeProject) -> None:
    root = _two_suites(make_project)
    project = Project.open(root)
    with pytest.raises(InputError) as raised:
        await project.run_suite("delta")
    assert raised.value.code == "SUITE_NOT_FOUND"
    assert raised.value.hint == "valid suite ids: alpha, beta, gamma"
    assert raised.value.details == {"unknown": ["delta"], "valid": ["alpha", "beta", "gamma"]}
    with pytest.raises(InputError) as mixed:
        await project.run(filter="alpha,nope")
    assert mixed.value.details is not None and mixed.value.details["unknown"] == ["nope"]
    assert not (root / ".preflight" / "runs").exists() or not any((root / ".preflight" / "runs").iterdir())


async def test_filter_selects_suites_by_comma_separated_ids(make_project: MakeProject) -> None:
    root = _two_suites(make_project)
    project = Project.open(root)
    picked = await project.run(filter=" gamma , alpha,gamma")
    assert [s.id for s in picked.suites] == ["gamma", "alpha"]
    single = await project.run_suite("beta")
    assert [s.id for s in single.suites] == ["beta"] and single.totals.total == 1
    everything = await project.run()
    assert [s.id for s in everything.suites] == ["alpha", "beta", "gamma"]


def _events(result: RunResult) -> list[dict[str, object]]:
    path = next(a.path for a in result.artifacts if a.name == "events.ndjson")
    return suite_events(path)


def _interval(events: list[dict[str, object]], suite: str) -> tuple[datetime, datetime]:
    start = next(e for e in events if e["type"] == "suite_start" and e["suite"] == suite)
    end = next(e for e in events if e["type"] == "suite_end" and e["suite"] == suite)
    return (
        datetime.fromisoformat(str(start["timestamp"]).replace("Z", "+00:00")),
        datetime.fromisoformat(str(end["timestamp"]).replace("Z", "+00:00")),
    )


def _slow_suites(make_project: MakeProject, parallel: object, marked: bool = True) -> Path:
    body = """
    name: Slow {n}
    cases:
      - name: slow one
        request: {{url: "{{{{env.STUB}}}}/slow?ms=350"}}
        expect: {{status: 200}}
      - name: slow two
        request: {{url: "{{{{env.STUB}}}}/slow?ms=350"}}
        expect: {{status: 200}}
    """
    return make_project(
        [{"id": n, "file": f"tests/{n}.yaml", "parallel": marked} for n in ("left", "right")],
        files={f"tests/{n}.yaml": body.format(n=n) for n in ("left", "right")},
        tests={"parallel": parallel},
    )


async def test_parallel_suites_really_overlap(make_project: MakeProject) -> None:
    root = _slow_suites(make_project, {"enabled": True, "concurrency": 2})
    began = time.perf_counter()
    result = await run(root)
    wall = time.perf_counter() - began
    assert result.ok and result.totals.passed == 4
    assert wall < 1.2  # serially it is at least 1.4 s
    events = _events(result)
    left, right = _interval(events, "left"), _interval(events, "right")
    assert left[0] < right[1] and right[0] < left[1]  # the intervals overlap
    assert [s.id for s in result.suites] == ["left", "right"]  # reported in file order


async def test_serial_suites_do_not_overlap(make_project: MakeProject) -> None:
    root = _slow_suites(make_project, True)
    began = time.perf_counter()
    result = await run(root, parallel=False)
    wall = time.perf_counter() - began
    assert result.ok and wall >= 1.4
    events = _events(result)
    left, right = _interval(events, "left"), _interval(events, "right")
    assert left[1] <= right[0]


async def test_only_suites_marked_parallel_run_together(make_project: MakeProject) -> None:
    root = _slow_suites(make_project, True, marked=False)
    result = await run(root, parallel=True)
    events = _events(result)
    left, right = _interval(events, "left"), _interval(events, "right")
    assert left[1] <= right[0]


async def test_parallel_suites_keep_their_own_variables(make_project: MakeProject) -> None:
    body = """
    name: Own {n}
    variables: {{who: {n}}}
    cases:
      - name: save
        request: {{url: "{{{{env.STUB}}}}/slow?ms=100"}}
        save: {{mine: body.slept}}
      - name: use
        request: {{url: "{{{{env.STUB}}}}/echo/{{{{who}}}}"}}
        expect: {{body: {{path: /echo/{n}}}}}
    """
    root = make_project(
        [{"id": n, "file": f"tests/{n}.yaml", "parallel": True} for n in ("north", "south")],
        files={f"tests/{n}.yaml": body.format(n=n) for n in ("north", "south")},
        tests={"parallel": True},
    )
    result = await run(root)
    assert result.ok, [c.failure for c in result.failures()]
    assert {c.id for s in result.suites for c in s.cases} == {
        "north.save",
        "north.use",
        "south.save",
        "south.use",
    }


async def test_case_ids_are_stable_and_unique(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Ids
        cases:
          - name: Same Name!
            request: {url: "{{env.STUB}}/status/200"}
          - name: same name
            request: {url: "{{env.STUB}}/status/200"}
        """)
    )
    first = await run(root)
    second = await run(root)
    ids = [c.id for c in first.suites[0].cases]
    assert ids == ["s.same-name", "s.same-name-2"]
    assert ids == [c.id for c in second.suites[0].cases]
    assert first.run_id != second.run_id
    assert case(first, "same name").id == "s.same-name-2"


async def test_an_edited_test_file_is_read_again_on_the_next_run(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Edited
        cases:
          - name: first
            request: {url: "{{env.STUB}}/status/200"}
            expect: {status: 200}
        """)
    )
    project = Project.open(root)
    before = await project.run()
    text = (root / "tests" / "s.yaml").read_text()
    (root / "tests" / "s.yaml").write_text(text.replace("status/200", "status/201"))  # same size
    changed = await project.run()
    (root / "tests" / "s.yaml").write_text(
        text + '  - name: second\n    request: {url: "{{env.STUB}}/status/200"}\n'
    )
    grown = await project.run()
    assert [c.name for c in before.suites[0].cases] == ["first"]
    assert before.ok
    failure = case(changed, "first").failure  # the same size, other content: read again
    assert failure is not None and failure.summary == "GET /status/201 returned 201, expected 200"
    assert [c.name for c in grown.suites[0].cases] == ["first", "second"]


async def test_progress_reports_each_case_with_done_and_total(make_project: MakeProject) -> None:
    root = make_project(
        [
            ("first", 'name: A\ncases:\n  - name: a\n    request: {url: "{{env.STUB}}/status/200"}\n'),
            (
                "second",
                'name: B\ncases:\n  - name: b\n    request: {url: "{{env.STUB}}/status/500"}\n'
                "    expect: {status: 200}\n"
                '  - name: c\n    skip: true\n    request: {url: "{{env.STUB}}/status/200"}\n',
            ),
        ]
    )
    events: list[ProgressEvent] = []
    result = await Project.open(root).run(progress=events.append)
    cases = [e for e in events if e.kind == "case"]
    assert [(e.status, e.done, e.total) for e in cases] == [("ok", 1, 3), ("failed", 2, 3), ("skipped", 3, 3)]
    assert [e.message for e in cases] == ["passed: first / a", "failed: second / b", "skipped: second / c"]
    done = [e for e in events if e.kind == "done"]
    assert done and done[0].message == result.summary


async def test_a_suite_past_its_timeout_is_stopped_and_failed(make_project: MakeProject) -> None:
    root = make_project(
        [{"id": "slow", "file": "tests/slow.yaml", "timeout": "300ms"}],
        files={
            "tests/slow.yaml": """
            name: Slow
            cases:
              - name: takes too long
                request: {url: "{{env.STUB}}/slow?ms=3000"}
            """
        },
    )
    began = time.perf_counter()
    result = await run(root)
    assert time.perf_counter() - began < 2
    [suite] = result.suites
    assert (suite.status, suite.error) == ("failed", "the suite did not finish within 300ms and was stopped")
    assert result.status == "failed"
    events = _events(result)
    assert [e["type"] for e in events if e.get("suite") == "slow"][-1] == "suite_end"


async def test_a_timeout_keeps_finished_cases_fails_the_hanging_one_and_still_runs_teardown(
    make_project: MakeProject, stub: Stub
) -> None:
    teardown = stub.key()
    root = make_project(
        [{"id": "hang", "file": "tests/hang.yaml", "timeout": "500ms"}],
        files={
            "tests/hang.yaml": f"""
            name: Hangs
            cases:
              - name: quick
                request: {{url: "{{{{env.STUB}}}}/status/200"}}
                expect: {{status: 200}}
              - name: hangs
                request: {{url: "{{{{env.STUB}}}}/slow?ms=5000"}}
              - name: never reached
                request: {{url: "{{{{env.STUB}}}}/status/200"}}
            teardown:
              - name: clean up
                request: {{url: "{{{{env.STUB}}}}/flaky/{teardown}?fail=0"}}
                expect: {{status: 200}}
            """
        },
    )
    began = time.perf_counter()
    result = await run(root)
    assert time.perf_counter() - began < 3
    [suite] = result.suites
    assert (suite.status, suite.error) == ("failed", "the suite did not finish within 500ms and was stopped")
    assert [(c.name, c.status) for c in suite.cases] == [
        ("quick", "passed"),
        ("hangs", "failed"),
        ("never reached", "skipped"),
    ]
    hung = case(result, "hangs")
    assert hung.failure is not None
    assert hung.failure.error == "stopped by the suite's timeout (500ms) before it finished"
    assert hung.failure.summary == "`hangs` did not finish before the suite's timeout (500ms)"
    assert 400 <= hung.duration < 2_000
    assert (
        case(result, "never reached").skip_reason == "not run: the suite was stopped at its timeout (500ms)"
    )
    assert len(stub.calls[teardown]) == 1  # the teardown request reached the server
    assert suite.warnings == []
    assert (suite.passed, suite.failed, suite.skipped) == (1, 1, 1)

    events = _events(result)
    assert [(e["type"], e.get("case")) for e in events] == [
        ("suite_start", None),
        ("case_start", "hang.quick"),
        ("case_end", "hang.quick"),
        ("case_start", "hang.hangs"),
        ("case_end", "hang.hangs"),
        ("case_start", "hang.never-reached"),
        ("case_end", "hang.never-reached"),
        ("suite_end", None),
    ]


async def test_a_hanging_teardown_is_stopped_at_its_own_deadline(
    make_project: MakeProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_runner, "TEARDOWN_LIMIT", 0.3)
    root = make_project(
        one_suite("""
        name: Stuck teardown
        cases:
          - name: fine
            request: {url: "{{env.STUB}}/status/200"}
        teardown:
          - name: never answers
            request: {url: "{{env.STUB}}/slow?ms=5000"}
        """)
    )
    began = time.perf_counter()
    result = await run(root)
    assert time.perf_counter() - began < 2
    [suite] = result.suites
    assert suite.status == "passed"
    assert suite.warnings == ["teardown did not finish within 0.3s and was stopped"]


async def test_teardown_runs_when_the_whole_run_is_cancelled(make_project: MakeProject, stub: Stub) -> None:
    teardown = stub.key()
    root = make_project(
        one_suite(f"""
        name: Cancelled
        cases:
          - name: hangs
            request: {{url: "{{{{env.STUB}}}}/slow?ms=5000"}}
        teardown:
          - request: {{url: "{{{{env.STUB}}}}/flaky/{teardown}?fail=0"}}
        """)
    )
    with anyio.move_on_after(0.4) as scope:
        await run(root)
    assert scope.cancelled_caught
    assert len(stub.calls[teardown]) == 1
