"""resume_run gives the cases it runs again the values the original run's other cases saved.

Real runs against the stub HTTP server, through the SDK, with the real SQLite store: a case that
needs a value saved by a case that passed the first time runs on its own merits; a redacted value
is never stored, so the case that saved it runs again; a failure of the resumed run has history.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.stub import MakeProject, Stub

from preflight_sdk import Project

pytestmark = pytest.mark.anyio


def _suite(account_key: str, token_key: str) -> str:
    return f"""\
name: accounts
cases:
  - name: make account
    request: {{method: POST, url: '{{{{env.STUB}}}}/items', json: {{name: alice}}}}
    expect: {{status: 201}}
    save: {{accountId: body.id}}
  - name: make token
    request: {{method: POST, url: '{{{{env.STUB}}}}/items', json: {{token: tok-1}}}}
    expect: {{status: 201}}
    save: {{authToken: body.token}}
  - name: uses account
    request: {{method: GET, url: '{{{{env.STUB}}}}/flaky/{account_key}?fail=1&account={{{{accountId}}}}'}}
    expect: {{status: 200}}
  - name: uses token
    request: {{method: GET, url: '{{{{env.STUB}}}}/flaky/{token_key}?fail=1&t={{{{authToken}}}}'}}
    expect: {{status: 200}}
  - name: checks account
    request: {{method: GET, url: '{{{{env.STUB}}}}/items/{{{{accountId}}}}'}}
    expect: {{status: 200, body: {{name: bob}}}}
"""


async def test_resumed_cases_see_the_values_earlier_cases_saved_and_fail_on_their_own_merits(
    make_project: MakeProject, stub: Stub
) -> None:
    root = make_project([("accounts", _suite(stub.key(), stub.key()))])
    project = Project.open(root)
    first = await project.run()
    assert sorted(c.id for c in first.failures()) == [
        "accounts.checks-account",
        "accounts.uses-account",
        "accounts.uses-token",
    ]

    resumed = await project.resume_run(first.run_id)

    ran = sorted(c.id for s in resumed.suites for c in s.cases if c.status != "carried")
    # `make account` is not run again: its accountId comes from the store. `make token` is: the
    # token is redacted, so it was never stored.
    assert ran == [
        "accounts.checks-account",
        "accounts.make-token",
        "accounts.uses-account",
        "accounts.uses-token",
    ]
    assert resumed.resume is not None
    assert sorted(resumed.resume.now_passing) == [
        "accounts.make-token",
        "accounts.uses-account",
        "accounts.uses-token",
    ]
    (failed,) = resumed.failures()
    assert failed.id == "accounts.checks-account" and failed.failure is not None
    # The same failure as the first time (the name differs), not an unknown variable.
    assert "unknown variable" not in (failed.failure.error or "") + failed.failure.summary
    assert any(a.path == "body.name" and not a.passed for a in failed.failure.assertions)
    assert failed.history is not None
    assert failed.history.recent == "FF" and failed.history.failing_since_run_id == first.run_id


async def test_a_redacted_value_is_never_written_to_the_store(make_project: MakeProject, stub: Stub) -> None:
    root = make_project([("accounts", _suite(stub.key(), stub.key()))])
    first = await Project.open(root).run()
    with sqlite3.connect(Path(root) / ".preflight" / "preflight.db") as conn:
        rows = conn.execute(
            "SELECT case_id, name, value, redacted FROM run_values WHERE run_id = ? ORDER BY seq",
            (first.run_id,),
        ).fetchall()
    assert [(c, n, r) for c, n, _, r in rows] == [
        ("accounts.make-account", "accountId", 0),
        ("accounts.make-token", "authToken", 1),
    ]
    assert rows[1][2] is None
    dump = b"".join(
        line.encode() for line in sqlite3.connect(Path(root) / ".preflight" / "preflight.db").iterdump()
    )
    assert b"tok-1" not in dump


async def test_resume_brings_a_removed_environment_up_again_as_run_does(tmp_path: Path) -> None:
    root = tmp_path / "mocked"
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(
        "project: {name: resumed}\n"
        "mocks:\n  api:\n    port: 0\n    routes: [{path: /ping, response: {status: 200, body: pong}}]\n"
        "tests:\n  suites: [{id: api, file: tests/api.yaml}]\n",
        encoding="utf-8",
    )
    (root / "tests" / "api.yaml").write_text(
        "name: api\ncases:\n"
        "  - {name: pings, request: {method: GET, url: '{{mocks.api.url}}/ping'}, expect: {status: 200}}\n"
        "  - {name: wrong, request: {method: GET, url: '{{mocks.api.url}}/ping'}, expect: {status: 201}}\n",
        encoding="utf-8",
    )
    first = await Project.open(root).run(keep=False)  # the environment is removed afterwards
    assert [c.id for c in first.failures()] == ["api.wrong"]
    project = Project.open(root)  # a new process, as `preflight runs resume` is
    try:
        resumed = await project.resume_run(first.run_id)
        assert resumed.status == "failed" and [c.id for c in resumed.failures()] == ["api.wrong"]
        assert resumed.failures()[0].failure is not None
        assert resumed.failures()[0].failure.response is not None
        assert resumed.failures()[0].failure.response.status == 200
        assert (await project.status()).mocks[0].status == "running"
    finally:
        await project.clean()
