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
    assert "wrote" in done.stdout
    again = _run("--json", "init", "-C", str(tmp_path))
    assert again.returncode == 0, again.stderr
    envelope = json.loads(again.stdout)
    assert envelope["success"] is True
    assert [s["name"] for s in envelope["data"]["services"]] == ["web"]
    assert [s["id"] for s in envelope["data"]["suites"]] == ["smoke"]


COMPOSE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compose"


def test_init_from_compose_writes_an_e2e_yaml_that_loads_the_compose_services(tmp_path: Path) -> None:
    source = COMPOSE_FIXTURES / "dc-deps-completed" / "compose.yaml"
    (tmp_path / "docker-compose.yml").write_bytes(source.read_bytes())
    done = _run("--json", "init", "--from-compose", "docker-compose.yml", "-C", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "e2e.yaml").read_text()
    assert "compose: docker-compose.yml" in text and "  oneshot: {}" in text
    envelope = json.loads(done.stdout)
    services = {s["name"]: s for s in envelope["data"]["services"]}
    assert list(services) == ["oneshot", "longrunning"]
    assert services["oneshot"]["kind"] == "job"
    assert not (tmp_path / "tests").exists()  # no smoke suite: the compose project has its own


def test_init_from_compose_says_what_it_sets_aside_and_refuses_with_their_lines(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_bytes(
        (COMPOSE_FIXTURES / "prest" / "docker-compose.yml").read_bytes()
    )
    done = _run("--json", "init", "--from-compose", "docker-compose.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    warnings = json.loads(done.stdout)["data"]["warnings"]
    assert any("docker-compose.yml:17: `logging` set aside" in w for w in warnings), warnings
    # A key the environment cannot honour without lying is refused, with its line.
    other = tmp_path / "other"
    other.mkdir()
    (other / "host.yml").write_text(
        "services:\n  web:\n    image: preflight-base/busybox\n    network_mode: host\n", encoding="utf-8"
    )
    refused = _run("--json", "init", "--from-compose", "host.yml", cwd=other)
    assert refused.returncode == 2
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "CONFIG_INVALID"
    lines = {(p["path"], p["line"]) for p in error["details"]["problems"]}
    assert ("$.services.web.network_mode", 4) in lines, lines


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
