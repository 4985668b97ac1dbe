"""The real `preflight` console script: exit codes, `--json` envelopes, init, schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PREFLIGHT = str(Path(sys.executable).parent / "preflight")


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )


def test_init_in_an_empty_directory_writes_a_project_that_validates(tmp_path: Path) -> None:
    done = _run("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "e2e.yaml").is_file() and (tmp_path / "tests" / "smoke.yaml").is_file()
    assert "wrote" in done.stderr
    again = _run("--json", "init", "-C", str(tmp_path))
    assert again.returncode == 0, again.stderr
    envelope = json.loads(again.stdout)
    assert envelope["success"] is True
    assert [s["name"] for s in envelope["data"]["services"]] == ["web"]
    assert [s["id"] for s in envelope["data"]["suites"]] == ["smoke"]


def test_schema_prints_json_schemas() -> None:
    e2e = _run("schema")
    test = _run("schema", "--test")
    assert e2e.returncode == test.returncode == 0
    assert json.loads(e2e.stdout)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "cases" in json.loads(test.stdout)["properties"]


def test_a_broken_config_exits_2_with_a_config_invalid_envelope(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project:\n  name: broken\nservics: []\n", encoding="utf-8")
    done = _run("--json", "init", "-C", str(tmp_path))
    assert done.returncode == 2
    envelope = json.loads(done.stdout)
    assert envelope["success"] is False
    assert envelope["error"]["code"] == "CONFIG_INVALID"
    human = _run("init", "-C", str(tmp_path))
    assert human.returncode == 2
    assert "CONFIG_INVALID" in human.stderr and human.stdout == ""


def test_a_missing_config_exits_2(tmp_path: Path) -> None:
    done = _run("--json", "init", "--config", "nope.yaml", "-C", str(tmp_path))
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "CONFIG_NOT_FOUND"


def test_usage_errors_exit_2_and_json_still_gets_an_envelope() -> None:
    plain = _run("logs")
    assert plain.returncode == 2 and "Missing argument" in plain.stderr
    with_json = _run("--json", "logs")
    assert with_json.returncode == 2
    assert json.loads(with_json.stdout)["error"]["code"] == "INVALID_INPUT"


def test_python_dash_m_runs_the_same_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "preflight_sdk", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.startswith("preflight, version ")
