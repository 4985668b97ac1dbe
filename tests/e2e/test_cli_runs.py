"""`preflight runs` in a terminal: the list, a diff, a resume, and the operation log, as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent / "preflight"


def _project(root: Path) -> Path:
    root.mkdir()
    config = {
        "project": {"name": "cli-runs"},
        "tests": {
            "suites": [
                {"id": "good", "runner": "shell", "command": ["true"]},
                {"id": "flip", "runner": "shell", "command": ["sh", "-c", "test -f fixed"]},
            ]
        },
    }
    (root / "e2e.yaml").write_text(yaml.safe_dump(config))
    return root


def _preflight(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), *args, "-C", str(root)], capture_output=True, text=True, timeout=120)


def _json(root: Path, *args: str) -> dict[str, Any]:
    done = _preflight(root, *args, "--json")
    assert done.stdout, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def test_runs_lists_diffs_resumes_and_shows_every_call(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    first = _json(root, "run")
    assert first["success"] is True and first["data"]["status"] == "failed"
    (root / "fixed").write_text("")
    second = _json(root, "run")
    assert second["data"]["status"] == "passed"

    listing = _preflight(root, "runs")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0].startswith("✓ passed") and second["data"]["runId"] in lines[0]
    assert lines[1].startswith("✗ failed") and first["data"]["runId"] in lines[1]
    failed_only = _json(root, "runs", "--status", "failed")
    assert [r["runId"] for r in failed_only["data"]["runs"]] == [first["data"]["runId"]]

    diff = _preflight(root, "runs", "diff", first["data"]["runId"], second["data"]["runId"])
    assert diff.returncode == 0
    assert "fixed (1):" in diff.stdout and "flip." in diff.stdout

    resumed = _json(root, "runs", "resume", first["data"]["runId"])
    assert resumed["data"]["resumedFrom"] == first["data"]["runId"]
    good, flip = resumed["data"]["suites"]  # only what did not pass ran; the rest is carried
    assert good["id"] == "good" and [c["status"] for c in good["cases"]] == ["carried"]
    assert good["cases"][0]["carried"]["runId"] == first["data"]["runId"]
    assert resumed["data"]["resume"]["nowPassing"] == [c["id"] for c in flip["cases"]]

    nothing = _preflight(root, "runs", "resume", second["data"]["runId"])
    assert nothing.returncode == 2 and "nothing to resume" in nothing.stderr

    calls = _json(root, "runs", "calls")["data"]["calls"]
    names = [c["operation"] for c in calls]
    for expected in ("run", "list_runs", "diff_runs", "resume_run"):
        assert expected in names, names
    run_calls = [c for c in calls if c["operation"] == "run"]
    assert {c["runId"] for c in run_calls} == {first["data"]["runId"], second["data"]["runId"]}
    assert {c["outcome"] for c in run_calls} == {"passed", "failed"}
    failed_resume = next(c for c in calls if c["operation"] == "resume_run" and c["outcome"] == "error")
    assert failed_resume["errorCode"] == "INVALID_INPUT"


@pytest.mark.parametrize("args", [["runs", "show", "nope"], ["runs", "--limit", "0"], ["runs", "diff", "a"]])
def test_bad_arguments_exit_2_with_a_message(tmp_path: Path, args: list[str]) -> None:
    root = _project(tmp_path / "p")
    done = _preflight(root, *args)
    assert done.returncode == 2 and done.stderr.strip()
    assert "Traceback" not in done.stderr
