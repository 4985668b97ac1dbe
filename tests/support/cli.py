"""The `preflight` command line of this virtualenv, run as a user would, for tests of its faces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["BIN", "preflight_json"]

BIN = Path(sys.executable).parent  # where `preflight` and `preflight-mcp` are installed


def preflight_json(root: Path, *args: str, timeout: float = 60) -> dict[str, Any]:
    """Run `preflight ARGS -C ROOT --json` and return its envelope (the test fails on no output)."""
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.stdout, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply
