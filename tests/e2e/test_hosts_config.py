"""A `hosts:` name a container already resolves to something else, met by the real CLI: the run
stops before anything starts, with CONFIG_INVALID at the name's own line (no Docker needed)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.cli import BIN

CONFIG = """\
project: {name: hostclash}
services:
  api:
    build: {image: preflight-base/python}
    container: {ports: ["0:8000"]}
mocks:
  github: {port: 0}
  stripe:
    port: 0
    hosts: [api.stripe.test, NAME]
"""


@pytest.mark.parametrize(("name", "says"), [("api", "the service `api`"), ("github", "the mock `github`")])
def test_a_host_name_that_is_a_service_or_another_mock_is_config_invalid_with_its_line(
    tmp_path: Path, name: str, says: str
) -> None:
    (tmp_path / "e2e.yaml").write_text(CONFIG.replace("NAME", name), encoding="utf-8")
    done = subprocess.run(
        [str(BIN / "preflight"), "run", "-C", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120
    )
    error = json.loads(done.stdout)["error"]
    assert (done.returncode, error["code"]) == (2, "CONFIG_INVALID"), error
    (problem,) = error["details"]["problems"]
    assert (problem["path"], problem["line"]) == ("$.mocks.stripe.hosts[1]", 10)
    assert says in problem["message"] and "Traceback" not in done.stderr
    assert not (tmp_path / ".preflight" / "runs").exists()  # nothing started
