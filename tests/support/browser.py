"""Debian's Chromium for the tests that look at pages: installed by scripts/ensure-chromium when missing.

Playwright drives the system binary (`executable_path`), never a browser of its own download, with
the flags this machine needs; every launch gets a fresh profile (Playwright makes a temporary
user-data-dir). A missing browser that cannot be installed fails the test, never skips it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "REPO", "ensure_chromium"]

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ensure_chromium() -> Path:
    """The system Chromium, installed with scripts/ensure-chromium (apt) when it is missing."""
    if not CHROMIUM.exists():
        done = subprocess.run(
            [str(REPO / "scripts" / "ensure-chromium")], capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0 and CHROMIUM.exists(), (
            f"scripts/ensure-chromium failed:\n{done.stderr[-2000:]}"
        )
    return CHROMIUM
