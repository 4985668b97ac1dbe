"""What a case touched: the service or mock each step reached, the mocks its requests arrived at
(by trace context, else by time), and everything whenever that cannot be known."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from preflight_sdk.config import TestStep, load_config
from preflight_sdk.core.results.mocks import JournalEntry
from preflight_sdk.suites.environment import MockEndpoint, RunEnvironment, ServiceEndpoint
from preflight_sdk.suites.touches import Touches, step_touches

E2E = """
version: "1"
project: {name: touches}
services:
  orders: {build: {image: "preflight-base/busybox:latest"}, container: {name: orders-api}}
  inventory: {build: {image: "preflight-base/busybox:latest"}}
mocks:
  payments: {port: 0}
"""


@pytest.fixture
def env(tmp_path: Path) -> RunEnvironment:
    (tmp_path / "e2e.yaml").write_text(E2E)
    loaded = load_config(tmp_path)
    return RunEnvironment(
        loaded=loaded,
        services={
            "orders": ServiceEndpoint(
                name="orders", url="http://127.0.0.1:41001", port=41001, ports={8000: 41001, 9000: 41002},
                container_id="c1", container_name="touches-orders-1",
            ),
            "inventory": ServiceEndpoint(
                name="inventory", url="http://127.0.0.1:41003", port=41003, ports={8000: 41003}, container_id="c2"
            ),
        },
        mocks={"payments": MockEndpoint(name="payments", url="http://127.0.0.1:41009", port=41009)},
        engine=None,
    )  # fmt: skip


def _step(raw: dict[str, object]) -> TestStep:
    return msgspec.convert(raw, TestStep)


def test_each_step_touches_the_service_or_mock_it_reached(env: RunEnvironment) -> None:
    assert step_touches(_step({"request": {"path": "/x"}}), env, "inventory", "http://127.0.0.1:41003/x") == {
        "service:inventory"
    }
    # another published port of the same service, a name resolved without a URL, a mock's port
    assert step_touches(_step({"request": {"url": "x"}}), env, None, "http://localhost:41002/y") == {
        "service:orders"
    }
    assert step_touches(_step({"request": {"path": "/x", "service": "orders"}}), env, None, None) == {
        "service:orders"
    }
    assert step_touches(_step({"request": {"url": "x"}}), env, None, "http://127.0.0.1:41009/charges") == {
        "mock:payments"
    }
    # exec in a container named by its configured name; a port checked from the host
    assert step_touches(_step({"exec": {"command": "true", "container": "orders-api"}}), env, None, None) == {
        "service:orders"
    }
    assert step_touches(_step({"port": {"port": 41003}}), env, None, None) == {"service:inventory"}
    assert step_touches(_step({"waitHealthy": True}), env, None, None) == {"all"}
    # a browser step: the pages it opened, and everything (a page may fetch from any service)
    browsed = step_touches(
        _step({"browser": {"goto": "/"}}), env, "orders", None, ["http://127.0.0.1:41001/"]
    )
    assert browsed == {"page:http://127.0.0.1:41001/", "all"}


def test_what_cannot_be_known_is_unknown_never_nothing(env: RunEnvironment) -> None:
    outside = step_touches(_step({"request": {"url": "x"}}), env, None, "https://api.example.com/v1")
    assert outside == {"unknown"}
    assert step_touches(_step({"request": {"url": "x"}}), env, None, "http://127.0.0.1:5/") == {"unknown"}
    assert step_touches(_step({"exec": {"command": "true", "container": "gone"}}), env, None, None) == {
        "unknown"
    }
    # traffic over the whole run depends on every case that made it
    checked = _step({"request": {"path": "/x"}, "expect": {"mock": {"name": "payments", "since": "run"}}})
    assert step_touches(checked, env, "orders", "http://127.0.0.1:41001/x") == {"service:orders", "all"}
    own = _step({"request": {"path": "/x"}, "expect": {"mock": [{"name": "payments"}]}})
    assert step_touches(own, env, "orders", "http://127.0.0.1:41001/x") == {"service:orders", "mock:payments"}


def _entry(at: int, traceparent: str | None = None) -> JournalEntry:
    headers = {"traceparent": traceparent} if traceparent else {}
    return msgspec.convert(
        {"method": "POST", "url": "/c", "path": "/c", "query": {}, "headers": headers, "body": None,
         "status": 201, "timestamp": "", "epochMs": at},
        JournalEntry,
    )  # fmt: skip


def test_mock_requests_belong_to_the_case_their_trace_names_else_to_the_cases_running_then() -> None:
    touches = Touches()
    touches.suite_started("s", 900)
    touches.window("s.one", "s", 1000, 1100, span="a" * 16)
    touches.window("s.two", "s", 1100, 1200, span="b" * 16)
    touches.window("p.par", "p", 1050, 1250)  # a parallel suite's case, at the same time
    touches.suite_ended("s", 1400)
    touches.mock_traffic(
        "payments",
        [
            _entry(1150, f"00-{'0' * 32}-{'a' * 16}-01"),  # late, but its trace names s.one
            _entry(1180),  # s.two and the parallel case were both running
            _entry(1300),  # after the cases: the suite's teardown
        ],
        complete=True,
    )
    assert touches.of("s.one") == ["mock:payments"]
    assert touches.of("s.two") == ["mock:payments"] and touches.of("p.par") == ["mock:payments"]
    assert touches.suites["s"] == {"mock:payments"}
    assert touches.of("never.seen") == ["unknown"]


def test_a_journal_that_dropped_requests_counts_for_every_case_before_its_first_entry() -> None:
    touches = Touches()
    touches.window("s.early", "s", 1000, 1100)
    touches.window("s.late", "s", 2000, 2100)
    touches.mock_traffic("payments", [_entry(2050)], complete=False)
    assert touches.of("s.early") == ["mock:payments"] and touches.of("s.late") == ["mock:payments"]
    touches.mock_unknown("audit")
    assert touches.of("s.early") == ["mock:audit", "mock:payments"]
