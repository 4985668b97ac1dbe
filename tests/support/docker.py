"""Docker helpers for tests: what Docker holds for a project checkout, and forced clean-up."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path


def labelled(root: Path, cli: str = "docker") -> tuple[list[str], list[str]]:
    """Return the containers and networks the engine (`docker` or `podman`) has for the checkout at `root`."""
    label = f"label=preflight.root={root.resolve()}"
    containers = subprocess.run(
        [cli, "ps", "-aq", "--filter", label], capture_output=True, text=True, check=True
    )
    networks = subprocess.run(
        [cli, "network", "ls", "-q", "--filter", label], capture_output=True, text=True, check=True
    )
    return containers.stdout.split(), networks.stdout.split()


def force_clean(root: Path, cli: str = "docker") -> None:
    """Remove what the checkout at `root` left on the engine, and stop its detached mock host."""
    from preflight_sdk.lifecycle.session.state import read_state, state_path
    from preflight_sdk.mocks.detached import stop_detached

    try:
        state = read_state(root)
    except Exception:  # a broken state file: nothing to read pids from
        state = None
    for pid in {m.pid for m in state.mocks} if state is not None else ():
        stop_detached(pid, state_file=str(state_path(root)))
    # Without its state file the checkout has no kept environment: nothing hands its mocks to a
    # detached host when the test process exits.
    # (A test may have made it a folder, or .preflight a file: those are the test's to keep.)
    with contextlib.suppress(OSError):
        (root / ".preflight" / "state.json").unlink(missing_ok=True)
    containers, networks = labelled(root, cli)
    if containers:
        subprocess.run(
            [cli, "rm", "-f", *(["-t", "0"] if cli == "podman" else []), *containers], capture_output=True
        )
    if networks:
        subprocess.run([cli, "network", "rm", *networks], capture_output=True)
