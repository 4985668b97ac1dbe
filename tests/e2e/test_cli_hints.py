"""A hint is worded for the command that was run, as the real `preflight` prints it (no Docker needed).

A configuration error met by `preflight run` says to run `preflight run` again (it said `preflight
init`); with `--json` it points at `details.problems`, which the envelope holds, rather than at
lines shown with the error. A typo in a compose key gets a did-you-mean, as one in e2e.yaml does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.cli import BIN

from preflight_sdk import PreflightError, Project

pytestmark = pytest.mark.e2e


def _preflight(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root)], capture_output=True, text=True, timeout=120
    )


def _hint(done: subprocess.CompletedProcess[str]) -> str:
    return next(line for line in done.stderr.splitlines() if line.startswith("hint: "))


@pytest.mark.parametrize("command", [["run"], ["status"], ["setup"], ["runs"]])
def test_a_config_errors_hint_names_the_command_that_was_run(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: typo}\nservise:\n  image: x\n")
    done = _preflight(tmp_path, *command)
    assert done.returncode == 2, done.stderr
    hint = _hint(done)
    assert f"then run `preflight {command[0]}` again" in hint, hint
    assert "init" not in hint
    assert "problems (shown with this error)" in hint and "  - " in done.stderr


def test_with_json_the_hint_points_into_the_envelope(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: typo}\nservise:\n  image: x\n")
    done = _preflight(tmp_path, "run", "--json")
    error = json.loads(done.stdout)["error"]
    assert "details.problems" in error["hint"] and "shown with this error" not in error["hint"], error
    assert "then run `preflight run` again" in error["hint"]


@pytest.mark.anyio
async def test_the_sdk_says_try_again(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: typo}\nservise:\n  image: x\n")
    with pytest.raises(PreflightError) as caught:
        await Project.open(tmp_path).status()
    assert caught.value.hint is not None and caught.value.hint.endswith("then try again"), caught.value.hint


def test_a_compose_key_typo_gets_a_did_you_mean_at_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    image: preflight-base/busybox\n    enviroment: {A: '1'}\n    prots: ['8080:80']\n"
    )
    done = _preflight(tmp_path, "status")
    assert done.returncode == 2
    assert "unknown key `enviroment` (did you mean `environment`?)" in done.stderr, done.stderr
    assert "unknown key `prots` (did you mean `ports`?)" in done.stderr, done.stderr
