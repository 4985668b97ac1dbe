"""The run contract through the SDK, on test-only projects against the real stub HTTP server:
every run recorded, wait budgets, get_run, list_runs, cancel, resume, diff, artifacts, history,
idempotency, the event log's hash chain and trace context, and every bad argument."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import anyio
import pytest
import yaml
from support.stub import MakeProject, Stub

from preflight_sdk import Project
from preflight_sdk.core.errors import PreflightError

pytestmark = pytest.mark.anyio


def _suite(cases: str, teardown: str = "") -> str:
    return f"name: s\n{teardown}cases:\n{cases}"


def _passing(n: int) -> str:
    return "".join(
        f"  - name: ok {i}\n    request: {{method: GET, url: '{{{{env.STUB}}}}/doc'}}\n    expect: {{status: 200}}\n"
        for i in range(n)
    )


_FAILING = "  - name: broken\n    request: {method: GET, url: '{{env.STUB}}/status/500'}\n    expect: {status: 200}\n"


async def test_every_run_is_recorded_and_read_back_the_same_from_a_new_project_object(
    make_project: MakeProject,
) -> None:
    root = make_project([("api", _suite(_passing(2) + _FAILING))])
    first = await Project.open(root).run()
    assert first.status == "failed" and len(first.run_id) == 26
    again = await Project.open(root).get_run(first.run_id)  # another object: read from the store
    assert again.status == "failed" and again.totals == first.totals
    assert [c.id for c in again.failures()] == ["api.broken"]
    assert again.config_hash == first.config_hash and len(first.config_hash or "") == 64
    assert again.finished_at is not None and again.kind == "test"
    listed = await Project.open(root).list_runs()
    assert [line.run_id for line in listed.runs] == [first.run_id]
    assert listed.runs[0].totals.failed == 1


async def test_wait_zero_returns_at_once_and_get_run_follows_to_the_end(make_project: MakeProject) -> None:
    slow = "".join(
        f"  - name: slow {i}\n    request: {{method: GET, url: '{{{{env.STUB}}}}/slow?ms=300'}}\n    expect: {{status: 200}}\n"
        for i in range(4)
    )
    root = make_project([("slow", _suite(slow))])
    project = Project.open(root)
    with anyio.fail_after(2):
        started = await project.run(wait="0s")
    assert started.status in ("queued", "running") and started.progress is not None
    assert started.progress.total in (0, 4)
    partial = await project.get_run(started.run_id, wait="700ms")
    assert partial.status == "running"
    assert partial.progress is not None and 1 <= partial.progress.done < 4
    assert all(c.status == "passed" for s in partial.suites for c in s.cases)
    done = await project.get_run(started.run_id, wait="10s")
    assert done.status == "passed" and done.totals.passed == 4 and done.progress is None


async def test_cancel_keeps_the_finished_cases_runs_teardown_and_is_idempotent(
    make_project: MakeProject, stub: Stub
) -> None:
    key = stub.key()
    slow = "".join(
        f"  - name: slow {i}\n    request: {{method: GET, url: '{{{{env.STUB}}}}/slow?ms=400'}}\n    expect: {{status: 200}}\n"
        for i in range(10)
    )
    teardown = f"teardown:\n  - request: {{method: GET, url: '{{{{env.STUB}}}}/flaky/{key}?fail=0'}}\n"
    root = make_project([("slow", _suite(slow, teardown))])
    project = Project.open(root)
    started = await project.run(wait="0s")
    await anyio.sleep(1.0)
    with anyio.fail_after(5):
        stopped = await project.cancel_run(started.run_id)
    assert stopped.cancelled is True
    run = stopped.run
    assert run.status == "cancelled"
    kept = [c for s in run.suites for c in s.cases]
    assert 1 <= len(kept) < 10 and all(c.status == "passed" for c in kept)
    assert len(stub.calls[key]) == 1  # the suite's teardown ran
    again = await project.cancel_run(started.run_id)
    assert again.cancelled is False and again.run.status == "cancelled"
    # a cancelled run can be resumed: the cases it never finished run now
    resumed = await project.resume_run(started.run_id)
    assert resumed.resumed_from == started.run_id
    assert resumed.totals.total == 10 - len(kept)


async def test_resume_runs_only_what_did_not_pass_and_says_what_now_passes(
    make_project: MakeProject, stub: Stub
) -> None:
    key = stub.key()
    cases = (
        _passing(2)
        + (
            f"  - name: recovers\n    request: {{method: GET, url: '{{{{env.STUB}}}}/flaky/{key}?fail=1'}}\n"
            "    expect: {status: 200}\n"
        )
        + _FAILING
    )
    root = make_project([("api", _suite(cases))])
    project = Project.open(root)
    first = await project.run()
    assert sorted(c.id for c in first.failures()) == ["api.broken", "api.recovers"]
    resumed = await project.resume_run(first.run_id)
    ran = sorted(c.id for s in resumed.suites for c in s.cases if c.status != "carried")
    assert ran == ["api.broken", "api.recovers"]  # not the two that passed
    assert resumed.resume is not None
    assert resumed.resume.now_passing == ["api.recovers"] and resumed.resume.still_failing == ["api.broken"]
    # A resumed run's failure carries its history as a plain run's does, its own run counted.
    broken = next(c for c in resumed.failures() if c.id == "api.broken")
    assert broken.history is not None and broken.history.recent == "FF"
    assert broken.history.failing_since_run_id == first.run_id
    stored = await project.get_run(resumed.run_id)
    assert next(c for c in stored.failures() if c.id == "api.broken").history == broken.history
    listed = await project.list_runs(limit=1)
    assert listed.runs[0].resumed_from == first.run_id
    # A run named by a prefix (or `latest`) resumes that run, and says so by its whole id.
    again = await project.resume_run(resumed.run_id[:20])
    assert again.resumed_from == resumed.run_id

    passing = make_project([("ok", _suite(_passing(1)))])
    clean = await Project.open(passing).run()
    with pytest.raises(PreflightError) as nothing:
        await Project.open(passing).resume_run(clean.run_id)
    assert nothing.value.code == "INVALID_INPUT" and "nothing to resume" in nothing.value.message


async def test_diff_names_newly_failing_fixed_and_still_failing_with_a_changed_cause(
    make_project: MakeProject,
) -> None:
    root = make_project([("api", _suite(_passing(1)))])
    suite_file = root / "tests" / "api.yaml"
    project = Project.open(root)
    base = await project.run()

    def write(ok_status: int, broken_status: int, extra: str = "") -> None:
        suite_file.write_text(
            "name: s\ncases:\n"
            f"  - name: ok 0\n    request: {{method: GET, url: '{{{{env.STUB}}}}/status/{ok_status}'}}\n"
            "    expect: {status: 200}\n"
            f"  - name: broken\n    request: {{method: GET, url: '{{{{env.STUB}}}}/status/{broken_status}'}}\n"
            "    expect: {status: 200}\n" + extra
        )

    write(500, 500)
    middle = await project.run()
    write(200, 404, _passing(1).replace("ok 0", "new one"))
    head = await project.run()

    first = await project.diff_runs(base.run_id, middle.run_id)
    assert [c.id for c in first.newly_failing] == ["api.ok-0"]
    assert [c.id for c in first.added] == ["api.broken"]
    second = await project.diff_runs(middle.run_id, head.run_id)
    assert [c.id for c in second.fixed] == ["api.ok-0"]
    assert [c.id for c in second.still_failing] == ["api.broken"]
    assert second.still_failing[0].cause_changed is True  # 500 then 404
    assert "status 500" in (second.still_failing[0].base_cause or "")
    assert "status 404" in (second.still_failing[0].head_cause or "")
    assert [c.id for c in second.added] == ["api.new-one"]
    reverse = await project.diff_runs(head.run_id, middle.run_id)
    assert [c.id for c in reverse.removed] == ["api.new-one"]


async def test_each_failure_carries_its_history_and_flakiness(make_project: MakeProject, stub: Stub) -> None:
    key = stub.key()
    cases = (
        f"  - name: wobbly\n    request: {{method: GET, url: '{{{{env.STUB}}}}/poll/{key}?ready=2&failAt=3'}}\n"
        "    expect: {status: 200, body: {state: done}}\n" + _FAILING
    )
    root = make_project([("api", _suite(cases))])
    project = Project.open(root)
    one = await project.run()  # wobbly: pending (fails); broken fails
    two = await project.run()  # wobbly: done (passes)
    three = await project.run()  # wobbly: failed
    wobbly = next(c for c in three.failures() if c.id == "api.wobbly")
    broken = next(c for c in three.failures() if c.id == "api.broken")
    assert wobbly.history is not None and broken.history is not None
    assert wobbly.history.recent == "FPF" and wobbly.history.flaky is True
    assert wobbly.history.last_passed_run_id == two.run_id
    assert wobbly.history.failing_since_run_id == three.run_id
    assert broken.history.recent == "FFF" and broken.history.flaky is False
    assert broken.history.last_passed_run_id is None
    assert broken.history.failing_since_run_id == one.run_id
    stored = await Project.open(root).get_run(three.run_id)
    assert next(c for c in stored.failures() if c.id == "api.wobbly").history == wobbly.history


async def test_an_idempotency_key_returns_the_same_run_and_conflicts_on_another_request(
    make_project: MakeProject,
) -> None:
    root = make_project([("a", _suite(_passing(1))), ("b", _suite(_passing(1)))])
    project = Project.open(root)
    first = await project.run(filter="a", idempotency_key="task-42")
    again = await project.run(filter="a", idempotency_key="task-42")
    assert again.run_id == first.run_id and again.status == "passed"
    assert len((await project.list_runs()).runs) == 1
    with pytest.raises(PreflightError) as conflict:
        await project.run(filter="b", idempotency_key="task-42")
    assert conflict.value.code == "IDEMPOTENCY_CONFLICT"
    assert conflict.value.details == {"runId": first.run_id, "status": "passed"}


async def test_the_event_log_is_a_hash_chain_with_one_span_per_case(make_project: MakeProject) -> None:
    root = make_project([("api", _suite(_passing(2) + _FAILING))])
    project = Project.open(root)
    result = await project.run()
    artifact = await project.get_artifact(result.run_id, "events.ndjson")
    raw = Path(root, ".preflight", "runs", result.run_id, "events.ndjson").read_bytes()
    assert artifact.encoding == "utf-8" and artifact.sha256 == hashlib.sha256(raw).hexdigest()
    events = [json.loads(line) for line in artifact.content.splitlines()]
    previous = "0" * 64
    for event in events:
        assert event["prevHash"] == previous and event["runId"] == result.run_id
        body = {k: v for k, v in event.items() if k != "hash"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        assert event["hash"] == hashlib.sha256(canonical).hexdigest()
        previous = event["hash"]
    types = [e["type"] for e in events]
    assert types[0] == "RUN_CREATED" and types[-1] == "RUN_COMPLETED"
    for needed in ("RUN_STATE_CHANGED", "PHASE_STARTED", "PHASE_FINISHED", "SUITE_STARTED", "SUITE_FINISHED",
                   "CASE_STARTED", "CASE_FINISHED", "CASE_FAILED", "ARTIFACT_WRITTEN"):  # fmt: skip
        assert needed in types, needed
    start = next(e for e in events if e["type"] == "CASE_STARTED" and e["case"] == "api.broken")
    end = next(e for e in events if e["type"] == "CASE_FAILED")
    suite = next(e for e in events if e["type"] == "SUITE_STARTED")
    assert start["spanId"] == end["spanId"] and end["parentSpanId"] == suite["spanId"]
    assert {e["traceId"] for e in events} == {result.trace_id}
    # tampering with one line breaks the chain from there on
    tampered = dict(events[3], ts="2000-01-01T00:00:00.000Z")
    body = {k: v for k, v in tampered.items() if k != "hash"}
    assert (
        hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        != events[3]["hash"]
    )


async def test_requests_and_processes_carry_the_case_trace_context(
    make_project: MakeProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent_trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    monkeypatch.setenv("TRACEPARENT", f"00-{parent_trace}-00f067aa0ba902b7-01")
    cases = (
        "  - name: echo\n    request: {method: GET, url: '{{env.STUB}}/echo'}\n"
        "    expect: {status: 200}\n    save: {sent: body.headers.traceparent}\n"
    )
    root = make_project(
        [
            ("api", _suite(cases)),
            {"id": "sh", "runner": "shell", "command": ["sh", "-c", "echo $TRACEPARENT > tp.txt"]},
        ]
    )
    project = Project.open(root)
    result = await project.run()
    assert result.status == "passed" and result.trace_id == parent_trace
    events = [
        json.loads(x)
        for x in (await project.get_artifact(result.run_id, "events.ndjson")).content.splitlines()
    ]
    created = events[0]
    assert created["parentSpanId"] == "00f067aa0ba902b7"
    case_span = next(e["spanId"] for e in events if e["type"] == "CASE_STARTED" and e["case"] == "api.echo")
    report = json.loads((await project.get_artifact(result.run_id, "report.json")).content)
    assert report["traceId"] == parent_trace
    shell = (root / "tp.txt").read_text().strip()
    assert shell.startswith(f"00-{parent_trace}-") and shell.endswith("-01")
    assert case_span not in shell  # the shell suite's own span, not the YAML case's


async def test_artifacts_resolve_only_inside_the_run_folder(
    make_project: MakeProject, tmp_path: Path
) -> None:
    root = make_project([("api", _suite(_FAILING))])
    project = Project.open(root)
    result = await project.run()
    case_file = await project.get_artifact(result.run_id, "cases/api.broken.json")
    assert case_file.content_type == "application/json" and json.loads(case_file.content)["summary"]
    folder = root / ".preflight" / "runs" / result.run_id
    (folder / "blob.bin").write_bytes(bytes(range(256)))
    binary = await project.get_artifact(result.run_id, "blob.bin")
    assert binary.encoding == "base64" and binary.size == 256
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.symlink(secret, folder / "link.txt")
    for name in ("../../../e2e.yaml", str(secret), "link.txt", "cases/../../x"):
        with pytest.raises(PreflightError) as bad:
            await project.get_artifact(result.run_id, name)
        assert bad.value.code == "INVALID_INPUT", name
    with pytest.raises(PreflightError) as missing:
        await project.get_artifact(result.run_id, "nope.json")
    assert missing.value.code == "ARTIFACT_NOT_FOUND"
    assert "report.json" in missing.value.details["artifacts"]  # type: ignore[index]
    page = await project.get_artifact(result.run_id, "report.json", offset=0, limit=100)
    assert len(page.content) == 100 and page.next_offset == 100


async def test_bad_arguments_get_clear_codes(make_project: MakeProject) -> None:
    root = make_project([("api", _suite(_passing(1)))])
    project = Project.open(root)
    done = await project.run()
    cases = [
        (project.get_run("not-a-run"), "INVALID_INPUT"),
        (project.get_run(done.run_id, wait="-1s"), "INVALID_INPUT"),
        (project.get_run(done.run_id, wait="25h"), "INVALID_INPUT"),
        (project.run(wait="forever"), "INVALID_INPUT"),
        (project.list_runs(limit=-1), "INVALID_INPUT"),
        (project.list_runs(status="great"), "INVALID_INPUT"),
        (project.cancel_run("01ARZ3NDEKTSV4RRFFQ69G5FAV"), "RUN_NOT_FOUND"),
        (project.diff_runs(done.run_id, "nope"), "INVALID_INPUT"),
        (project.run(idempotency_key=""), "INVALID_INPUT"),
    ]
    for call, code in cases:
        with pytest.raises(PreflightError) as error:
            await call
        assert error.value.code == code
    with pytest.raises(PreflightError) as unknown:
        await project.get_run("01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert unknown.value.code == "RUN_NOT_FOUND" and unknown.value.details == {"newest": [done.run_id]}
    # a run of another project is not found here
    other = make_project([("api", _suite(_passing(1)))])
    with pytest.raises(PreflightError) as foreign:
        await Project.open(other).get_run(done.run_id)
    assert foreign.value.code == "RUN_NOT_FOUND"


async def test_list_filters_and_pages(make_project: MakeProject) -> None:
    root = make_project([("a", _suite(_passing(1))), ("b", _suite(_FAILING))])
    project = Project.open(root)
    ids = [(await project.run(filter=f)).run_id for f in ("a", "b", "a", "a,b")]
    assert [r.run_id for r in (await project.list_runs()).runs] == ids[::-1]
    assert [r.run_id for r in (await project.list_runs(status="failed")).runs] == [ids[3], ids[1]]
    assert [r.run_id for r in (await project.list_runs(suite="b")).runs] == [ids[3], ids[1]]
    page = await project.list_runs(limit=3)
    assert page.next_before == ids[1]
    rest = await project.list_runs(limit=3, before=page.next_before)
    assert [r.run_id for r in rest.runs] == [ids[0]] and rest.next_before is None
    assert (await project.list_runs(kind="build")).runs == []


async def test_retention_keeps_the_newest_runs_and_prune_deletes_folders(make_project: MakeProject) -> None:
    root = make_project([("a", _suite(_passing(1)))])
    e2e = root / "e2e.yaml"
    document = yaml.safe_load(e2e.read_text())
    e2e.write_text(yaml.safe_dump({**document, "history": {"keep": 3}}))
    project = Project.open(root)
    ids = [(await project.run()).run_id for _ in range(5)]
    kept = [r.run_id for r in (await project.list_runs()).runs]
    assert kept == ids[:1:-1]
    assert not (root / ".preflight" / "runs" / ids[0]).exists()
    pruned = await project.prune_runs(keep=1)
    assert pruned.deleted == ids[2:4][::-1] or sorted(pruned.deleted) == sorted(ids[2:4])
    assert pruned.remaining == 1 and (root / ".preflight" / "runs" / ids[4]).is_dir()


async def test_a_broken_store_never_costs_the_result(make_project: MakeProject) -> None:
    root = make_project([("a", _suite(_passing(1)))])
    (root / ".preflight").mkdir(exist_ok=True)
    (root / ".preflight" / "preflight.db").mkdir()  # not even a file
    result = await Project.open(root).run()
    assert result.status == "passed" and result.totals.passed == 1
    assert any("run store" in w for w in result.warnings)


async def test_a_corrupt_store_is_moved_aside_with_a_warning(make_project: MakeProject) -> None:
    root = make_project([("a", _suite(_passing(1)))])
    (root / ".preflight").mkdir(exist_ok=True)
    (root / ".preflight" / "preflight.db").write_bytes(b"this is not sqlite" * 100)
    result = await Project.open(root).run()
    assert result.status == "passed"
    assert any("moved aside" in w for w in result.warnings)
    aside = list((root / ".preflight").glob("preflight.db.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not sqlite")
    assert [r.run_id for r in (await Project.open(root).list_runs()).runs] == [result.run_id]
