"""Shared set-up for the notebook tests: a copy of the notebooks with what they need, and a kernel.

The notebooks find `docs/examples/...` (and the broken MCP server of the test fixtures) by walking
up from their own directory, so a temporary root holding the same layout is enough. The kernel
named `python3` is made to mean this interpreter (the project's virtualenv) through a kernelspec
written under a private `JUPYTER_PATH`, which takes precedence over a user's own kernelspecs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from support.docker import force_clean

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("shop", "shop-broken")


def make_workspace(root: Path) -> Path:
    """Copy notebooks/, the examples and the broken fixture server into `root`; return `root`."""
    shutil.copytree(
        REPO / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints")
    )
    for name in EXAMPLES:
        shutil.copytree(
            REPO / "docs" / "examples" / name,
            root / "docs" / "examples" / name,
            ignore=shutil.ignore_patterns(".preflight"),
        )
    servers = root / "tests" / "fixtures" / "mcp_servers"
    servers.mkdir(parents=True)
    for name in ("broken.py", "_raw.py"):
        shutil.copy2(REPO / "tests" / "fixtures" / "mcp_servers" / name, servers / name)
    return root


def clean_workspace(root: Path) -> None:
    """Remove whatever Docker still holds for the copied examples."""
    for name in EXAMPLES:
        force_clean(root / "docs" / "examples" / name)


def kernel_environment(base: Path) -> dict[str, str]:
    """Write a `python3` kernelspec running this interpreter; return the environment to use it.

    Jupyter's config, data and runtime directories also point into `base`, so nothing of the
    user's own Jupyter set-up (settings, workspaces, kernels) leaks into a test.
    """
    spec = base / "jupyter-path" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
                "metadata": {"debugger": False},
            }
        )
    )
    env = dict(os.environ)
    env.update(
        JUPYTER_PATH=str(base / "jupyter-path"),
        JUPYTER_CONFIG_DIR=str(base / "jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(base / "jupyter-runtime"),
        JUPYTER_DATA_DIR=str(base / "jupyter-data"),
        JUPYTERLAB_SETTINGS_DIR=str(base / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "lab-workspaces"),
        IPYTHONDIR=str(base / "ipython"),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    return env
