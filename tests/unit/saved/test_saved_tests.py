"""Saved tests and suites through `Project` against the stub over real HTTP and the real SQLite store.

Projects here have no services, or services that are not running: a test with absolute URLs runs
without an environment, one that names a service is NOT_RUNNING.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from support.stub import MakeProject, Stub

from preflight_sdk import Project
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.store import RunStore
from preflight_sdk.store.schema import MIGRATIONS

pytestmark = pytest.mark.anyio

GOOD = {"request": {"url": "{{env.STUB}}/doc"}, "expect": {"status": 200, "body": {"name": "Widget"}}}
BAD = {"request": {"url": "{{env.STUB}}/doc"}, "expect": {"status": 200, "body": {"name": "Gadget"}}}


async def _error(call: Any) -> PreflightError:
    with pytest.raises(PreflightError) as caught:
        await call
    return caught.value


async def test_save_get_overwrite_and_list_by_tag(make_project: MakeProject) -> None:
    p = Project.open(make_project([]))
    first = await p.save_test(
        id="widget", name="the widget", test=GOOD, tags=["smoke", "doc"], description="d"
    )
    assert first.test["name"] == "the widget" and first.created_at == first.updated_at
    await p.save_test(id="other", name="other", test=GOOD, tags=["slow"])
    assert (await p.get_test("widget")) == first
    assert await p.get_test("missing") is None

    taken = await _error(p.save_test(id="widget", name="again", test=GOOD))
    assert (
        taken.code == "INVALID_INPUT"
        and "already exists" in taken.message
        and "overwrite" in (taken.hint or "")
    )

    await anyio.sleep(0.01)
    second = await p.save_test(id="widget", name="renamed", test=BAD, tags=["smoke"], overwrite=True)
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert second.name == "renamed" and second.test["expect"]["body"] == {"name": "Gadget"}

    smoke = await p.list_tests(tag="smoke")
    assert [t.id for t in smoke.tests] == ["widget"] and smoke.tests[0].last_run_status is None
    assert [t.id for t in (await p.list_tests(tag="doc")).tests] == []  # the overwrite dropped the tag
    assert [t.id for t in (await p.list_tests()).tests] == ["other", "widget"]


async def test_a_bad_definition_names_the_path_inside_test_with_a_did_you_mean(
    make_project: MakeProject,
) -> None:
    p = Project.open(make_project([]))
    error = await _error(
        p.save_test(
            id="x", name="x", test={"request": {"url": "http://h/", "methd": "GET"}, "expect": {"staus": 200}}
        )
    )
    assert error.code == "INVALID_INPUT"
    problems = {(q["path"], q.get("suggestion")) for q in (error.details or {})["problems"]}
    assert ("$.test.request.methd", "method") in problems and ("$.test.expect.staus", "status") in problems
    # the rules of a case, not only its types
    error = await _error(p.save_test(id="x", name="x", test={"request": {"method": "GET"}}))
    assert "$.test.request" in json.dumps(error.details) and "a request needs a `path`" in error.message
    error = await _error(p.save_test(id="x", name="x", test={"waitHealthy": True}))
    assert "may only be used in `setup`" in json.dumps(error.details)
    assert (await _error(p.save_test(id="x", name="x", test=[1]))).code == "INVALID_INPUT"  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["Upper", "-lead", "a_b", "", "x" * 101, "a/b", "a b"])
async def test_ids_are_lowercase_slugs(make_project: MakeProject, bad: str) -> None:
    p = Project.open(make_project([]))
    error = await _error(p.save_test(id=bad, name="n", test=GOOD))
    assert error.code == "INVALID_INPUT" and "not a valid id" in error.message


async def test_run_by_id_records_the_run_under_the_test(make_project: MakeProject) -> None:
    root = make_project([])
    p = Project.open(root)
    await p.save_test(id="good", name="good", test=GOOD)
    await p.save_test(id="bad", name="bad", test=BAD)
    passed = await p.run_test(test_id="good")
    failed = await p.run_test(test_id="bad")
    assert passed.status == "passed" and failed.status == "failed"
    failure = failed.failures()[0].failure
    assert failure is not None and failure.request is not None and failure.response is not None
    assert any(a.path.endswith("name") and not a.passed for a in failure.assertions)
    assert failed.failures()[0].history is not None  # the run-history block of the store
    latest = await p.get_latest_run("bad")
    assert latest is not None and latest.run_id == failed.run_id and latest.status == "failed"
    assert await p.get_latest_run("never-saved") is None
    lines = {t.id: t for t in (await p.list_tests()).tests}
    assert (lines["good"].last_run_status, lines["bad"].last_run_status) == ("passed", "failed")
    runs = await p.list_runs(test_id="bad")
    assert [r.run_id for r in runs.runs] == [failed.run_id] and runs.runs[0].test_id == "bad"
    # another process (a new Project) reads the same store
    again = await Project.open(root).get_latest_run("good")
    assert again is not None and again.run_id == passed.run_id


async def test_inline_tests_are_ad_hoc_runs_and_bad_combinations_are_refused(
    make_project: MakeProject,
) -> None:
    p = Project.open(make_project([]))
    inline = await p.run_test(test={"name": "inline", **GOOD})
    assert inline.status == "passed" and inline.selected_suites == ["adhoc"]
    assert (await p.list_runs(test_id="adhoc")).runs == []
    assert (await _error(p.run_test())).code == "INVALID_INPUT"
    both = await _error(p.run_test(test_id="x", test=GOOD))
    assert both.code == "INVALID_INPUT" and "exactly one" in both.message
    await p.save_test(id="widget-price", name="w", test=GOOD)
    unknown = await _error(p.run_test(test_id="widget-prise"))
    assert unknown.code == "TEST_NOT_FOUND" and "widget-price" in (unknown.hint or "")
    assert (unknown.details or {})["closest"] == {"widget-prise": ["widget-price"]}
    bad = await _error(p.run_test(test={"request": {"url": "http://h/"}, "expect": {"stauts": 1}}))
    assert bad.code == "INVALID_INPUT" and "$.test.expect.stauts" in bad.message


async def test_a_test_naming_a_service_needs_the_environment_an_absolute_url_does_not(
    tmp_path: Path, stub: Stub
) -> None:
    (tmp_path / "e2e.yaml").write_text(
        yaml.safe_dump(
            {
                "version": "1",
                "project": {"name": "svc"},
                "services": {
                    "api": {"build": {"image": "preflight-base/busybox"}, "container": {"ports": ["0:80"]}}
                },
            }
        )
    )
    p = Project.open(tmp_path)
    for definition in (
        {"request": {"path": "/health", "service": "api"}},
        {"request": {"url": "{{services.api.url}}/health"}},
        {"exec": {"command": "true"}},
    ):
        error = await _error(p.run_test(test={"name": "t", **definition}))
        assert error.code == "NOT_RUNNING" and "setup" in (error.hint or "")
    absolute = await p.run_test(
        test={"name": "abs", "request": {"url": f"{stub.url}/doc"}, "expect": {"status": 200}}
    )
    assert absolute.status == "passed"


async def test_saved_suites_run_by_id_in_order_and_guard_their_ids(make_project: MakeProject) -> None:
    root = make_project(
        [("file-suite", "name: f\ncases:\n  - name: c\n    request: {url: '{{env.STUB}}/doc'}\n")]
    )
    p = Project.open(root)
    await p.save_test(id="b", name="second", test=BAD)
    await p.save_test(id="a", name="first", test=GOOD)
    suite = await p.save_suite(id="smoke-saved", name="smoke", test_ids=["b", "a"])
    assert suite.test_ids == ["b", "a"]
    result = await p.run_suite("smoke-saved")
    assert [c.name for c in result.suites[0].cases] == ["second", "first"]
    assert (result.status, result.totals.passed, result.totals.failed) == ("failed", 1, 1)
    both = await p.run(filter="file-suite,smoke-saved")
    assert [s.id for s in both.suites] == ["file-suite", "smoke-saved"]
    assert [s.id for s in (await p.list_suites()).suites] == ["smoke-saved"]

    clash = await _error(p.save_suite(id="file-suite", name="x", test_ids=["a"]))
    assert clash.code == "INVALID_INPUT" and "file-suite" in clash.message
    missing = await _error(p.save_suite(id="s2", name="x", test_ids=["a", "nope", "b", "gone"]))
    assert missing.code == "TEST_NOT_FOUND" and (missing.details or {})["missing"] == ["nope", "gone"]
    taken = await _error(p.save_suite(id="smoke-saved", name="x", test_ids=["a"]))
    assert taken.code == "INVALID_INPUT" and "already exists" in taken.message
    assert (await p.save_suite(id="smoke-saved", name="x", test_ids=["a"], overwrite=True)).test_ids == ["a"]
    assert (await p.delete_suite("smoke-saved")).deleted is True
    assert (await p.delete_suite("smoke-saved")).deleted is False
    assert (await _error(p.run_suite("smoke-saved"))).code == "SUITE_NOT_FOUND"


async def test_delete_takes_the_runs_and_their_folders(make_project: MakeProject) -> None:
    root = make_project([])
    p = Project.open(root)
    await p.save_test(id="gone", name="gone", test=GOOD)
    await p.save_test(id="kept", name="kept", test=GOOD)
    runs = [await p.run_test(test_id="gone") for _ in range(2)]
    kept = await p.run_test(test_id="kept")
    folders = [root / ".preflight" / "runs" / r.run_id for r in runs]
    assert all(f.is_dir() for f in folders)
    deleted = await p.delete_test("gone")
    assert deleted.deleted is True and deleted.runs_deleted == 2
    assert not any(f.exists() for f in folders)
    assert (await p.list_runs(test_id="gone")).runs == [] and await p.get_latest_run("gone") is None
    assert (await _error(p.get_run(runs[0].run_id))).code == "RUN_NOT_FOUND"
    assert (await p.get_run(kept.run_id)).status == "passed"
    assert (await p.delete_test("gone")).deleted is False  # idempotent


async def test_export_writes_an_ordinary_suite_and_import_reads_one_back(make_project: MakeProject) -> None:
    root = make_project([])
    p = Project.open(root)
    await p.save_test(id="a", name="first", test=GOOD)
    await p.save_test(id="b", name="second", test=BAD)
    await p.save_suite(id="pair", name="pair", test_ids=["b", "a"])
    for outside in ("../elsewhere.yaml", "/tmp/elsewhere.yaml"):
        error = await _error(p.export_tests(path=outside, suite_id="pair"))
        assert error.code == "INVALID_INPUT" and "outside the project" in error.message
    exported = await p.export_tests(path="tests/pair.yaml", suite_id="pair")
    assert exported.suite_entry == {"id": "pair", "name": "pair", "runner": "yaml", "file": "tests/pair.yaml"}
    again = await _error(p.export_tests(path="tests/pair.yaml", suite_id="pair"))
    assert "already exists" in again.message

    # the exported file, added to e2e.yaml, runs as an ordinary suite (and shadows the saved one)
    await p.delete_suite("pair")
    config = yaml.safe_load((root / "e2e.yaml").read_text())
    config["tests"]["suites"].append(exported.suite_entry)
    (root / "e2e.yaml").write_text(yaml.safe_dump(config))
    ordinary = await Project.open(root).run_suite("pair")
    assert [c.name for c in ordinary.suites[0].cases] == ["second", "first"] and ordinary.totals.failed == 1

    fresh = Project.open(root)
    imported = await fresh.import_tests(path="tests/pair.yaml", tags=["imported"])
    assert imported.saved == ["second", "first"]
    refused = await _error(fresh.import_tests(path="tests/pair.yaml"))
    assert refused.code == "INVALID_INPUT" and "second" in refused.message
    lines = (await fresh.list_tests(tag="imported")).tests
    assert [t.id for t in lines] == ["first", "second"]
    assert (await fresh.run_test(test_id="first")).status == "passed"


async def test_a_store_of_schema_1_is_migrated_with_its_runs_kept(tmp_path: Path) -> None:
    path = tmp_path / ".preflight" / "preflight.db"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA application_id=0x50464C54")
    conn.execute("PRAGMA user_version=1")
    conn.execute(
        "INSERT INTO runs (run_id, kind, status, started_at) VALUES ('01M87VHJK1SN1GDNBW0D432XXB', 'test', 'passed', 'x')"
    )
    conn.commit()
    conn.close()
    store = RunStore(tmp_path)
    assert [r.run_id for r in store.runs()] == ["01M87VHJK1SN1GDNBW0D432XXB"]
    with store.db.read() as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 2
        assert db.execute("SELECT count(*) FROM saved_tests").fetchone()[0] == 0


async def test_a_saved_test_run_resumes_like_any_run(make_project: MakeProject) -> None:
    p = Project.open(make_project([]))
    await p.save_test(id="bad", name="bad", test=BAD)
    failed = await p.run_test(test_id="bad")
    resumed = await p.resume_run(failed.run_id)
    assert resumed.resumed_from == failed.run_id and [c.id for c in resumed.failures()] == ["bad.bad"]
    latest = await p.get_latest_run("bad")  # recorded in the test's history too
    assert latest is not None and latest.run_id == resumed.run_id


async def test_a_stored_test_shows_literal_secrets_redacted_and_templates_as_written(
    make_project: MakeProject,
) -> None:
    root = make_project([])
    p = Project.open(root)
    headers = {
        "Authorization": "Bearer s3cr3t-value",
        "X-Api-Key": "{{env.STUB}}",
        "Accept": "application/json",
    }
    definition = {
        "request": {"url": "{{env.STUB}}/echo", "headers": headers},
        "save": {"token": "body.token"},
    }
    saved = await p.save_test(id="secret", name="secret", test=definition)
    shown = (await p.get_test("secret")) or saved
    for view in (saved, shown):
        assert view.test["request"]["headers"] == {
            "Authorization": "[redacted]",
            "X-Api-Key": "{{env.STUB}}",
            "Accept": "application/json",
        }
        assert view.test["save"] == {"token": "body.token"}
    exported = await p.export_tests(path="tests/secret.yaml", test_ids=["secret"])
    assert "s3cr3t-value" in Path(exported.path).read_text()  # the file is the test itself
    assert (await p.run_test(test_id="secret")).status == "passed"  # the stored value is sent
