"""The Node MCP clients of tests/node (installed by scripts/ensure-node-tools): run a script with them.

Without CI a test that needs them is skipped when they cannot be installed; with CI=true it fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_DIR = REPO / "tests" / "node"

_state: dict[str, str | None] = {}


def _problem() -> str | None:
    if "problem" not in _state:
        try:
            done = subprocess.run(
                [str(REPO / "scripts" / "ensure-node-tools")], capture_output=True, text=True, timeout=600
            )
            _state["problem"] = (
                None if done.returncode == 0 else (done.stderr.strip() or "ensure-node-tools failed")
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            _state["problem"] = str(exc)
    return _state["problem"]


def require_node_tools() -> Path:
    """The folder whose node_modules hold the clients; fail (CI) or skip when they are missing."""
    problem = _problem()
    if problem is not None:
        message = (
            f"the Node MCP clients are missing ({problem.splitlines()[-1]}); run scripts/ensure-node-tools"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return NODE_DIR
