"""Mock traffic in results: the window of `expect.mock` per attempt, and in pytest/shell failures.

The projects declare mocks and no services, so `setup` starts the mocks in this process without
Docker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.stub import case, environment, write_project

pytestmark = pytest.mark.anyio

# POSTs `{"n": <argv[1]>}` to the payments mock's /charges, then exits with status `argv[2]`.
POST = """
import json, os, sys, urllib.request
url = os.environ["PREFLIGHT_PAYMENTS_URL"] + "/charges"
data = json.dumps({"n": sys.argv[1]}).encode()
request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
urllib.request.urlopen(request, timeout=5).read()
sys.exit(int(sys.argv[2]))
"""


def _mocks(routes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"payments": {"port": 0, "routes": routes}}


async def test_a_retried_case_counts_only_the_mock_requests_of_its_own_attempt(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "retried",
        {
            "project": {"name": "retried"},
            "mocks": _mocks(
                [{"path": "/charges", "method": "POST", "sequence": [{"status": 503}, {"status": 200}]}]
            ),
            "tests": {"suites": [{"id": "s", "file": "tests/s.yaml"}]},
        },
        files={
            "tests/s.yaml": """
name: Retried
cases:
  - name: charge once per attempt
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
    retry: {maxAttempts: 3, delay: 10ms}
    expect:
      status: 200
      mock: {name: payments, method: POST, path: /charges, count: 1}
"""
        },
    )
    async with environment(root) as project:
        result = await project.run()
    charged = case(result, "charge once per attempt")
    assert charged.status == "passed", charged.failure
    assert charged.attempts is not None
    assert [(a.attempt, a.passed) for a in charged.attempts] == [(1, False), (2, True)]
    assert charged.attempts[0].error == "status: expected to equal 200, got 503"


async def test_a_shell_failure_lists_the_mock_requests_made_while_it_ran(tmp_path: Path) -> None:
    command = ["python3", "tests/post.py"]
    root = write_project(
        tmp_path / "shell",
        {
            "project": {"name": "shell"},
            "mocks": _mocks([{"path": "/charges", "method": "POST", "response": {"status": 201}}]),
            "tests": {
                "suites": [
                    {"id": "a", "name": "earlier", "runner": "shell", "command": [*command, "early", "0"]},
                    {"id": "b", "name": "failing", "runner": "shell", "command": [*command, "late", "3"]},
                ]
            },
        },
        files={"tests/post.py": POST},
    )
    async with environment(root) as project:
        result = await project.run()
    assert case(result, "earlier").status == "passed"
    failed = case(result, "failing")
    assert failed.failure is not None and failed.failure.diagnostics is not None
    [traffic] = failed.failure.diagnostics.mock_requests
    assert traffic.mock_name == "payments"
    # the request of the earlier suite is outside this one's window
    assert [(r.method, r.path, r.status, r.body) for r in traffic.requests] == [
        ("POST", "/charges", 201, {"n": "late"})
    ]
    record = next(a for a in result.artifacts if a.name == failed.failure.artifact)
    full = json.loads(Path(record.path).read_text())
    assert [r["body"] for r in full["diagnostics"]["mockRequests"][0]["requests"]] == [{"n": "late"}]
