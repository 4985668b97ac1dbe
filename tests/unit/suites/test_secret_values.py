"""Secret values stay out of a run's every output: a shell command's `password=` (which names the
case) and a suite's secret-named `env:` value in an assertion message and captured output, in the
result, report.json, junit.xml, events.ndjson and cases/*.json (real child processes, no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import msgspec
import pytest
from support.stub import e2e_yaml

from preflight_sdk import Project
from preflight_sdk.core.redaction import REDACTED

SECRETS = ("pysuite-tok-V3n8Kd", "shell-pw-R4t9Zm")
TEST_FILE = """
import os


def test_token_is_the_expected_one():
    print("using", os.environ["PYSUITE_TOKEN"])
    assert os.environ["PYSUITE_TOKEN"] == "another-token"
"""
SUITES = [
    {"id": "py", "runner": "pytest", "file": "tests/test_token.py", "env": {"PYSUITE_TOKEN": SECRETS[0]}},
    {
        "id": "sh",
        "runner": "shell",
        "shell": True,
        "command": f"echo connecting with password={SECRETS[1]}; echo refused {SECRETS[1]}; exit 3",
    },
]


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s.lower() in text.lower()]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("secret-values")
    (root / "tests").mkdir()
    (root / "tests" / "test_token.py").write_text(TEST_FILE)
    (root / "e2e.yaml").write_text(e2e_yaml(SUITES))

    async def go() -> str:
        result = await Project.open(root).run()
        return msgspec.json.encode(result).decode()

    return root, anyio.run(go)


def test_a_shell_command_names_its_case_without_its_password(ran: tuple[Path, str]) -> None:
    report = json.loads(ran[1])
    [case] = next(s for s in report["suites"] if s["id"] == "sh")["cases"]
    assert case["name"] == f"echo connecting with password={REDACTED}; echo refused {REDACTED}; exit 3"
    assert case["id"].startswith("sh.echo-connecting-with-password-redacted-echo-refused-redacted")
    assert f"refused {REDACTED}" in case["failure"]["output"]


def test_a_suite_env_secret_is_masked_in_the_assertion_message(ran: tuple[Path, str]) -> None:
    report = json.loads(ran[1])
    [case] = next(s for s in report["suites"] if s["id"] == "py")["cases"]
    assert case["name"] == "tests/test_token.py::test_token_is_the_expected_one"
    assert f"assert '{REDACTED}' == 'another-token'" in case["failure"]["error"]


def test_no_secret_value_in_the_result_or_any_run_file(ran: tuple[Path, str]) -> None:
    root, result = ran
    assert _leaks(result) == []
    [folder] = (root / ".preflight" / "runs").iterdir()
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert {"report.json", "junit.xml", "events.ndjson"} <= {p.name for p in files}
    assert len([p for p in files if p.parent.name == "cases"]) == 2
    for path in files:
        assert _leaks(path.name + path.read_text(encoding="utf-8")) == [], path.name
