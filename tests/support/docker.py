"""Docker helpers for tests: what Docker holds for a project checkout, and forced clean-up."""

from __future__ import annotations

import subprocess
from pathlib import Path


def labelled(root: Path) -> tuple[list[str], list[str]]:
    """Return the containers and networks Docker has for the checkout at `root`."""
    label = f"label=preflight.root={root.resolve()}"
    containers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", label], capture_output=True, text=True, check=True
    )
    networks = subprocess.run(
        ["docker", "network", "ls", "-q", "--filter", label], capture_output=True, text=True, check=True
    )
    return containers.stdout.split(), networks.stdout.split()


def force_clean(root: Path) -> None:
    containers, networks = labelled(root)
    if containers:
        subprocess.run(["docker", "rm", "-f", *containers], capture_output=True)
    if networks:
        subprocess.run(["docker", "network", "rm", *networks], capture_output=True)
