"""What a person reads from `preflight` (the real console script; a mocks-only project, no Docker):
root config errors only, JSON spellings in assertion messages, and the real cause of a case that
could not send its request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PREFLIGHT = str(Path(sys.executable).parent / "preflight")

CONFIG = """\
project: {name: messages}
mocks:
  api:
    port: 0
    routes:
      - {method: POST, path: /notes, response: {status: 500, body: {error: boom}}}
      - {path: /flags, response: {body: {enabled: true, count: 0}}}
tests:
  suites:
    - {id: notes, file: tests/notes.yaml}
"""

SUITE = """\
name: notes
cases:
  - name: create note
    request: {method: POST, url: "{{mocks.api.url}}/notes", json: {text: hi}}
    expect: {status: 201}
    save: {noteId: body.id}
  - name: read note
    request: {method: GET, url: "{{mocks.api.url}}/notes/{{noteId}}"}
    expect: {status: 200}
  - name: flags
    request: {method: GET, url: "{{mocks.api.url}}/flags"}
    expect:
      body: {enabled: false, count: null, absent: 1}
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )


def _cases(project: Path) -> dict[str, Any]:
    done = _cli("run", "--json", "-C", str(project))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    suites = json.loads(done.stdout)["data"]["suites"]
    return {case["name"]: case for case in suites[0]["cases"]}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "tests" / "notes.yaml").write_text(SUITE, encoding="utf-8")
    return root


def test_a_case_that_sent_nothing_names_the_case_that_should_have_saved_its_value(tmp_path: Path) -> None:
    failure = _cases(_project(tmp_path))["read note"]["failure"]
    assert "case `create note`, which should have saved `noteId`, failed" in failure["summary"]
    assert failure["suggestedFix"].startswith("fix case `create note` first")
    assert "diagnostics" not in failure and "request" not in failure


def test_assertion_messages_use_json_spellings_and_one_wording_for_missing(tmp_path: Path) -> None:
    failure = _cases(_project(tmp_path))["flags"]["failure"]
    messages = [a["message"] for a in failure["assertions"] if not a["passed"]]
    assert messages == [
        "body.enabled: expected to equal false, got true",
        "body.count: expected to equal null, got 0",
        "body.absent: expected to equal 1, got <missing>",
    ]
    text = json.dumps(failure)
    assert not any(word in text for word in ("False", "True", "None", "nothing (missing)"))


def test_a_typo_in_a_service_is_the_only_error_not_its_dependants(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        """\
project: {name: typo}
services:
  kv:
    build: {image: "preflight-base/busybox:latest"}
    container: {healthchek: {tcp: 6379}}
  api:
    build: {image: "preflight-base/busybox:latest"}
    dependsOn: [kv]
  web:
    build: {image: "preflight-base/busybox:latest"}
    dependsOn: [kv, cache]
""",
        encoding="utf-8",
    )
    done = _cli("init", "--json", "-C", str(tmp_path))
    problems = json.loads(done.stdout)["error"]["details"]["problems"]
    assert [(p["path"], p["message"]) for p in problems] == [
        ("$.services.kv.container.healthchek", "unknown key `healthchek`"),
        ("$.services.web.dependsOn[1]", "`cache` is not a service"),
    ]


def test_the_report_shows_what_the_mock_answered(tmp_path: Path) -> None:
    failure = _cases(_project(tmp_path))["create note"]["failure"]
    [traffic] = failure["diagnostics"]["mockRequests"]
    [request] = traffic["requests"]
    assert request["matchedRoute"] == "POST /notes"
    assert request["response"]["status"] == 500 and request["response"]["body"] == {"error": "boom"}
