"""The files a run writes under `.preflight/runs/<runId>/`, read back with independent parsers."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import junitparser
import msgspec
import pytest
from support.events import suite_events
from support.stub import MakeProject, case, run, wire

from preflight_sdk.core.results.run import RunResult

pytestmark = pytest.mark.anyio

SUITE_A = """
name: Alpha
cases:
  - name: passes
    request: {url: "{{env.STUB}}/status/200"}
    expect: {status: 200}
  - name: fails on status
    request: {url: "{{env.STUB}}/status/404"}
    expect: {status: 200}
  - name: skipped
    skip: not yet
    request: {url: "{{env.STUB}}/status/200"}
"""
SUITE_B = """
name: Beta
cases:
  - name: fails on body
    request: {url: "{{env.STUB}}/doc"}
    expect: {body: {name: Gadget}}
"""


async def _result(make_project: MakeProject) -> tuple[Path, RunResult]:
    root = make_project([("alpha", SUITE_A), ("beta", SUITE_B)])
    return root, await run(root)


async def test_every_artifact_is_listed_with_its_digest(make_project: MakeProject) -> None:
    root, result = await _result(make_project)
    folder = root / ".preflight" / "runs" / result.run_id
    assert sorted(a.name for a in result.artifacts) == [
        "cases/alpha.fails-on-status.json",
        "cases/beta.fails-on-body.json",
        "events.ndjson",
        "junit.xml",
        "report.html",
        "report.json",
    ]
    for artifact in result.artifacts:
        data = Path(artifact.path).read_bytes()
        assert Path(artifact.path) == folder / artifact.name
        assert artifact.sha256 == hashlib.sha256(data).hexdigest()
        assert artifact.size == len(data)
    on_disk = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert on_disk == sorted(a.name for a in result.artifacts)


async def test_report_json_is_the_result_without_its_own_entry(make_project: MakeProject) -> None:
    _, result = await _result(make_project)
    report = next(a for a in result.artifacts if a.name == "report.json")
    written = json.loads(Path(report.path).read_text())
    expected = wire(result)
    expected["artifacts"] = [a for a in expected["artifacts"] if a["name"] != "report.json"]
    assert written == expected
    assert msgspec.json.decode(Path(report.path).read_bytes(), type=RunResult).run_id == result.run_id


async def test_junit_xml_matches_the_result(make_project: MakeProject) -> None:
    _, result = await _result(make_project)
    path = next(a.path for a in result.artifacts if a.name == "junit.xml")
    xml = junitparser.JUnitXml.fromfile(path)
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {"alpha", "beta"}
    assert (suites["alpha"].tests, suites["alpha"].failures, suites["alpha"].skipped) == (3, 1, 1)
    assert (suites["beta"].tests, suites["beta"].failures, suites["beta"].skipped) == (1, 1, 0)
    cases = {c.name: c for s in xml for c in s}
    assert cases["passes"].is_passed
    assert cases["skipped"].is_skipped
    [skip] = cases["skipped"].result
    assert skip.message == "not yet"
    for name in ("fails on status", "fails on body"):
        [failure] = cases[name].result
        assert isinstance(failure, junitparser.Failure)
        expected = case(result, name).failure
        assert expected is not None
        assert failure.message == expected.summary
        assert failure.text == expected.error
    assert cases["fails on status"].classname == "alpha"
    assert case(result, "fails on body").failure is not None
    assert cases["fails on body"].result[0].text == 'body.name: expected to equal "Gadget", got "Widget"'


async def test_events_are_one_json_object_per_line_in_order(make_project: MakeProject) -> None:
    _, result = await _result(make_project)
    path = next(a.path for a in result.artifacts if a.name == "events.ndjson")
    events = suite_events(path)
    assert all(isinstance(e, dict) for e in events)
    assert [(e["type"], e.get("suite"), e.get("case")) for e in events] == [
        ("suite_start", "alpha", None),
        ("case_start", "alpha", "alpha.passes"),
        ("case_end", "alpha", "alpha.passes"),
        ("case_start", "alpha", "alpha.fails-on-status"),
        ("case_end", "alpha", "alpha.fails-on-status"),
        ("case_start", "alpha", "alpha.skipped"),
        ("case_end", "alpha", "alpha.skipped"),
        ("suite_end", "alpha", None),
        ("suite_start", "beta", None),
        ("case_start", "beta", "beta.fails-on-body"),
        ("case_end", "beta", "beta.fails-on-body"),
        ("suite_end", "beta", None),
    ]
    ends = {e["case"]: e["status"] for e in events if e["type"] == "case_end"}
    assert ends == {
        "alpha.passes": "passed",
        "alpha.fails-on-status": "failed",
        "alpha.skipped": "skipped",
        "beta.fails-on-body": "failed",
    }
    assert [e["status"] for e in events if e["type"] == "suite_end"] == ["failed", "failed"]
    stamps = [datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")) for e in events]
    assert stamps == sorted(stamps)
    assert all(e["timestamp"].endswith("Z") for e in events)


async def test_each_failed_case_has_its_full_record(make_project: MakeProject) -> None:
    _, result = await _result(make_project)
    failed = case(result, "fails on status")
    assert failed.failure is not None
    record = next(a for a in result.artifacts if a.name == failed.failure.artifact)
    full = json.loads(Path(record.path).read_text())
    assert full["summary"] == failed.failure.summary
    assert full["error"] == failed.failure.error
    assert full["request"]["url"].endswith("/status/404")
    assert full["response"]["status"] == 404
    assert full["response"]["body"] == {"status": 404, "error": "boom"}
    assert full["assertions"] == wire(failed.failure.assertions)
    assert full["artifact"] == failed.failure.artifact


async def _broken_suites(make_project: MakeProject) -> RunResult:
    root = make_project(
        [
            # removes the next suite's file while the run is under way: it no longer loads
            {"id": "editor", "runner": "shell", "command": ["rm", "tests/missing.yaml"]},
            {"id": "missing", "file": "tests/missing.yaml"},
            {"id": "slow", "file": "tests/slow.yaml", "timeout": "300ms"},
            {"id": "nosetup", "file": "tests/nosetup.yaml"},
        ],
        files={
            "tests/missing.yaml": """
            name: Removed during the run
            cases:
              - name: gone
                request: {url: "{{env.STUB}}/status/200"}
            """,
            "tests/slow.yaml": """
            name: Slow
            cases:
              - name: takes too long
                request: {url: "{{env.STUB}}/slow?ms=3000"}
            """,
            "tests/nosetup.yaml": """
            name: No setup
            setup:
              - name: seed
                request: {url: "{{env.STUB}}/status/500"}
                expect: {status: 200}
            cases:
              - name: needs the seed
                request: {url: "{{env.STUB}}/status/200"}
            """,
        },
    )
    return await run(root)


async def test_suite_errors_are_error_testcases_in_junit_xml(make_project: MakeProject) -> None:
    result = await _broken_suites(make_project)
    errors = {s.id: s.error for s in result.suites if s.error}
    assert set(errors) == {"missing", "slow", "nosetup"}
    assert errors["missing"].startswith("[CONFIG_NOT_FOUND]")
    path = next(a.path for a in result.artifacts if a.name == "junit.xml")
    xml = junitparser.JUnitXml.fromfile(path)
    assert xml.errors == 3
    for suite in xml:
        if suite.name == "editor":
            assert [c.name for c in suite] == ["rm tests/missing.yaml"] and suite.errors == 0
            continue
        shown = [c for c in suite if c.name == "(suite error)"]
        assert len(shown) == 1, suite.name
        [error] = shown[0].result
        assert isinstance(error, junitparser.Error)
        assert error.message == errors[suite.name]
        assert error.text == errors[suite.name]
        assert suite.errors == 1
        assert suite.tests == len(list(suite))
    slow = next(s for s in xml if s.name == "slow")
    assert {c.name for c in slow} == {"(suite error)", "takes too long"}


async def test_a_suite_whose_file_does_not_load_has_a_start_event(make_project: MakeProject) -> None:
    result = await _broken_suites(make_project)
    path = next(a.path for a in result.artifacts if a.name == "events.ndjson")
    events = suite_events(path)
    for suite in ("missing", "slow", "nosetup"):
        assert [e["type"] for e in events if e.get("suite") == suite and "case" not in e] == [
            "suite_start",
            "suite_end",
        ]
    starts = [e["case"] for e in events if e["type"] == "case_start"]
    ends = [e["case"] for e in events if e["type"] == "case_end"]
    assert starts == ends == ["editor.rm-tests-missing-yaml", "slow.takes-too-long", "nosetup.needs-the-seed"]
