"""`preflight verify --self`: preflight-mcp, started for real, matches the registry it comes from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PREFLIGHT = str(Path(sys.executable).parent / "preflight")


@pytest.mark.parametrize("extra", [[], ["--call-readonly"]], ids=["static", "with-calls"])
def test_preflight_mcp_passes_its_own_verification_without_errors_or_warnings(
    tmp_path: Path, extra: list[str]
) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: self-check}\n")
    done = subprocess.run(
        [PREFLIGHT, "verify", "--self", "--json", "-C", str(tmp_path), *extra],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)["data"]
    summary = result["summary"]
    assert (
        result["status"],
        summary["errors"],
        summary["warnings"],
        summary["missing"],
        summary["extra"],
    ) == (
        "passed",
        0,
        0,
        0,
        0,
    ), json.dumps(result, indent=2)[:4000]
    assert summary["found"] >= 14  # every operation and the seed's alias tools
    assert result["server"]["name"] == "preflight"
