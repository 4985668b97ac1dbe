"""`preflight logs` (real Docker, real console script) shows a container's output under the same
redaction policy as every other output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.docker import force_clean

PREFLIGHT = str(Path(sys.executable).parent / "preflight")
CONFIG = """\
project: {name: redacted-logs}
services:
  web:
    build: {image: "preflight-base/busybox:latest"}
    container:
      command: ["sh", "-c", "echo 'connect postgres://app:pw-secret@db/x token=tok-secret user=alice' && sleep 300"]
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )


def test_logs_replace_passwords_and_tokens_in_container_output(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    try:
        setup = _cli("setup", "--json", "-C", str(tmp_path))
        assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
        logs = _cli("logs", "web", "--json", "-C", str(tmp_path))
    finally:
        _cli("clean", "-C", str(tmp_path))
        force_clean(tmp_path)
    assert logs.returncode == 0, logs.stderr[-2000:]
    assert "pw-secret" not in logs.stdout and "tok-secret" not in logs.stdout
    [line] = json.loads(logs.stdout)["data"]["lines"]
    assert line["text"] == "connect postgres://app:***@db/x token=[redacted] user=alice"
