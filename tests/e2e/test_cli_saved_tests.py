"""Saved tests from the real `preflight` console script, one process per command (as a shell script
would use them): save, list by tag, run by id and read back, a saved suite, overwrite, delete with
the runs, export and run the file as an ordinary suite, import; bad input with codes and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.slow

PREFLIGHT = str(Path(sys.executable).parent / "preflight")


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"path": self.path, "ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    (tmp_path / "e2e.yaml").write_text('version: "1"\nproject: {name: cli-saved}\n')
    (tmp_path / ".env").write_text(f"API=http://127.0.0.1:{server.server_port}\n")
    try:
        yield tmp_path
    finally:
        server.shutdown()
        server.server_close()


def _cli(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [PREFLIGHT, *args, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def _test(path: str, status: int) -> str:
    return json.dumps({"request": {"url": "{{env.API}}" + path}, "expect": {"status": status}})


def test_the_saved_test_flow_from_the_command_line(project: Path) -> None:
    for test_id, status, tags in (
        ("home", 200, '["smoke"]'),
        ("items", 200, '["smoke"]'),
        ("teapot", 418, '["wip"]'),
    ):
        code, reply = _cli(
            project,
            "save-test",
            test_id,
            "--name",
            f"{test_id} check",
            "--test",
            _test(f"/{test_id}", status),
            "--tags",
            tags,
        )
        assert code == 0 and reply["data"]["id"] == test_id
    code, listed = _cli(project, "list-tests", "--tag", "smoke")
    assert [t["id"] for t in listed["data"]["tests"]] == ["home", "items"]

    code, ran = _cli(project, "run-test", "--test-id", "teapot")
    assert (
        code == 1 and ran["success"] is True and ran["data"]["status"] == "failed"
    )  # exit 1: a failing verdict
    code, latest = _cli(project, "get-latest-run", "teapot")
    assert code == 1 and latest["data"]["runId"] == ran["data"]["runId"]
    code, inline = _cli(
        project, "run-test", "--test", json.dumps({"name": "inline", **json.loads(_test("/x", 200))})
    )
    assert code == 0 and inline["data"]["selectedSuites"] == ["adhoc"]

    code, _ = _cli(
        project, "save-suite", "smoke-saved", "--name", "smoke", "--test-ids", '["items", "teapot", "home"]'
    )
    assert code == 0
    code, suite = _cli(project, "run-suite", "smoke-saved")
    assert code == 1 and [c["name"] for c in suite["data"]["suites"][0]["cases"]] == [
        "items check",
        "teapot check",
        "home check",
    ]
    code, filtered = _cli(project, "test", "--filter", "smoke-saved")
    assert filtered["data"]["selectedSuites"] == ["smoke-saved"]

    _, before = _cli(project, "get-test", "home")
    _, after = _cli(project, "save-test", "home", "--name", "home", "--test", _test("/", 200), "--overwrite")
    assert after["data"]["createdAt"] == before["data"]["createdAt"] < after["data"]["updatedAt"]

    code, deleted = _cli(project, "delete-test", "teapot")
    assert code == 0 and deleted["data"] == {"deleted": True, "runsDeleted": 1}
    _, runs = _cli(project, "list-runs", "--test-id", "teapot")
    assert runs["data"]["runs"] == []
    code, nothing = _cli(project, "get-latest-run", "teapot")
    assert code == 0 and nothing == {"success": True, "timestamp": nothing["timestamp"], "data": None}

    _cli(
        project,
        "save-suite",
        "smoke-saved",
        "--name",
        "smoke",
        "--test-ids",
        '["items", "home"]',
        "--overwrite",
    )
    code, exported = _cli(project, "export-tests", "saved/smoke.yaml", "--suite-id", "smoke-saved")
    assert code == 0 and (project / "saved" / "smoke.yaml").is_file()
    _cli(project, "delete-suite", "smoke-saved")
    config = yaml.safe_load((project / "e2e.yaml").read_text())
    config["tests"] = {"suites": [exported["data"]["suiteEntry"]]}
    (project / "e2e.yaml").write_text(yaml.safe_dump(config))
    code, ordinary = _cli(project, "run-suite", "smoke-saved")
    assert code == 0 and ordinary["data"]["totals"]["passed"] == 2

    _cli(project, "delete-test", "items")
    code, imported = _cli(project, "import-tests", "saved/smoke.yaml", "--tags", '["imported"]')
    assert code == 2 and imported["error"]["details"]["existing"] == ["home"]  # all or nothing
    code, imported = _cli(project, "import-tests", "saved/smoke.yaml", "--overwrite")
    assert code == 0 and imported["data"]["saved"] == ["items-check", "home"]

    # bad input: a code, a hint and the usage exit code
    for args, expected in (
        (
            (
                "save-test",
                "x",
                "--name",
                "x",
                "--test",
                '{"request": {"url": "http://h/"}, "expect": {"statuz": 1}}',
            ),
            "INVALID_INPUT",
        ),
        (("run-test",), "INVALID_INPUT"),
        (("run-test", "--test-id", "homee"), "TEST_NOT_FOUND"),
        (("save-suite", "s", "--name", "s", "--test-ids", '["nope"]'), "TEST_NOT_FOUND"),
        (("save-suite", "smoke-saved", "--name", "s", "--test-ids", '["home"]'), "INVALID_INPUT"),
        (("export-tests", "/etc/x.yaml"), "INVALID_INPUT"),
    ):
        code, reply = _cli(project, *args)
        assert code == 2 and reply["error"]["code"] == expected and reply["error"]["hint"], args
