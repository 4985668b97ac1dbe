"""What the MCP task tests share: the shop with a quick and a slow shell suite, and a run's reply
without what differs from one run to the next."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from support.cli import BIN
from support.docker import force_clean

__all__ = ["shop_with_shell_suites", "stable"]

REPO = Path(__file__).resolve().parents[2]
# Fields that differ between two runs of the same thing (or two replies about one run). `setup`
# says what a run's setup did (the first starts the environment, the next reuses it), `history`
# counts the earlier runs, `affected` counts the cases whose inputs changed since the run before
# (all of them on a first run), `_meta` carries a reply's protocol details.
VOLATILE = {
    "runId",
    "timestamp",
    "duration",
    "startedAt",
    "finishedAt",
    "totalDuration",
    "traceId",
    "artifacts",
    "setup",
    "history",
    "affected",
    "_meta",
}


@contextmanager
def shop_with_shell_suites(tmp_path: Path) -> Iterator[Path]:
    """A copy of the shop example with a quick and a slow (60 s) shell suite added; cleaned after."""
    root = tmp_path / "shop"
    shutil.copytree(REPO / "docs" / "examples" / "shop", root)
    config = yaml.safe_load((root / "e2e.yaml").read_text())
    config["tests"]["suites"] += [
        {"id": "quick", "runner": "shell", "command": ["sh", "-c", "echo quick ok"]},
        {"id": "slow", "runner": "shell", "command": ["sh", "-c", "sleep 60"], "timeout": "120s"},
    ]
    (root / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=180)
        force_clean(root)


def stable(value: Any) -> Any:
    """`value` without what differs from one run (or reply) to the next."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value
