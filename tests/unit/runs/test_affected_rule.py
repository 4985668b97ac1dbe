"""The affected rule on its own: which cases an edit can affect, from what each case touched and the
inputs of the run that last ran it (no store, no engine: values in, decisions out)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import msgspec

from preflight_sdk.config import load_config
from preflight_sdk.runs.affected.graph import Graph, configured_edges
from preflight_sdk.runs.affected.inputs import RunInputs, encode_inputs
from preflight_sdk.runs.affected.rule import Candidate, CaseDecision, decide
from preflight_sdk.store import LatestCaseRow

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DAY = 86_400_000
BEFORE = RunInputs(
    config="c1",
    engine="docker (default)",
    services={"orders": "o1", "inventory": "i1", "db": "d1"},
    mocks={"payments": "p1"},
    suites={"orders": "s1", "inventory": "s2"},
)


def _row(
    case: str, suite: str, *, touches: list[str] | None, status: str = "passed", **changes: object
) -> LatestCaseRow:
    values: dict[str, object] = {
        "case_id": case,
        "suite": suite,
        "name": case,
        "status": status,
        "duration_ms": 3,
        "touches": touches,
        "run_id": "01RUN0000000000000000000AA",
        "started_at": (NOW - timedelta(minutes=5)).isoformat().replace("+00:00", "Z"),
        "inputs": encode_inputs(BEFORE),
    }
    values.update(changes)
    return msgspec.convert(values, LatestCaseRow)


def _decide(
    rows: list[LatestCaseRow], now: RunInputs, graph: Graph | None = None, **options: object
) -> dict[str, CaseDecision]:
    candidates = [Candidate(id=r.case_id, suite=r.suite, name=r.name) for r in rows]
    decided = decide(
        candidates,
        {r.case_id: r for r in rows},
        now,
        graph or Graph(),
        started=NOW,
        within_ms=int(options.pop("within_ms", DAY)),  # type: ignore[call-overload]
        **options,  # type: ignore[arg-type]
    )
    return {d.id: d for d in decided}


def test_a_rebuilt_service_affects_the_cases_that_reached_it_and_carries_the_others() -> None:
    rows = [
        _row("orders.create", "orders", touches=["service:orders"]),
        _row("inventory.stock", "inventory", touches=["service:inventory"]),
    ]
    now = msgspec.structs.replace(BEFORE, services={**BEFORE.services, "orders": "o2"})
    decided = _decide(rows, now)
    assert decided["orders.create"].affected and decided["orders.create"].change == "service:orders"
    kept = decided["inventory.stock"]
    assert not kept.affected and kept.carried is not None
    assert kept.carried.run_id == "01RUN0000000000000000000AA" and kept.carried.status == "passed"
    assert kept.carried.age == 5 * 60 * 1000


def test_a_change_travels_to_dependents_by_depends_on_by_names_in_the_environment_and_by_traffic() -> None:
    rows = [
        _row("orders.create", "orders", touches=["service:orders"]),
        _row("orders.pay", "orders", touches=["service:orders"]),
        _row("inventory.stock", "inventory", touches=["service:inventory"]),
    ]
    graph = Graph({"service:orders": ["service:inventory"]})
    decided = _decide(
        rows, msgspec.structs.replace(BEFORE, services={**BEFORE.services, "inventory": "i2"}), graph
    )
    assert all(d.affected for d in decided.values())
    assert decided["orders.create"].change == "service:inventory"  # named by what changed
    # a mock's routes: the service that called it (seen in the traffic) carries the change on
    graph = Graph()
    graph.observe(["service:orders", "mock:payments"])
    changed = msgspec.structs.replace(BEFORE, mocks={"payments": "p2"})
    decided = _decide(rows, changed, graph)
    assert decided["orders.create"].affected and decided["orders.create"].change == "mock:payments"
    assert not decided["inventory.stock"].affected


def test_configured_edges_come_from_depends_on_environment_and_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "e2e.yaml").write_text(
        """
version: "1"
project: {name: graph}
services:
  db: {build: {image: "preflight-base/busybox:latest"}}
  inventory:
    build: {image: "preflight-base/busybox:latest"}
    dependsOn: [db]
  orders:
    build: {image: "preflight-base/busybox:latest"}
    container:
      environment: {INVENTORY_URL: "http://inventory:8000", PAYMENTS: "{{mocks.payments.url}}"}
  reporter:
    build: {image: "preflight-base/busybox:latest"}
    container: {command: [sh, -c, "wget -qO- http://orders:8000/report"]}
mocks:
  payments: {port: 0}
"""
    )
    graph = configured_edges(load_config(tmp_path))
    assert graph.depends["service:inventory"] == {"service:db"}
    assert graph.depends["service:orders"] == {"service:inventory", "mock:payments"}
    assert graph.depends["service:reporter"] == {"service:orders"}
    reached = graph.dependents(["service:db"])
    assert set(reached) == {"service:db", "service:inventory", "service:orders", "service:reporter"}
    assert reached["service:reporter"] == "service:db"


def test_e2e_yaml_the_engine_and_a_suites_own_files_affect_every_case_they_hold() -> None:
    rows = [
        _row("orders.create", "orders", touches=["service:orders"]),
        _row("inventory.stock", "inventory", touches=["service:inventory"]),
    ]
    assert {d.change for d in _decide(rows, msgspec.structs.replace(BEFORE, config="c2")).values()} == {
        "config"
    }
    assert {d.change for d in _decide(rows, msgspec.structs.replace(BEFORE, engine="podman")).values()} == {
        "engine"
    }
    edited = _decide(rows, msgspec.structs.replace(BEFORE, suites={"orders": "s9", "inventory": "s2"}))
    assert edited["orders.create"].change == "suite:orders"
    assert not edited["inventory.stock"].affected


def test_what_cannot_be_known_always_runs() -> None:
    rows = [
        _row("a.never", "orders", touches=["service:orders"]),
        _row("a.unknown", "orders", touches=None),
        _row("a.outside", "orders", touches=["unknown"]),
        _row("a.old-record", "orders", touches=["service:orders"], inputs=None),
        _row("a.everything", "orders", touches=["all"]),
        _row("a.nothing-changed", "orders", touches=["service:orders"]),
    ]
    decided = decide(
        [Candidate(id=r.case_id, suite=r.suite, name=r.name) for r in rows],
        {r.case_id: r for r in rows[1:]},  # a.never has no record
        BEFORE,
        Graph(),
        started=NOW,
        within_ms=DAY,
    )
    reasons = {d.id: (d.affected, d.reason) for d in decided}
    assert reasons["a.never"] == (True, "never ran")
    assert reasons["a.unknown"] == (True, "what it touched is not known")
    assert reasons["a.outside"] == (True, "it reached something outside the environment")
    assert reasons["a.old-record"] == (True, "its last run recorded no inputs")
    # `all` (a pytest case without `touches:`) depends on every service and mock: nothing changed here
    assert reasons["a.everything"] == (False, None) and reasons["a.nothing-changed"] == (False, None)
    changed = _decide(rows[4:], msgspec.structs.replace(BEFORE, services={**BEFORE.services, "db": "d2"}))
    assert changed["a.everything"].affected and not changed["a.nothing-changed"].affected


def test_a_failure_a_skip_a_flaky_pass_and_an_old_verdict_are_never_carried() -> None:
    rows = [
        _row("a.failed", "orders", touches=["service:orders"], status="failed"),
        _row("a.skipped", "orders", touches=["service:orders"], status="skipped"),
        _row("a.flaky", "orders", touches=["service:orders"], passed_on_retry=True),
        _row("a.old", "orders", touches=["service:orders"], started_at="2026-11-29T12:00:00Z"),
    ]
    decided = _decide(rows, BEFORE)
    assert {d.id: d.reason for d in decided.values()} == {
        "a.failed": "did not pass last time",
        "a.skipped": "did not pass last time",
        "a.flaky": "passed only on a retry last time",
        "a.old": "last ran over 1d ago",
    }
    assert all(d.carried is None for d in decided.values())
    assert not _decide(rows[3:], BEFORE, within_ms=3 * DAY)["a.old"].affected


def test_in_a_sequential_suite_every_case_after_an_affected_one_runs_too() -> None:
    rows = [
        _row("flow.one", "flow", touches=["service:inventory"]),
        _row("flow.two", "flow", touches=["service:orders"]),
        _row("flow.three", "flow", touches=["service:inventory"]),
    ]
    now = msgspec.structs.replace(BEFORE, services={**BEFORE.services, "orders": "o2"})
    plain = _decide(rows, now)
    assert [plain[c].affected for c in ("flow.one", "flow.two", "flow.three")] == [False, True, False]
    ordered = _decide(rows, now, sequential=frozenset({"flow"}))
    assert [ordered[c].affected for c in ("flow.one", "flow.two", "flow.three")] == [False, True, True]
    assert ordered["flow.three"].reason == "an earlier case of its sequential suite runs"


def test_a_service_s_inputs_include_the_host_files_it_mounts_and_each_suite_s_own_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from preflight_sdk.lifecycle.images.inputs import InputsRecord, ServiceInputs, write_record
    from preflight_sdk.runs.affected.inputs import current_inputs

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('one')\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "a.yaml").write_text(
        "name: a\ncases:\n  - {name: x, request: {url: '{{env.TARGET}}/x'}}\n"
    )
    (tmp_path / "tests" / "b.yaml").write_text(
        "name: b\ncases:\n  - {name: y, request: {url: 'http://h/y'}}\n"
    )
    (tmp_path / "e2e.yaml").write_text(
        """
version: "1"
project: {name: mounts}
services:
  api:
    build: {image: "preflight-base/python:latest"}
    container: {volumes: ["./src:/app:ro", "data:/data"]}
    contract: openapi.json
tests:
  suites: [{id: a, file: tests/a.yaml}, {id: b, file: tests/b.yaml}]
"""
    )
    document = {"openapi": "3.0.3", "info": {"title": "api", "version": "1"}, "paths": {}}
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    loaded = load_config(tmp_path, environ={"TARGET": "http://one"})
    write_record(tmp_path, InputsRecord(services={"api": ServiceInputs(digest="spec", parts={})}))
    before = current_inputs(loaded, "docker", running=True)
    assert current_inputs(loaded, "docker", running=True) == before  # the same files, the same inputs
    (tmp_path / "src" / "app.py").write_text("print('two')\n")
    after = current_inputs(loaded, "docker", running=True)
    assert after.services["api"] != before.services["api"] and after.suites == before.suites
    # a suite's digest holds the values of the `env.X` names its file uses, and only its own files
    other = current_inputs(load_config(tmp_path, environ={"TARGET": "http://two"}), "docker", running=True)
    assert other.suites["a"] != after.suites["a"] and other.suites["b"] == after.suites["b"]
    assert current_inputs(loaded, "docker", running=False).services == {}
    # its contract checks its answers: an edit of the document changes the service's inputs
    document["paths"] = {"/x": {"get": {"responses": {"200": {"description": "ok"}}}}}
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    edited = current_inputs(load_config(tmp_path, environ={"TARGET": "http://one"}), "docker", running=True)
    assert edited.services["api"] != after.services["api"]
