"""Affected cases through the SDK, on projects whose environment is one HTTP mock (no Docker): the
verdicts `affected=True` carries and from where, what is never carried, the order of a run on a
kept environment, `failFast`, and resumed runs carrying what passed (and what diff_runs makes of it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.stub import Stub

from preflight_sdk import Project
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.run import CaseResult, RunResult

pytestmark = pytest.mark.anyio

ROUTES = [
    {"method": "GET", "path": "/ok/:n", "response": {"status": 200, "body": {"ok": True}}},
    {"method": "GET", "path": "/broken", "response": {"status": 500}},
    {"method": "GET", "path": "/setup", "response": {"status": 200}},
    {"method": "GET", "path": "/teardown", "response": {"status": 200}},
    {"method": "GET", "path": "/busy", "sequence": [{"status": 503}, {"status": 200}]},
]


def _case(name: str, path: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "request": {"method": "GET", "url": "{{mocks.api.url}}" + path},
        "expect": {"status": 200},
        **extra,
    }


def _write_suite(root: Path, suite: str, cases: list[dict[str, Any]], **fields: Any) -> None:
    (root / "tests" / f"{suite}.yaml").write_text(
        json.dumps({"name": suite, **fields, "cases": cases}, indent=1)
    )


def _project(
    root: Path, suites: dict[str, list[dict[str, Any]]], *, routes: list[dict[str, Any]] = ROUTES
) -> Path:
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "e2e.yaml").write_text(
        json.dumps(
            {
                "version": "1",
                "project": {"name": "affected"},
                "mocks": {"api": {"port": 0, "routes": routes}},
                "tests": {"suites": [{"id": s, "file": f"tests/{s}.yaml"} for s in suites]},
            }
        )
    )
    for suite, cases in suites.items():
        _write_suite(root, suite, cases)
    return root


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[tuple[Project, Path]]:
    root = _project(
        tmp_path / "p",
        {
            "orders": [_case("list", "/ok/1"), _case("show", "/ok/2")],
            "stock": [_case("count", "/ok/3"), _case("levels", "/ok/4")],
        },
    )
    async with Project.open(root) as project:
        yield project, root


def _cases(run: RunResult) -> dict[str, CaseResult]:
    return {c.id: c for s in run.suites for c in s.cases}


async def test_a_run_with_affected_carries_what_no_edit_reached_naming_the_run_and_its_age(
    shop: tuple[Project, Path],
) -> None:
    project, _ = shop
    first = await project.run()
    assert first.ok and first.affected is not None and first.affected.mode == "first"
    again = await project.run(affected=True)
    assert again.ok and again.totals.total == 0 and again.totals.carried == 4
    cases = _cases(again)
    assert {c.status for c in cases.values()} == {"carried"}
    verdict = cases["orders.list"].carried
    assert verdict is not None and verdict.run_id == first.run_id and verdict.status == "passed"
    listed = {line.run_id: line for line in (await project.list_runs()).runs}
    assert verdict.started_at == listed[first.run_id].started_at and verdict.age > 0
    assert f"4 case(s) carried from run {first.run_id}" in again.summary
    assert again.affected is not None and again.affected.carried == 4
    assert [(s.run_id, s.cases) for s in again.affected.carried_from] == [(first.run_id, 4)]
    # nothing ran, nothing was recorded for these cases: their verdict is still the first run's
    third = await project.run(affected=True)
    assert {c.carried.run_id for c in _cases(third).values() if c.carried} == {first.run_id}


async def test_an_edited_suite_runs_alone_and_a_failure_is_never_carried(shop: tuple[Project, Path]) -> None:
    project, root = shop
    first = await project.run()
    _write_suite(root, "stock", [_case("count", "/ok/3"), _case("levels", "/ok/4"), _case("new", "/broken")])
    edited = await project.run(affected=True)
    cases = _cases(edited)
    assert {i for i, c in cases.items() if c.status != "carried"} == {
        "stock.count",
        "stock.levels",
        "stock.new",
    }
    assert cases["stock.new"].status == "failed"
    assert {i for i, c in cases.items() if c.status == "carried"} == {"orders.list", "orders.show"}
    assert edited.affected is not None
    assert [(c.kind, c.name, c.cases) for c in edited.affected.changes] == [("suite", "stock", 2)]
    assert edited.affected.changes[0].why == f"tests/stock.yaml changed since run {first.run_id}"
    assert edited.affected.reasons == {"never ran": 1}
    # the failure runs again; what passed in the edited run is carried from it
    again = await project.run(affected=True)
    cases = _cases(again)
    assert [i for i, c in cases.items() if c.status != "carried"] == ["stock.new"]
    assert cases["stock.count"].carried is not None and cases["stock.count"].carried.run_id == edited.run_id
    assert cases["orders.list"].carried is not None and cases["orders.list"].carried.run_id == first.run_id
    assert "carried from 2 runs" in again.summary


async def test_nothing_is_carried_across_a_change_of_e2e_yaml(shop: tuple[Project, Path]) -> None:
    project, root = shop
    await project.run()
    document = json.loads((root / "e2e.yaml").read_text())
    document["tests"]["retry"] = {"maxAttempts": 1}
    (root / "e2e.yaml").write_text(json.dumps(document))
    changed = await project.run(affected=True)
    assert changed.totals.carried == 0 and changed.totals.passed == 4
    assert changed.affected is not None and changed.affected.blocked == "e2e.yaml changed"
    assert [(c.kind, c.cases) for c in changed.affected.changes] == [("config", 4)]


async def test_a_change_of_a_mocks_routes_affects_the_cases_that_reached_it(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"api": [_case("a", "/ok/1")], "other": []})
    document = json.loads((root / "e2e.yaml").read_text())
    document["mocks"]["side"] = {
        "port": 0,
        "routes": [{"method": "GET", "path": "/x", "response": {"status": 200}}],
    }
    (root / "e2e.yaml").write_text(json.dumps(document))
    side = {
        "name": "x",
        "request": {"method": "GET", "url": "{{mocks.side.url}}/x"},
        "expect": {"status": 200},
    }
    _write_suite(root, "other", [side])
    async with Project.open(root) as project:
        await project.run()
        document["mocks"]["side"]["routes"][0]["response"] = {"status": 200, "body": {"more": True}}
        (root / "e2e.yaml").write_text(json.dumps(document))
        changed = await project.run(affected=True)
    cases = _cases(changed)
    assert cases["other.x"].status == "passed" and cases["api.a"].status == "carried"
    assert changed.affected is not None and changed.affected.blocked is None
    assert [(c.kind, c.name, c.cases) for c in changed.affected.changes] == [("mock", "side", 1)]


async def test_a_case_that_reaches_outside_the_environment_always_runs(tmp_path: Path, stub: Stub) -> None:
    root = _project(tmp_path / "p", {"mixed": [_case("inside", "/ok/1")]})
    outside = {
        "name": "outside",
        "request": {"method": "GET", "url": f"{stub.url}/doc"},
        "expect": {"status": 200},
    }
    _write_suite(root, "mixed", [_case("inside", "/ok/1"), outside])
    async with Project.open(root) as project:
        await project.run()
        again = await project.run(affected=True)
    cases = _cases(again)
    assert cases["mixed.inside"].status == "carried" and cases["mixed.outside"].status == "passed"
    assert again.affected is not None
    assert again.affected.reasons == {"it reached something outside the environment": 1}


async def test_a_pass_only_on_retry_and_a_verdict_past_affected_within_run_again(tmp_path: Path) -> None:
    retried = _case("busy", "/busy", retry={"maxAttempts": 2, "delay": "10ms"})
    root = _project(tmp_path / "p", {"s": [retried, _case("plain", "/ok/1")]})
    async with Project.open(root) as project:
        await project.run()
        again = await project.run(affected=True)
        assert _cases(again)["s.busy"].status == "passed" and _cases(again)["s.plain"].status == "carried"
        old = await project.run(affected=True, affected_within="1ms")
        assert old.totals.carried == 0
        assert old.affected is not None and old.affected.reasons["last ran over 1ms ago"] == 1
        with pytest.raises(PreflightError) as bad:
            await project.run(affected=True, affected_within="soon")
    assert bad.value.code == "INVALID_INPUT"


async def _traffic(project: Project) -> list[str]:
    journal = await project.mock_requests("api")
    return [r.path for m in journal.mocks for r in m.requests]


async def test_affected_cases_run_first_setup_and_teardown_stay_and_sequential_suites_keep_order(
    tmp_path: Path,
) -> None:
    setup = [{"request": {"method": "GET", "url": "{{mocks.api.url}}/setup"}}]
    teardown = [{"request": {"method": "GET", "url": "{{mocks.api.url}}/teardown"}}]
    root = _project(tmp_path / "p", {"calm": [], "loose": [], "strict": []})
    _write_suite(root, "calm", [_case("c1", "/ok/11"), _case("c2", "/ok/12")])
    loose = [_case("l1", "/ok/21"), _case("l2", "/ok/22"), _case("l3", "/ok/23")]
    _write_suite(root, "loose", loose, setup=setup, teardown=teardown)
    _write_suite(root, "strict", [_case("s1", "/ok/31"), _case("s2", "/ok/32")], sequential=True)
    async with Project.open(root) as project:
        await project.run()
        # a new last case in each of two suites: both suites run first, their new case first
        # unless the suite is sequential
        _write_suite(root, "loose", [*loose, _case("l4", "/ok/24")], setup=setup, teardown=teardown)
        _write_suite(
            root,
            "strict",
            [_case("s1", "/ok/31"), _case("s2", "/ok/32"), _case("s3", "/ok/33")],
            sequential=True,
        )
        edited = await project.run()
        paths = await _traffic(project)
    assert edited.ok and edited.totals.passed == 9  # ordering changes no verdict
    assert paths == [
        "/setup", "/ok/21", "/ok/22", "/ok/23", "/ok/24", "/teardown",  # loose: every case affected (its file)
        "/ok/31", "/ok/32", "/ok/33",  # strict: its own order
        "/ok/11", "/ok/12",  # calm: untouched, last
    ]  # fmt: skip
    assert edited.affected is not None and edited.affected.affected == 7 and edited.affected.considered == 9


async def test_fail_fast_stops_at_the_first_failure_which_an_affected_case_finds_first(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p", {"early": [], "later": []})
    _write_suite(root, "early", [_case("e1", "/ok/1"), _case("e2", "/ok/2")])
    _write_suite(root, "later", [_case("a", "/ok/3"), _case("b", "/ok/4")])
    async with Project.open(root) as project:
        await project.run()
        _write_suite(root, "later", [_case("a", "/ok/3"), _case("b", "/ok/4"), _case("breaks", "/broken")])
        stopped = await project.run(fail_fast=True)
        paths = await _traffic(project)
    cases = _cases(stopped)
    assert stopped.status == "failed" and stopped.totals.failed == 1
    assert paths == ["/ok/3", "/ok/4", "/broken"]  # the edited suite first; then nothing more ran
    assert stopped.affected is not None and stopped.affected.stopped_at == "later.breaks"
    [early] = [s for s in stopped.suites if s.id == "early"]
    assert early.status == "skipped" and early.warnings[0].startswith(
        "not run: the run stopped at its first failure"
    )
    assert "early.e1" not in cases


async def test_diff_between_a_run_and_its_resume_removes_nothing(shop: tuple[Project, Path]) -> None:
    project, root = shop
    _write_suite(root, "stock", [_case("count", "/ok/3"), _case("levels", "/broken")])
    first = await project.run()
    resumed = await project.resume_run(first.run_id)
    diff = await project.diff_runs(first.run_id, resumed.run_id)
    assert (
        diff.removed == [] and diff.unchanged == 3 and [c.id for c in diff.still_failing] == ["stock.levels"]
    )
    assert "0 removed, 3 unchanged (3 not run again" in diff.summary


async def test_a_resume_carries_what_passed_and_diff_calls_it_not_rerun(shop: tuple[Project, Path]) -> None:
    project, root = shop
    _write_suite(root, "stock", [_case("count", "/ok/3"), _case("levels", "/broken")])
    first = await project.run()
    assert [c.id for c in first.failures()] == ["stock.levels"]
    resumed = await project.resume_run(first.run_id)
    cases = _cases(resumed)
    assert [i for i, c in cases.items() if c.status != "carried"] == ["stock.levels"]
    assert {i for i, c in cases.items() if c.status == "carried"} == {
        "orders.list",
        "orders.show",
        "stock.count",
    }
    assert all(
        c.carried is not None and c.carried.run_id == first.run_id for c in cases.values() if c.carried
    )
    assert resumed.resume is not None and resumed.resume.still_failing == ["stock.levels"]
    assert resumed.totals.total == 1 and resumed.totals.carried == 3
    diff = await project.diff_runs(first.run_id, resumed.run_id)
    assert diff.removed == [] and diff.unchanged == 3
    assert sorted(diff.not_rerun) == ["orders.list", "orders.show", "stock.count"]
    assert [c.id for c in diff.still_failing] == ["stock.levels"]
    # a resume of the resume carries from the run that ran each case, never from the one that carried it
    twice = await project.resume_run(resumed.run_id)
    assert {c.carried.run_id for c in _cases(twice).values() if c.carried} == {first.run_id}


async def test_a_resumed_failure_carries_its_history_as_a_plain_runs_does(shop: tuple[Project, Path]) -> None:
    project, root = shop
    passed = await project.run()
    _write_suite(root, "stock", [_case("count", "/ok/3"), _case("levels", "/broken")])
    failed = await project.run()
    resumed = await project.resume_run(failed.run_id)
    [case] = resumed.failures()
    assert case.history is not None
    assert case.history.recent == "PFF"
    assert case.history.last_passed_run_id == passed.run_id
    assert case.history.failing_since_run_id == failed.run_id
    again = await Project.open(root).get_run(resumed.run_id)  # read back by another object
    assert again.failures()[0].history == case.history
