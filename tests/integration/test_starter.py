"""`preflight init` in an empty directory writes a starter that comes up offline on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.docker import force_clean, labelled

PREFLIGHT = str(Path(sys.executable).parent / "preflight")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, env=dict(os.environ), timeout=300
    )


def test_the_starter_builds_from_a_local_base_image_and_its_suite_passes(tmp_path: Path) -> None:
    project = tmp_path / f"starter-{os.getpid()}"  # its image is `<directory>-web:dev`: unique per run
    project.mkdir()
    init = _cli("init", "-C", str(project))
    assert init.returncode == 0, init.stderr[-2000:]
    assert (project / "web" / "Dockerfile").is_file()
    config = (project / "e2e.yaml").read_text(encoding="utf-8")
    [base] = [line.split('"')[1] for line in config.splitlines() if "args: {BASE:" in line]
    local = subprocess.run(["docker", "image", "inspect", base], capture_output=True)
    assert local.returncode == 0, f"the starter's base {base} is not a local image"
    try:
        done = _cli("run", "--json", "-C", str(project))
    finally:
        force_clean(project)
        subprocess.run(["docker", "image", "rm", "-f", f"{project.name}-web:dev"], capture_output=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(done.stdout)["data"]
    assert data["status"] == "passed" and data["totals"]["passed"] == 1
    assert labelled(project) == ([], [])
