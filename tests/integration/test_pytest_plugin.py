"""The pytest plugin, run as a real pytest process on a small project against real Docker."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

# Minutes of environments set up and cleaned, case by case: these run with the slow cases, two
# files at a time (each case owns its project, so they share nothing).
pytestmark = pytest.mark.slow

PROJECT = """
project: {name: plugin-demo}
services:
  web:
    build: {image: preflight-base/busybox}
    container:
      ports: ["0:8080"]
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/health && echo web-started && exec httpd -f -v -p 8080 -h /www"]
      healthcheck: {path: /health}
mocks:
  payments:
    port: 0
    routes:
      - {method: GET, path: /status, response: {status: 200, body: {up: true}}}
"""

TESTS = """
import os, pathlib, urllib.request

def record(env, name):
    folder = pathlib.Path(os.environ["RECORD_DIR"])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"{name}-{worker}").write_text(env.status.services[0].container_id or "")

def test_web(preflight_env):
    record(preflight_env, "web")
    with urllib.request.urlopen(preflight_env.url("web") + "/health") as reply:
        assert reply.status == 200

def test_mock(preflight_env):
    record(preflight_env, "mock")
    urllib.request.urlopen(preflight_env.url("payments") + "/status?from=passing").read()
    paths = [r.path for r in preflight_env.mock("payments").requests()]
    assert "/status" in paths
    assert preflight_env.logs("web").container_status == "running"

def test_fails(preflight_env):
    record(preflight_env, "fails")
    urllib.request.urlopen(preflight_env.url("web") + "/health?from=failing").read()
    urllib.request.urlopen(preflight_env.url("payments") + "/status?from=failing").read()
    assert False, "on purpose"

def test_more(preflight_env):
    record(preflight_env, "more")
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "e2e.yaml").write_text(textwrap.dedent(PROJECT))
    (root / "tests" / "test_env.py").write_text(textwrap.dedent(TESTS))
    (tmp_path / "records").mkdir()
    yield root
    force_clean(root)


def pytest_run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RECORD_DIR": str(root.parent / "records")}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def records(root: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in (root.parent / "records").iterdir()}


def test_installed_but_off_it_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_fails():\n    assert 1 == 2\n")
    (tmp_path / "test_env.py").write_text("def test_uses_env(preflight_env):\n    pass\n")
    done = pytest_run(tmp_path, "-rA")
    assert done.returncode == 1, done.stdout
    assert "preflight_sdk" in pytest_run(tmp_path, "--trace-config", "--co", "-q").stdout  # it is loaded
    assert "preflight:" not in done.stdout.replace("preflight_env", "")
    assert "the preflight plugin is off: run `pytest --preflight=PATH`" in done.stdout
    assert not (tmp_path / ".preflight").exists()
    assert labelled(tmp_path) == ([], [])


def test_one_environment_for_the_session_with_failure_sections(project: Path) -> None:
    done = pytest_run(project, "--preflight=.", "tests")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 passed, 1 failed" in done.stdout.replace("1 failed, 3 passed", "3 passed, 1 failed")
    assert len(set(records(project).values())) == 1  # every test saw the same container
    logs = done.stdout.split("preflight: container logs (call)", 1)[1].split("preflight: mock requests", 1)[0]
    assert "response:200" in logs and "web-started" not in logs  # the failing test's window only
    mocks = done.stdout.split("preflight: mock requests (call)", 1)[1].split("short test summary", 1)[0]
    assert "GET /status?from=failing -> 200" in mocks and "from=passing" not in mocks
    assert done.stdout.count("preflight: container logs") == 1  # passing tests get no sections
    assert labelled(project) == ([], [])  # cleaned at the end


def test_xdist_workers_share_one_environment(project: Path) -> None:
    done = pytest_run(project, "-n", "2", "--preflight=.", "tests")
    assert done.returncode == 1, done.stdout + done.stderr
    seen = records(project)
    assert {name.split("-")[1] for name in seen} == {"gw0", "gw1"}, seen  # both workers ran tests
    assert len(set(seen.values())) == 1, seen  # and saw one container
    assert "preflight: mock requests (call)" in done.stdout
    state = json.loads((project / ".preflight" / "pytest-session.json").read_text())
    assert (state["workers"], state["closed"]) == ([], True)
    assert labelled(project) == ([], [])


def test_keep_leaves_the_environment_and_the_next_session_reuses_it(project: Path) -> None:
    first = pytest_run(project, "--preflight=.", "--preflight-keep", "-k", "web")
    assert first.returncode == 0, first.stdout
    (kept,) = set(records(project).values())
    containers, _ = labelled(project)
    assert len(containers) == 1 and kept.startswith(containers[0])
    (project / "pytest.ini").write_text("[pytest]\npreflight_project = .\n")  # on through the ini file
    second = pytest_run(project, "-k", "web")
    assert second.returncode == 0, second.stdout
    assert set(records(project).values()) == {kept}  # the running container was reused
    assert labelled(project) == ([], [])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_failed_setup_fails_the_session_once_with_preflights_error(
    project: Path, workers: list[str]
) -> None:
    broken = PROJECT.replace("exec httpd -f -v -p 8080 -h /www", "echo config missing >&2; exit 3")
    (project / "e2e.yaml").write_text(textwrap.dedent(broken))
    done = pytest_run(project, *workers, "--preflight=.", "tests")
    assert done.returncode != 0
    last = done.stdout.strip().splitlines()[-1]
    assert "1 error" in last and "passed" not in last, done.stdout  # one error, not one per test
    assert len(re.findall(r"^ERROR tests/", done.stdout, re.MULTILINE)) == 1, done.stdout
    assert "preflight setup failed: [CONTAINER_EXITED]" in done.stdout
    assert "hint:" in done.stdout and "config missing" in done.stdout  # the failing service's log tail
    assert labelled(project) == ([], [])


def test_the_projects_own_pytest_suites_are_left_out_with_the_command_that_runs_them(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "e2e.yaml").write_text(
        textwrap.dedent(
            """\
            project: {name: coexist}
            tests:
              suites:
                - {id: contract, runner: pytest, file: tests/test_contract.py}
            """
        )
    )
    # What a pytest suite run by preflight's runner looks like: it reads its URL at import.
    (tmp_path / "tests" / "test_contract.py").write_text(
        "import os\nURL = os.environ['PREFLIGHT_API_URL']\n\ndef test_contract():\n    assert URL\n"
    )
    (tmp_path / "tests" / "test_unit.py").write_text("def test_unit():\n    assert 1 + 1 == 2\n")

    done = pytest_run(tmp_path, "--preflight", ".", "-rA")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "KeyError" not in done.stdout
    assert "PASSED tests/test_unit.py::test_unit" in done.stdout
    assert "preflight: not collected: tests/test_contract.py (suite `contract`)" in done.stdout
    assert "`preflight run --filter contract`" in done.stdout
